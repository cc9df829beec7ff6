//! Kernel choice and shapes of the GPU blur: pure functions of the radius, the image, the
//! device's sizes and the tuning.

use super::*;
use crate::config::{BlurKernel, BlurTuning};

/// Work-items of a GPU tile (fixed: PoCL and drivers specialise on it) and pixels per item.
pub(super) const TILE_ITEMS: usize = 128;
pub(super) const TILE_PX: usize = 4;
/// Output rows per work-item of the GPU vertical pass.
pub(super) const V_ROWS: usize = 8;

/// Work-items of a group of the fused GPU kernel (FX in blur_radius.cl).
pub(super) const FUSED_COLUMNS: usize = 64;

/// The largest radius of the register-specialised fused kernel (one program per radius).
pub(super) const REGISTER_MAX_RADIUS: u32 = 16;

/// The largest radius at which GPUs take the register kernel by default. Measured on an H100
/// (8192², kernel time, register kernel / two passes): w = 2 0.422 / 0.861 ms, w = 4 0.725 /
/// 1.038, w = 6 0.991 / 1.241, w = 8 1.574 / 1.458, w = 12 3.10 / 1.92 ms (the accumulators of
/// 2w + 1 rows crowd the registers). On an H200 (final kernels) the band kernel took 0.362 /
/// 0.417 / 0.471 / 0.549 ms at w = 1 / 2 / 3 / 4 against 0.281 / 0.404 / 0.545 / 0.723 ms for
/// the register kernel; with its border arithmetic in 32 bits (2026-11-27) the register kernel
/// takes 0.256 / 0.346 / 0.481 / 0.624 ms, the band kernel 0.453 / 0.497 at w = 3 / 4; with
/// blocks of adjacent columns and three rows loaded ahead (eighth session) 0.203 / 0.311 /
/// 0.479 / 0.92 ms; keeping the last `2w + 1` filtered rows rather than accumulators from w = 2
/// (tenth session) 0.204 / 0.296 / 0.461 ms, the band kernel 0.452 at w = 3; with NVIDIA's byte
/// permutes and dot products (eleventh session, `register_permute`, up to
/// `PERMUTE_REGISTER_RADIUS` by default) 0.192 / 0.260–0.262 / 0.356–0.359 / 0.459–0.460 ms.
pub(super) const REGISTER_DEFAULT_RADIUS: u32 = 2;

/// The largest radius at which GPUs take the band kernel by default. Measured on an H200
/// (8192², kernel ms, band kernel / radius-built passes): w = 8 0.873 / 1.273, w = 12 1.226 /
/// 1.575, w = 16 1.549 / 1.974, w = 20 1.828 / 2.251; w = 25 2.846 / 2.655 (its best shape,
/// (128, 1, 4, 16), before the last 4–9% of the band kernel's gains). GPUs whose radius-built
/// passes run on tensor cores take those from [`TENSOR_DEFAULT_RADIUS`] on: on an H200
/// 0.521–0.522 / 0.516–0.518 / 0.584 / 0.631–0.632 / 0.689–0.692 ms at w = 6 / 8 / 12–16 / 20 /
/// 25 (band kernel 0.664–0.667 / 0.840 ms at w = 6 / 8); forced at w = 2 / 3 / 4 they took
/// 0.531 / 0.536 / 0.535 ms, against 0.402 (register kernel) / 0.456–0.461 / 0.500–0.502 ms.
pub(super) const BAND_DEFAULT_RADIUS: u32 = 20;

/// Output rows a group of a kernel that walks a strip of rows in unrolled runs of `run` input
/// rows takes at radius `w`: about `target` input rows, a whole number of runs (so that no row
/// is read in vain), while the grid of `xg` groups a strip still fills the device.
pub(super) fn strip_rows(
    w: u32,
    run: usize,
    target: usize,
    xg: usize,
    height: u32,
    cus: u32,
) -> usize {
    let w = w as usize;
    let want = 8 * cus.max(1) as usize;
    let mut runs = (target + 2 * w).div_ceil(run).max(1);
    loop {
        let strip = (runs * run).saturating_sub(2 * w).max(1);
        if runs == 1 || xg * (height as usize).div_ceil(strip) >= want {
            return strip;
        }
        runs = runs.div_ceil(2);
    }
}

