//! The OpenCL launchers of the GPU blur kernels built per radius: the fused kernel, the band
//! kernel and the radius-built two passes.

use super::*;

/// A per-radius kernel's input, output and weights.
pub(super) type Io<'a, S> = (
    &'a opencl3::memory::Buffer<S>,
    &'a opencl3::memory::Buffer<S>,
    Arg,
);

/// Two per-radius passes' input, intermediate (as 32-bit words), output and weights.
pub(super) type PassesIo<'a, S> = (
    &'a opencl3::memory::Buffer<S>,
    &'a opencl3::memory::Buffer<u32>,
    &'a opencl3::memory::Buffer<S>,
    Arg,
);

/// Runs the blur of `src` (one buffer of `width × height` pixels) into `dst`: on GPUs two
/// passes through an intermediate buffer of `D` (4 a pixel); on CPU devices the fused ring
/// kernel when the halo is small against each group's rows, else the same two passes.
/// `px_bytes` is the size of one pixel in a local-memory tile.
#[allow(clippy::too_many_arguments)]
pub(super) fn cl_passes<S, D>(
    cl: &Arc<ClEngine>,
    format: Format,
    src: &opencl3::memory::Buffer<S>,
    dst: &opencl3::memory::Buffer<S>,
    weights: Arg,
    width: u32,
    height: u32,
    blur: &GaussianBlur,
    px_bytes: usize,
) -> Result<()> {
    let (vk, ring_k) = (format.v_kernel(), format.ring_kernel());
    let w = blur.radius;
    let code = blur.border.code();
    let n = width as usize * height as usize;
    let mut events = Vec::new();
    if cl.grid.contiguous {
        let groups = (height as usize).clamp(1, cl.grid.max_groups);
        let rows = (height as usize).div_ceil(groups);
        let taps = 2 * w as usize + 1;
        // One column strip of at most 1024 pixels a ring row, rounded up to a multiple of 64
        // values and 32 more (STRIP, RING_PAD in blur.cl).
        let ring_elems = groups * taps * ((4 * (width as usize).min(1024)).div_ceil(64) * 64 + 32);
        let ring_bytes = ring_elems as u64 * std::mem::size_of::<D>() as u64;
        if 2 * (w as usize) <= rows && ring_bytes <= cl.max_buffer_bytes {
            let ring = large_buffer::<D>(cl, ring_elems, "the blur's row rings")?;
            let args = pass_args(
                Arg::buf(src),
                (width, height),
                weights,
                (w, code),
                Arg::buf(&ring),
                &[Arg::buf(dst)],
            );
            events.push(cl.launch(ring_k, &args, groups, 1)?);
            return cl.finish(&events);
        }
        let tmp = large_buffer::<D>(cl, 4 * n, "the blur's intermediate image")?;
        events.push(h_pass(
            cl, format, src, &tmp, weights, width, height, blur, px_bytes,
        )?);
        let vargs = pass_args(
            Arg::buf(&tmp),
            (width, height),
            weights,
            (w, code),
            Arg::buf(dst),
            &[],
        );
        events.push(cl.launch(vk, &vargs, groups, 1)?);
        return cl.finish(&events);
    }
    let f32 = (format == Format::RgbaF32).then(|| f32_choice(cl, blur));
    if let Some(choice) = f32
        && gpu_f32_one_kernel(cl, choice, (src, dst, weights), (width, height), blur)?
    {
        return Ok(());
    }
    let settings = match format {
        Format::Rgba8 => GpuSettings::of(&cl.tuning.blur),
        Format::RgbaF32 => GpuSettings::default(),
    };
    // The radius-built programs build in the background on the first call at a radius (the
    // generic passes answer it, with the same bits), unless forced or waited for.
    let specialised = format == Format::Rgba8
        && (settings.kernel.is_some() || {
            let blur = *blur;
            cl.specialisation_ready(("blur", w), move |cl| specialise_in_background(cl, &blur))
        });
    // Where NVIDIA's byte permutes and dot products build, the register kernel beats the band
    // kernel up to PERMUTE_REGISTER_RADIUS: its shape, asked for once and kept for the launch.
    let by_radius = match gpu_kernel(w, &settings) {
        // Rusticl 22 (llvmpipe): the band and radius-built kernels read rows as zero in a
        // strip's first steps (docs/design.md, "Other implementations"): the register kernel
        // up to its default radius there, else the generic passes; forced, they are refused.
        GpuBlur::Band | GpuBlur::RadiusPasses if cl.quirks.ring_kernels_wrong => {
            if settings.kernel.is_some() {
                return Err(Error::Unsupported {
                    what: "the band and radius-built blur kernels",
                    device: cl.info.name.clone(),
                    reason: format!(
                        "{} {} gives wrong rows with them; the register kernel and the \
                         generic passes run there",
                        cl.info.platform, cl.info.driver_version
                    ),
                });
            }
            match w <= REGISTER_DEFAULT_RADIUS {
                true => GpuBlur::FusedRegisters,
                false => GpuBlur::TwoPass,
            }
        }
        choice => choice,
    };
    let permuted = if specialised
        && settings.kernel.is_none()
        && w <= PERMUTE_REGISTER_RADIUS
        && by_radius == GpuBlur::Band
    {
        Some(register_permute(cl, w, &settings)?).filter(|shape| shape.permuted)
    } else {
        None
    };
    let choice = match format {
        Format::Rgba8 if !specialised => GpuBlur::TwoPass,
        Format::Rgba8 => match by_radius {
            GpuBlur::Band if permuted.is_some() => GpuBlur::FusedRegisters,
            // Where both radius-built passes run on tensor cores they beat the band kernel.
            GpuBlur::Band
                if settings.kernel.is_none()
                    && w >= TENSOR_DEFAULT_RADIUS
                    && tensor_passes(cl, radius_variant(w, &settings), &settings)?.both() =>
            {
                GpuBlur::RadiusPasses
            }
            // Beyond the CUDA-core passes, the tensor-core passes where they run.
            GpuBlur::TwoPass
                if settings.kernel.is_none()
                    && (RADIUS_PASSES_MAX + 1..=TENSOR_MAX_RADIUS).contains(&w)
                    && tensor_passes(cl, radius_variant(w, &settings), &settings)?.both() =>
            {
                GpuBlur::RadiusPasses
            }
            choice => choice,
        },
        Format::RgbaF32 => GpuBlur::TwoPass,
    };
    if choice == GpuBlur::FusedRegisters {
        let shape = match permuted {
            Some(shape) => shape,
            None => register_permute(cl, w, &settings)?,
        };
        if gpu_fused_u8(
            cl,
            (src, dst, weights),
            (width, height),
            blur,
            (&settings, shape),
        )? {
            return Ok(());
        }
    }
    if choice == GpuBlur::Band
        && gpu_band_u8(cl, (src, dst, weights), (width, height), blur, &settings)?
    {
        return Ok(());
    }
    // The intermediate is pooled: allocating hundreds of MB per call cost a GPU (H100, 8192²)
    // about 1 ms, more than the w = 2 kernels themselves. The kernels see it as `D`s.
    let words = (4 * n * std::mem::size_of::<D>()).div_ceil(4);
    let tmp = cl.scratch(ScratchKind::BlurIntermediate, words)?;
    let result = (|| {
        // The f32 radius-built passes where asked for, or where the band kernel (or a forced
        // one-kernel choice's unforced twin) did not fit or build here.
        let f32_passes = match f32 {
            Some((F32Choice::Radius, forced)) => Some(forced),
            Some((F32Choice::Band | F32Choice::Registers, false)) => Some(false),
            _ => None,
        };
        if let Some(forced) = f32_passes
            && gpu_radius_f32(cl, (src, &tmp, dst, weights), (width, height), blur, forced)?
        {
            return Ok(());
        }
        if matches!(choice, GpuBlur::RadiusPasses | GpuBlur::Band)
            && gpu_radius_passes_u8(
                cl,
                (src, &tmp, dst, weights),
                (width, height),
                blur,
                &settings,
            )?
        {
            return Ok(());
        }
        gpu_two_pass(
            cl,
            format,
            src,
            &tmp,
            dst,
            weights,
            (width, height),
            blur,
            px_bytes,
        )
    })();
    drop(tmp);
    result
}

