//! NVIDIA only: the radius-built passes on the tensor cores (`mma.sync` through inline PTX, in
//! `blur_nv.cl`, compiled into the programs built with `BLUR_TENSOR`),
//! behind a check that falls back to the portable passes where they do not build.

use super::*;

/// Pixels across a group of the tensor-core vertical pass: 4 warps of 8.
pub(super) const TENSOR_GROUP_PIXELS: usize = 32;

/// Rows a group of the tensor-core horizontal pass takes: 4 warps of 8.
pub(super) const TENSOR_GROUP_ROWS: usize = 32;

/// The program variant of the radius-built passes at radius `w`, without their tensor-core
/// passes (`BLUR_TENSOR`, in blur_nv.cl).
pub(super) fn radius_variant(w: u32, settings: &GpuSettings) -> Defines {
    let (channels, pixels) = radius_pass_shape(w, settings);
    Defines::NONE
        .with("BLUR_W", w)
        .with("BLUR_VCH", channels)
        .with("BLUR_HP", pixels)
        .with("BLUR_VROWS", vertical_rows(channels, settings))
}

/// The largest radius of the tensor-core passes (their programs beyond [`RADIUS_PASSES_MAX`]
/// hold those passes only): from w = 33 to here NVIDIA GPUs take them instead of the generic
/// passes. 64 keeps their emulation (the tests') within 48 KiB of local memory: 9 halves of
/// 16 rows a block a warp and 5 chunks of weights a group, 41 KiB. On an H200 (8192², kernel
/// ms): w = 40 0.741–0.745 (generic passes 5.215), w = 48 0.810–0.816, w = 64 0.979–0.984
/// (generic 8.07); 96 and 134 registers (horizontal, vertical) at w = 40, 128 and 137 at
/// w = 48, 130 and 177 at w = 64, no spills.
pub(super) const TENSOR_MAX_RADIUS: u32 = 64;

/// The radius from which GPUs whose radius-built passes both run on tensor cores take those
/// rather than the band kernel (below [`BAND_DEFAULT_RADIUS`]; see [`BAND_DEFAULT_RADIUS`] for
/// the times).
pub(super) const TENSOR_DEFAULT_RADIUS: u32 = 6;

/// Which of the radius-built passes run on the tensor cores.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct TensorPasses {
    pub(super) horizontal: bool,
    pub(super) vertical: bool,
}

impl TensorPasses {
    /// Whether both passes run on the tensor cores.
    pub(super) fn both(&self) -> bool {
        self.horizontal && self.vertical
    }
}

/// Which of the radius-built passes of variant `plain` run on NVIDIA's tensor cores: both on
/// NVIDIA GPUs where that program builds (`mma.sync` on 8-bit integers: compute capability
/// 8.0 and later; elsewhere the f32 tile and the ring of rows, with a warning), unless
/// `blur.tensor` says otherwise (`0`, `horizontal`, `vertical`). A pass forced onto the
/// tensor cores that does not build is an error, and so is a device that is not an NVIDIA GPU
/// unless the instruction is emulated (`-D CLPIX_WARP_EMULATED=1` in `build_options`, as
/// the tests do).
pub(super) fn tensor_passes(
    cl: &ClEngine,
    plain: Defines,
    settings: &GpuSettings,
) -> Result<TensorPasses> {
    const NONE: TensorPasses = TensorPasses {
        horizontal: false,
        vertical: false,
    };
    let (wanted, forced) = match settings.tensor {
        Some(t) if t == NONE => return Ok(NONE),
        Some(t) => (t, true),
        None => (
            TensorPasses {
                horizontal: true,
                vertical: true,
            },
            false,
        ),
    };
    if cl.grid.contiguous {
        return Ok(NONE);
    }
    let refused = || Error::InvalidTuning {
        setting: "blur.tensor",
        value: match (wanted.horizontal, wanted.vertical) {
            (true, true) => "1",
            (true, false) => "horizontal",
            _ => "vertical",
        }
        .into(),
        expected: "0 on this device: the tensor-core passes need an NVIDIA GPU, or \
                   the emulate_nvidia setting",
    };
    let variant = plain.with("BLUR_TENSOR", 1);
    let mut built = true;
    for (wants, kernel) in [
        (wanted.vertical, kernels::BLUR_VM_U8),
        (wanted.horizontal, kernels::BLUR_HM_U8),
    ] {
        if wants && built {
            built = cl.nvidia_variant(
                (kernel, variant),
                "the tensor-core blur passes",
                forced.then(refused),
            )?;
        }
    }
    Ok(if built { wanted } else { NONE })
}