/// The register kernel's strip: runs of `2w + 1` rows. Measured on an H100 (8192², w = 2 / 4 /
/// 6, ms): about 64 input rows 0.425 / 0.758 / 1.045, 128 rows 0.444 / 0.724 / 0.995, 256 rows
/// 0.441 / 0.762 / 0.978.
pub(super) fn register_strip(w: u32, xg: usize, height: u32, compute_units: u32) -> usize {
    let target = (32 * w as usize).max(64);
    strip_rows(w, 2 * w as usize + 1, target, xg, height, compute_units)
}

/// The GPU RGBA8 blur's settings, from the engine's tuning (the `blur.` settings, read and checked
/// when the engine is made: a misspelt value must not measure or test the default kernels
/// unnoticed).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct GpuSettings {
    /// `blur.kernel=registers|band|radius|two-pass`: the kernels forced (`auto`, the
    /// default, is `None`). A forced kernel that does not build is an error, not a fallback.
    pub(super) kernel: Option<GpuBlur>,
    /// `blur.columns=1|2`: blocks of columns a work-item of the fused kernel takes.
    pub(super) columns: Option<usize>,
    /// `blur.adjacent=1|2|4`: adjacent columns a block of the fused kernel.
    pub(super) adjacent: Option<usize>,
    /// `blur.band=T,C,P,R[,S]`: the band kernel's shape.
    pub(super) band: Option<BandShape>,
    /// `blur.channels=1|2|4`: channels a work-item of the radius-built vertical pass takes.
    pub(super) channels: Option<u32>,
    /// `blur.hpixels=4|8`: pixels a work-item of the radius-built horizontal pass filters.
    pub(super) hpixels: Option<u32>,
    /// `blur.vrows=0|4|8|16`: output rows a block of the radius-built vertical pass.
    pub(super) vrows: Option<u32>,
    /// `blur.tensor=0|1|horizontal|vertical`: which radius-built passes run on NVIDIA's
    /// tensor cores (by default both, where they build).
    pub(super) tensor: Option<TensorPasses>,
    /// `blur.permute=0|1`: whether the register kernel moves bytes with NVIDIA's byte
    /// permute (by default where it builds).
    pub(super) permute: Option<bool>,
}

impl GpuSettings {
    /// The settings an engine's tuning asks for (the `blur.` settings, checked when read).
    pub(super) fn of(t: &BlurTuning) -> GpuSettings {
        GpuSettings {
            kernel: t.kernel.map(|k| match k {
                BlurKernel::Registers => GpuBlur::FusedRegisters,
                BlurKernel::Band => GpuBlur::Band,
                BlurKernel::Radius => GpuBlur::RadiusPasses,
                BlurKernel::TwoPass => GpuBlur::TwoPass,
            }),
            columns: t.columns.map(|c| c as usize),
            adjacent: t.adjacent.map(|c| c as usize),
            band: t.band.map(|b| {
                BandShape::new(
                    b.threads() as usize,
                    b.channels() as usize,
                    b.pixels() as usize,
                    b.rows() as usize,
                    b.strip() as usize,
                )
            }),
            channels: t.channels,
            hpixels: t.hpixels,
            vrows: t.vrows,
            tensor: t.tensor.map(|(horizontal, vertical)| TensorPasses {
                horizontal,
                vertical,
            }),
            permute: t.permute,
        }
    }
}

/// Blocks of columns a work-item of the register kernel filters at radius `w` (its
/// accumulators and unrolled code grow with both). `blur.columns=1|2` overrides, to
/// measure (4 lost on an H100: 0.455 against 0.426 ms at w = 2). With NVIDIA's byte permutes
/// (`permuted`) w = 3 takes two blocks of one column: H200, 8192², kernel ms, (blocks, adjacent
/// columns): (2, 1) 0.359, (1, 1) 0.400–0.402, (1, 2) 0.401–0.402, (1, 4) 0.407–0.409, (2, 2)
/// 0.429; w = 4 (1, 1) 0.457–0.458, (2, 1) 0.461–0.465, (1, 2) 0.481–0.485.
pub(super) fn register_columns(w: u32, settings: &GpuSettings, permuted: bool) -> usize {
    match settings.columns {
        Some(c) => c,
        None if w == 4 || (permuted && w == 3) => 2,
        None => 1,
    }
}