/// Makes the radius-built programs of `blur`'s radius ready, on a background thread: the RGBA8
/// blur on a small image takes the path a real call will (building what it needs); the result
/// is dropped, and a failure is only logged (the real call then meets it again and falls back).
fn specialise_in_background(cl: &Arc<ClEngine>, blur: &GaussianBlur) {
    const SIDE: u32 = 64;
    let n = (SIDE * SIDE) as usize;
    let run = || -> Result<()> {
        let mut src = cl.buffer::<u32>(n, "a background build's image")?;
        cl.fill(&mut src, 0x8040_2010u32, n)?;
        let dst = cl.buffer::<u32>(n, "a background build's result")?;
        let qbuf = super::cl::fixed_weights_buffer(cl, blur)?;
        cl_passes::<u32, u16>(
            cl,
            Format::Rgba8,
            &src,
            &dst,
            Arg::buf(&qbuf),
            SIDE,
            SIDE,
            blur,
            4,
        )
    };
    if let Err(e) = run() {
        log::warn!(
            "clpix: the blur's programs for w = {} did not build in the background: {e}",
            blur.radius
        );
    }
}

/// The RGBA8 two passes built for radius `blur.radius` (1 to [`RADIUS_PASSES_MAX`], or
/// [`TENSOR_MAX_RADIUS`] where both run on the tensor cores) from `src`
/// through `tmp` (u16 intermediate, 8 bytes a pixel) into `dst`. `Ok(false)` when this device
/// cannot build them, its local memory cannot hold the horizontal tile or the image is too
/// large for their 32-bit counts (rows of 2^29 pixels, 2^31 rows): the caller runs the generic
/// passes, which give the same bits.
pub(super) fn gpu_radius_passes_u8<S>(
    cl: &Arc<ClEngine>,
    (src, tmp, dst, weights): PassesIo<'_, S>,
    (width, height): (u32, u32),
    blur: &GaussianBlur,
    settings: &GpuSettings,
) -> Result<bool> {
    let (w, code) = (blur.radius, blur.border.code());
    if !counts_fit_i32(width, height, w) {
        return Ok(false);
    }
    let (channels, pixels) = radius_pass_shape(w, settings);
    let plain = radius_variant(w, settings);
    let tensor = tensor_passes(cl, plain, settings)?;
    if w > RADIUS_PASSES_MAX && !tensor.both() {
        return Ok(false); // beyond 32 the variant holds the tensor-core passes only
    }
    let variant = match tensor.horizontal || tensor.vertical {
        true => plain.with("BLUR_TENSOR", 1),
        false => plain,
    };
    let forced = settings.kernel.is_some();
    let (hkernel, rest, hgroups) = if tensor.horizontal {
        // Groups of 4 warps of 8 rows; strips of whole blocks of 16 pixels.
        let yg = (height as usize).div_ceil(TENSOR_GROUP_ROWS);
        let strip = tensor_strip(yg, width, cl.info.compute_units, tensor_blocks(w).0);
        let xs = (width as usize).div_ceil(strip);
        let rest = vec![Arg::U32(xs as u32), Arg::U32(strip as u32)];
        (BLUR_HM_U8, rest, xs * yg)
    } else {
        // The tile: TILE_ITEMS × pixels + 2w float4s, one of padding every 8 (HPAD in
        // blur_radius.cl).
        let span = TILE_ITEMS * pixels as usize + 2 * w as usize;
        let local_bytes = (span + span / 8 + 1) * 16;
        if local_bytes as u64 + 1024 > cl.info.local_mem_bytes {
            return Ok(false);
        }
        let tiles = (width as usize).div_ceil(TILE_ITEMS * pixels as usize);
        let rest = vec![Arg::U32(tiles as u32), Arg::Local(local_bytes)];
        (BLUR_HS_U8, rest, tiles * height as usize)
    };
    let hargs = pass_args(
        Arg::buf(src),
        (width, height),
        weights,
        (w, code),
        Arg::buf(tmp),
        &rest,
    );
    let (vkernel, xg, strip) = if tensor.vertical {
        // Groups of 4 warps, 8 pixels a warp; strips of whole blocks of 16 rows.
        let xg = (width as usize).div_ceil(TENSOR_GROUP_PIXELS);
        (
            BLUR_VM_U8,
            xg,
            tensor_strip(xg, height, cl.info.compute_units, tensor_blocks(w).1),
        )
    } else {
        let lanes = width as usize * (4 / channels as usize);
        let xg = lanes.div_ceil(TILE_ITEMS);
        let strip = radius_strip(w, xg, height, cl.info.compute_units);
        (BLUR_VS_U8, xg, strip)
    };
    let yg = (height as usize).div_ceil(strip);
    let vargs = pass_args(
        Arg::buf(tmp),
        (width, height),
        weights,
        (w, code),
        Arg::buf(dst),
        &[Arg::U32(xg as u32), Arg::U32(strip as u32)],
    );
    let launched = cl
        .launch_variant(hkernel, variant, &hargs, hgroups * TILE_ITEMS, TILE_ITEMS)
        .and_then(|h| {
            let v =
                cl.launch_variant(vkernel, variant, &vargs, xg * yg * TILE_ITEMS, TILE_ITEMS)?;
            Ok(vec![h, v])
        });
    finish_per_radius(cl, launched, ("the radius-built blur passes", forced), w)
}