/// The register kernel's shape at radius `w`, its bytes moved by NVIDIA's byte permutes and
/// its horizontal taps summed by two-way dot products (PTX `prmt` and `dp2a`,
/// `BLUR_REG_PRMT` in blur_radius.cl: a channel's byte out of a pixel, two channels' bytes of a
/// pair of taps into one word, the four channels' sums into the output pixel, and a pair of
/// taps' multiply-adds, one instruction each): on NVIDIA GPUs where that program builds, unless
/// `blur.permute=0`. Forced (`blur.permute=1`) on another device it is an error
/// unless the instructions are emulated, as for [`tensor_passes`]. H200, 8192², kernel ms, one
/// call: w = 1 0.192 against 0.202, w = 2 (blocks of 2 columns) 0.260–0.262 against
/// 0.295–0.296, w = 3 (two blocks of one column) 0.356–0.359 against the band kernel's 0.452,
/// w = 4 0.459–0.460 against 0.493–0.499; at w = 5 0.553–0.555 against 0.559–0.562 (another
/// call), too close to switch.
pub(super) fn register_permute(
    cl: &ClEngine,
    w: u32,
    settings: &GpuSettings,
) -> Result<RegisterShape> {
    let plain = RegisterShape::new(w, settings, false);
    let forced = match settings.permute {
        Some(false) => return Ok(plain),
        Some(true) => true,
        None => false,
    };
    let refused = || Error::InvalidTuning {
        setting: "blur.permute",
        value: "1".into(),
        expected: "0 on this device: the byte permutes need an NVIDIA GPU, or \
                   the emulate_nvidia setting",
    };
    let permuted = RegisterShape::new(w, settings, true);
    let built = cl.nvidia_variant(
        (kernels::BLUR_FUSED_REG_U8, permuted.variant(w)),
        "the register blur's byte permutes",
        forced.then(refused),
    )?;
    Ok(if built { permuted } else { plain })
}

/// The largest radius at which NVIDIA GPUs take the register kernel with its byte permutes and
/// dot products (where that program builds) rather than the band kernel.
pub(super) const PERMUTE_REGISTER_RADIUS: u32 = 4;

/// Outputs along its strip a group of a tensor-core pass takes (rows of the vertical pass,
/// pixels of the horizontal one, `length` of them): whole blocks of 16, `blocks` of them, fewer
/// while the grid of `across` groups a strip does not fill the device.
pub(super) fn tensor_strip(across: usize, length: u32, compute_units: u32, blocks: usize) -> usize {
    let want = 8 * compute_units.max(1) as usize;
    let mut blocks = blocks.max(1);
    while blocks > 1 && across * (length as usize).div_ceil(16 * blocks) < want {
        blocks /= 2;
    }
    16 * blocks
}

/// Blocks of 16 outputs a strip of the tensor-core passes at radius `w`, (horizontal,
/// vertical): short strips for the horizontal pass and long ones for the vertical pass, longer
/// where the halo (w rows or pixels each side) is wider. Measured on the H200 (8192², kernel
/// ms of both passes; horizontal, vertical blocks):
///
/// | blocks | w = 6 | w = 8 | w = 16 | w = 20 | w = 25 |
/// |---|---|---|---|---|---|
/// | 16, 16 (before) | 0.559 | 0.561–0.564 | 0.622 | 0.695 | 0.744–0.749 |
/// | 8, 16 | 0.532–0.538 | 0.535–0.539 | 0.584–0.590 | 0.650–0.655 | 0.702–0.704 |
/// | 4, 16 | 0.525 | 0.522–0.523 | 0.586 | 0.676–0.677 | 0.747–0.748 |
/// | 2, 16 | 0.555 | 0.554 | 0.650 | 0.770 | 0.876 |
/// | 8, 32 | 0.540 | 0.536 | 0.588 | 0.641 | 0.688 |
/// | 4, 32 | 0.527 | 0.530 | 0.584 | 0.661 | 0.733 |
/// | 4, 64 | 0.550 | 0.546 | 0.587 | 0.660 | 0.727 |
pub(super) fn tensor_blocks(w: u32) -> (usize, usize) {
    match w {
        0..=8 => (4, 16),
        9..=16 => (8, 16),
        _ => (8, 32),
    }
}