/// Adjacent columns in each block of the register kernel at radius `w` (`BLUR_VX` in
/// blur_radius.cl: a block's `vx + 2w` pixels are read as vectors and unpacked once for its `vx`
/// outputs). `blur.adjacent=1|2|4` overrides, to measure. H200, 8192², kernel ms, three
/// rows loaded ahead, (blocks, adjacent columns): w = 1 (1, 4) 0.203, (2, 1) 0.252; w = 2
/// 0.311 / 0.351; w = 3 0.479 / 0.565–0.581 (the latter one row ahead); w = 4 0.951–0.954 /
/// 0.919–0.934 (one row ahead). With NVIDIA's byte permutes (`permuted`), w = 2 takes blocks of
/// 2: (1, 2) 0.260, (1, 4) 0.279–0.280, (2, 2) 0.284, (1, 1) 0.295–0.296, (2, 1) 0.299–0.301;
/// w = 1 (1, 4) 0.193, (2, 2) 0.195–0.197, (1, 2) 0.198–0.199 (for w = 3 see
/// [`register_columns`]).
pub(super) fn register_adjacent(w: u32, settings: &GpuSettings, permuted: bool) -> usize {
    match settings.adjacent {
        Some(a) => a,
        None if permuted && w == 3 => 1,
        None if permuted && w == 2 => 2,
        None if w <= 3 => 4,
        None => 1,
    }
}

/// The largest radius of the radius-specialised two passes (one program per radius).
pub(super) const RADIUS_PASSES_MAX: u32 = 32;

/// The RGBA8 blur kernels of a GPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum GpuBlur {
    /// One kernel, built per radius, the output rows in flight in registers.
    FusedRegisters,
    /// One kernel, built per radius, in column bands: the filtered rows in a local ring.
    Band,
    /// The two passes built per radius: f32 horizontal pass, ring of rows in registers.
    RadiusPasses,
    /// Horizontal pass into an intermediate image, then the vertical pass, any radius.
    TwoPass,
}

/// Which RGBA8 kernels a GPU runs at radius `w`: the register kernel up to
/// [`REGISTER_DEFAULT_RADIUS`], the band kernel up to [`BAND_DEFAULT_RADIUS`], the radius-built
/// passes up to [`RADIUS_PASSES_MAX`], the generic passes beyond (`cl_passes` takes the
/// tensor-core passes instead where they run). `blur.kernel=registers` (up to
/// [`REGISTER_MAX_RADIUS`]), `band` (up to [`RADIUS_PASSES_MAX`]), `radius` (up to
/// [`RADIUS_PASSES_MAX`], or [`TENSOR_MAX_RADIUS`] where the tensor-core passes run) or
/// `two-pass` forces a choice, to measure them.
pub(super) fn gpu_kernel(w: u32, settings: &GpuSettings) -> GpuBlur {
    let (fused, band, radius) = match settings.kernel {
        Some(GpuBlur::FusedRegisters) => (REGISTER_MAX_RADIUS, 0, 0),
        Some(GpuBlur::Band) => (0, RADIUS_PASSES_MAX, 0),
        // Beyond RADIUS_PASSES_MAX only where the tensor-core passes run (else the generic).
        Some(GpuBlur::RadiusPasses) => (0, 0, TENSOR_MAX_RADIUS),
        Some(GpuBlur::TwoPass) => (0, 0, 0),
        None => (
            REGISTER_DEFAULT_RADIUS,
            BAND_DEFAULT_RADIUS,
            RADIUS_PASSES_MAX,
        ),
    };
    if (1..=fused).contains(&w) {
        GpuBlur::FusedRegisters
    } else if (1..=band).contains(&w) {
        GpuBlur::Band
    } else if (1..=radius).contains(&w) {
        GpuBlur::RadiusPasses
    } else {
        GpuBlur::TwoPass
    }
}