/// Whether the per-radius passes' 32-bit counts hold this image: channels of a row with a tile
/// beyond it, rows with the halo and a step of rows beyond them.
pub(super) fn counts_fit_i32(width: u32, height: u32, w: u32) -> bool {
    4 * width as u64 + 1024 <= i32::MAX as u64
        && height as u64 + 2 * w as u64 + 64 <= i32::MAX as u64
}

/// The fused band kernel built for radius `blur.radius` (1 to [`RADIUS_PASSES_MAX`]) from `src`
/// into `dst`. `Ok(false)` when this device cannot build it, its local memory cannot hold the
/// tile and the ring even with 4 rows a step, or the image is too large for its 32-bit counts:
/// the caller runs the radius passes or the generic ones, which give the same bits.
pub(super) fn gpu_band_u8<S>(
    cl: &Arc<ClEngine>,
    (src, dst, weights): Io<'_, S>,
    (width, height): (u32, u32),
    blur: &GaussianBlur,
    settings: &GpuSettings,
) -> Result<bool> {
    let w = blur.radius;
    if !counts_fit_i32(width, height, w) {
        return Ok(false);
    }
    let mut shape = band_shape(w, settings);
    while shape.local_bytes(w) as u64 + 1024 > cl.info.local_mem_bytes {
        if shape.rows == 4 {
            return Ok(false);
        }
        shape.rows /= 2;
    }
    let xg = (width as usize).div_ceil(shape.columns());
    let strip = strip_rows(
        w,
        shape.rows,
        shape.strip,
        xg,
        height,
        cl.info.compute_units,
    );
    launch_strips(
        cl,
        (src, dst, weights),
        (width, height),
        blur,
        (BLUR_BAND_U8, shape.variant(w), shape.threads),
        (xg, strip),
        &[],
        ("the blur band kernel", settings.kernel.is_some()),
    )
}