/// Channels a work-item of the radius-specialised vertical pass takes (its ring of `2w + 5`
/// rows lives in registers) and pixels a work-item of its horizontal pass filters. Measured on
/// an H200 (8192², kernel ms, vertical pass with 1 / 2 / 4 channels): w = 8 0.81 / 0.78 /
/// 0.68, w = 16 1.22 / 1.34 / 1.46, w = 25 1.81 / 1.92 / 2.56; horizontal pass with 4 / 8
/// pixels: w = 8 0.62 / 0.77, w = 25 0.92 / 0.86 (before the vertical pass's rows were
/// counted in 32 bits, which took w = 8 / 16 to 0.66 / 1.19 ms). `blur.channels=1|2|4` and
/// `blur.hpixels=4|8` override, to measure.
pub(super) fn radius_pass_shape(w: u32, settings: &GpuSettings) -> (u32, u32) {
    let channels = match settings.channels {
        Some(c) => c,
        None if w <= 8 => 4,
        None => 1,
    };
    let pixels = match settings.hpixels {
        Some(p) => p,
        None if w <= 12 => 4,
        None => 8,
    };
    (channels, pixels)
}

/// Output rows a block of the radius-built vertical pass with `channels` channels a work-item:
/// a window of them and their `2w` neighbours in registers, shifted block by block, so that the
/// code is one block's. 0 is the former pass: a ring of `2w + 5` rows unrolled, whose code
/// outgrew the instruction cache (H200, 8192², w = 25, kernel ms, 1 / 2 / 4 channels: ring
/// 2.71 / 2.77 / 3.47, blocks of 4 rows 2.31 / 2.31 / 2.20, 8 rows 2.07 / 2.40 / 2.35, 16 rows
/// 2.03 / 2.28 / 2.52; the vertical pass alone 1.87 ms as a ring, 1.18 in blocks of 16).
/// `blur.vrows` overrides, to measure.
pub(super) fn vertical_rows(channels: u32, settings: &GpuSettings) -> u32 {
    settings.vrows.unwrap_or(16 / channels.max(1))
}

/// The band kernel's shape at radius `w`: work-items a group (128 or 256), channels a work-item
/// of its vertical pass (1, 2 or 4), pixels a work-item of its horizontal pass (4 or 8), input
/// rows a step (4, 8, 16 or 32; halved while the local arrays do not fit) and about how many
/// input rows a strip takes. `blur.band=T,C,P,R[,S]` overrides, to measure. The defaults
/// are the best shapes measured on an H200 (8192², kernel ms; shapes as they ran, after any
/// halving of R), with the final kernel:
/// - w = 4: (128, 4, 8, 8) 0.547; (128, 4, 4, 8) 0.582;
/// - w = 6: (128, 4, 8, 8) 0.678; (128, 4, 4, 8) 0.707;
/// - w = 8: (128, 4, 8, 8) 0.873; (128, 2, 8, 16) 0.882, (128, 2, 4, 8) 0.901;
/// - w = 12: (128, 2, 4, 8) 1.226; (128, 2, 8, 8) 1.247, (128, 4, 8, 4) 1.529;
/// - w = 16: (128, 2, 4, 8) 1.549; (128, 2, 8, 8) 1.699, (128, 4, 8, 4) 1.973;
/// - w = 20: (128, 2, 4, 8) 1.828; (128, 2, 8, 8) 2.055.
///
/// With the kernel before its vertical pass took constant offsets into the ring (about 4% slower
/// at w = 8, 9% at w = 20), also: w = 8 (128, 4, 8, 4) 1.023, (256, 2, 4, 8) 1.026, (128, 1, 4, 16)
/// 0.990, and (128, 2, 4, 8) with strips of 128 / 256 / 512 / 1024 input rows 0.997 / 0.978 /
/// 0.978 / 0.973; w = 16 (128, 1, 8, 16) 2.107; w = 20 (128, 1, 4, 16) 2.413; w = 25
/// (128, 1, 4, 16) 2.846 and (128, 2, 4, 4) 3.30, against 2.655 for the radius-built passes.
///
/// Strips (thirteenth session, another H200, two rounds, kernel ms): of 512 input rows at
/// w ≤ 8, w = 5 / 6 / 8 0.543–0.544 / 0.643–0.647 / 0.821–0.822 against 0.559–0.560 /
/// 0.660–0.663 / 0.838–0.841 with 256 (1024 and 2048: w = 8 0.819–0.822, w = 6 0.651–0.656);
/// of 1024 beyond, w = 12 / 16 / 20 1.085–1.086 / 1.321–1.325 / 1.786–1.787 against
/// 1.104–1.105 / 1.360 / 1.866 with 256 and 1.095–1.096 / 1.338–1.344 / 1.808–1.812 with 2048.
/// [`strip_rows`] shortens them where the grid would not fill the device.
pub(super) fn band_shape(w: u32, settings: &GpuSettings) -> BandShape {
    settings.band.unwrap_or(match w {
        0..=8 => BandShape::new(128, 4, 8, 8, 512),
        _ => BandShape::new(128, 2, 4, 8, 1024),
    })
}