/// Runs a per-radius kernel that walks strips of output rows: `xg` groups of `threads`
/// work-items across the image, `strip` output rows a group. Its arguments are those every blur
/// kernel begins with, then `xg`, `strip` and `rest`. `Ok(false)` when it does not build (see
/// [`finish_per_radius`]).
#[allow(clippy::too_many_arguments)]
pub(super) fn launch_strips<S>(
    cl: &Arc<ClEngine>,
    (src, dst, weights): Io<'_, S>,
    (width, height): (u32, u32),
    blur: &GaussianBlur,
    (kernel, variant, threads): (Kernel, Defines, usize),
    (xg, strip): (usize, usize),
    rest: &[Arg],
    (what, forced): (&str, bool),
) -> Result<bool> {
    let yg = (height as usize).div_ceil(strip);
    let args = pass_args(
        Arg::buf(src),
        (width, height),
        weights,
        (blur.radius, blur.border.code()),
        Arg::buf(dst),
        &[&[Arg::U32(xg as u32), Arg::U32(strip as u32)], rest].concat(),
    );
    let launched = cl.launch_variant(kernel, variant, &args, xg * yg * threads, threads);
    finish_per_radius(cl, launched.map(|e| vec![e]), (what, forced), blur.radius)
}

/// Waits for the per-radius kernels `launched` (`what`): `Ok(false)` when they did not build on
/// this device or need more than it allows (said as a `log` warning), for the caller to run the generic passes instead,
/// unless they were `forced` by `blur.kernel` (to measure or test them): then their build
/// error, so that a measurement or a test never runs another kernel unnoticed.
pub(super) fn finish_per_radius(
    cl: &ClEngine,
    launched: Result<Vec<opencl3::event::Event>>,
    (what, forced): (&str, bool),
    w: u32,
) -> Result<bool> {
    match launched {
        Ok(events) => cl.finish(&events).map(|()| true),
        Err(e @ (Error::KernelBuild { .. } | Error::DeviceLimit { .. })) if !forced => {
            log::warn!(
                "{what} (w = {w}) does not run on {}; the generic passes instead: {e}",
                cl.info.name
            );
            Ok(false)
        }
        Err(e) => Err(e),
    }
}

/// The radius-built vertical pass's strip: about 256 input rows in runs of `2w + 5` (VRING
/// in blur_radius.cl: the `2w + 1` rows of a window and 4 loaded ahead).
pub(super) fn radius_strip(w: u32, xg: usize, height: u32, compute_units: u32) -> usize {
    strip_rows(w, 2 * w as usize + 5, 256, xg, height, compute_units)
}

/// The register kernel's shape at a radius: blocks a work-item, adjacent columns a block, and
/// whether it moves bytes with NVIDIA's byte permutes and dot products.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct RegisterShape {
    pub(super) columns: usize,
    pub(super) adjacent: usize,
    pub(super) permuted: bool,
}

impl RegisterShape {
    /// The shape at radius `w` from the settings and the defaults, with or without permutes.
    pub(super) fn new(w: u32, settings: &GpuSettings, permuted: bool) -> RegisterShape {
        RegisterShape {
            columns: register_columns(w, settings, permuted),
            adjacent: register_adjacent(w, settings, permuted),
            permuted,
        }
    }

    /// Its program at radius `w`.
    pub(super) fn variant(&self, w: u32) -> Defines {
        let plain = Defines::NONE
            .with("BLUR_W", w)
            .with("BLUR_CPX", self.columns as u32)
            .with("BLUR_VX", self.adjacent as u32);
        match self.permuted {
            true => plain.with("BLUR_REG_PRMT", 1),
            false => plain,
        }
    }
}

/// The register kernel's sides are below this (its border arithmetic, `reg_map` in
/// blur_radius.cl, is 32-bit); wider or taller images take the other kernels.
const REGISTER_MAX_SIDE: u32 = 1 << 30;

/// The fused RGBA8 kernel built for radius `blur.radius` (1 to [`REGISTER_MAX_RADIUS`]) from
/// `src` into `dst`. `Ok(false)` when this device's compiler cannot build it (its unrolled
/// code and registers) or the image is too wide or tall for it: the caller runs the two
/// passes, which give the same bits. `shape`: [`register_permute`]'s answer at this radius.
pub(super) fn gpu_fused_u8<S>(
    cl: &Arc<ClEngine>,
    (src, dst, weights): Io<'_, S>,
    (width, height): (u32, u32),
    blur: &GaussianBlur,
    (settings, shape): (&GpuSettings, RegisterShape),
) -> Result<bool> {
    let w = blur.radius;
    if width >= REGISTER_MAX_SIDE || height >= REGISTER_MAX_SIDE {
        return Ok(false);
    }
    let xg = (width as usize).div_ceil(FUSED_COLUMNS * shape.columns * shape.adjacent);
    let strip = register_strip(w, xg, height, cl.info.compute_units);
    let variant = shape.variant(w);
    launch_strips(
        cl,
        (src, dst, weights),
        (width, height),
        blur,
        (BLUR_FUSED_REG_U8, variant, FUSED_COLUMNS),
        (xg, strip),
        &[],
        ("the fused blur kernel", settings.kernel.is_some()),
    )
}