/// The shape of the band kernel (see [`band_shape`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct BandShape {
    pub(super) threads: usize,
    pub(super) channels: usize,
    pub(super) pixels: usize,
    pub(super) rows: usize,
    pub(super) strip: usize,
}

impl BandShape {
    pub(super) fn new(
        threads: usize,
        channels: usize,
        pixels: usize,
        rows: usize,
        strip: usize,
    ) -> Self {
        BandShape {
            threads,
            channels,
            pixels,
            rows,
            strip,
        }
    }

    /// Columns a group owns (BX in blur_radius.cl).
    pub(super) fn columns(&self) -> usize {
        self.threads * self.channels / 4
    }

    /// Bytes of the kernel's local arrays at radius `w`: the tile of `rows` rows of float4s,
    /// one of padding every 8 (BROW), and the ring of `2w + rows` rows of 4 u16s, one pixel of
    /// padding every 8 (RROW).
    pub(super) fn local_bytes(&self, w: u32) -> usize {
        let span = self.columns() + 2 * w as usize;
        let tile_row = span + (span - 1) / 8;
        let ring_row = self.columns() + (self.columns() - 1) / 8;
        self.rows * tile_row * 16 + (2 * w as usize + self.rows) * ring_row * 8
    }

    /// The program variant of this shape at radius `w`.
    pub(super) fn variant(&self, w: u32) -> Defines {
        let d = Defines::NONE
            .with("BLUR_W", w)
            .with("BLUR_BAND_ROWS", self.rows as u32)
            .with("BLUR_VCH", self.channels as u32)
            .with("BLUR_HP", self.pixels as u32);
        match self.threads {
            128 => d.with("BLUR_BAND_T128", 1),
            _ => d,
        }
    }
}

/// A blur kernel's arguments: the ones every blur kernel begins with (input, width, height,
/// weights, w, border, output), then `rest`.
pub(super) fn pass_args(
    input: Arg,
    (width, height): (u32, u32),
    weights: Arg,
    (w, code): (u32, u32),
    output: Arg,
    rest: &[Arg],
) -> Vec<Arg> {
    let mut args = vec![
        input,
        Arg::U32(width),
        Arg::U32(height),
        weights,
        Arg::U32(w),
        Arg::U32(code),
        output,
    ];
    args.extend_from_slice(rest);
    args
}

pub(super) fn too_large(what: &'static str, needed: u64, limit: u64) -> Error {
    Error::TooLargeForDevice {
        what,
        needed,
        limit,
    }
}

/// The pixel format a GPU blur runs on, and so its kernels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Format {
    /// RGBA8 in fixed point (u32 pixels, a u16 intermediate).
    Rgba8,
    /// RGBA f32 (f32 values and intermediate).
    RgbaF32,
}

impl Format {
    /// The horizontal pass: with its tile in local memory, and reading global memory directly.
    pub(super) fn h_kernels(self) -> (Kernel, Kernel) {
        match self {
            Format::Rgba8 => (BLUR_H_U8, BLUR_H_U8_DIRECT),
            Format::RgbaF32 => (BLUR_H_F32, BLUR_H_F32_DIRECT),
        }
    }

    /// The vertical pass.
    pub(super) fn v_kernel(self) -> Kernel {
        match self {
            Format::Rgba8 => BLUR_V_U8,
            Format::RgbaF32 => BLUR_V_F32,
        }
    }

    /// The CPU devices' fused ring kernel.
    pub(super) fn ring_kernel(self) -> Kernel {
        match self {
            Format::Rgba8 => BLUR_RING_U8,
            Format::RgbaF32 => BLUR_RING_F32,
        }
    }

    /// The vertical pass of a band (images larger than one buffer).
    pub(super) fn band_v_kernel(self) -> Kernel {
        match self {
            Format::Rgba8 => BLUR_BAND_V_U8,
            Format::RgbaF32 => BLUR_BAND_V_F32,
        }
    }
}
