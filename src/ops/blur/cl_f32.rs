//! The OpenCL launchers of the GPU f32 blur's kernels other than the generic two passes: the
//! generic tile kernel (`blur_fused_f32`), the kernels built per radius (the band kernel
//! `blur_fused_band_f32`, the register kernel `blur_fused_reg_f32`, the two passes
//! `blur_h_rad_f32` then `blur_vs_rad_f32` or `blur_v_rad_f32`), and the choice between them
//! (measurements: docs/performance.md, "f32 kernels built per radius" and "Smaller code").

use super::*;
use crate::config::BlurF32Kernel;

/// The largest radius `blur_fused_f32` (blur_f32.cl) takes by default. Its horizontal part
/// reads its taps from global memory (the cache), 2w + 1 loads a value: H200, 8192² kernels,
/// fused against two passes, w = 2: 0.879 against 1.182 ms (NPP's f32 row + column 1.345);
/// w = 8: 3.089 against 1.687 (even near w = 3). Forced (`blur.f32_kernel=tile`) it takes up
/// to [`TILE_F32_FORCED_MAX_RADIUS`].
const TILE_F32_MAX_RADIUS: u32 = 2;

/// The largest radius of a forced `blur_fused_f32`: its local tile holds 32 + 2w rows of 32
/// float4s (32 KiB at w = 16).
const TILE_F32_FORCED_MAX_RADIUS: u32 = 16;

/// The radii at which GPUs take the f32 band kernel by default (once built; where it does not
/// fit or build, the radius-built passes). H200, 8192², kernel ms, band / register kernel /
/// radius-built passes (vertical in blocks of 8 rows): w = 2 0.558–0.559 / 0.647–0.648 /
/// 1.065–1.067, w = 4 0.572–0.575 / 0.816–0.817 / 1.090–1.096, w = 6 0.599–0.600 / 1.064–1.067
/// / 1.137–1.138, w = 8 0.670–0.673 / 1.324–1.326 / 1.145–1.150, w = 12 0.833–0.834 / 2.46–2.47
/// / 1.250–1.261, w = 16 1.088–1.091 / 3.96 / 1.393–1.403, w = 25 1.541–1.544 / 5.34 /
/// 1.755–1.766, w = 32 2.802–2.804 / — / 2.159–2.160 (the band kernel's unrolled code and
/// registers grow with w).
pub(super) const BAND_F32_RADII: std::ops::RangeInclusive<u32> = 1..=25;

/// The radii at which the f32 register kernel stands in for a band kernel that does not fit or
/// build (beyond, the radius-built passes: see [`BAND_F32_RADII`]).
const REGISTER_F32_FALLBACK_RADII: std::ops::RangeInclusive<u32> = 1..=6;

/// The radii at which GPUs take the f32 radius-built passes by default (once built): beyond the
/// band kernel's (see [`BAND_F32_RADII`]).
pub(super) const RADIUS_F32_RADII: std::ops::RangeInclusive<u32> = 26..=32;

/// The largest radius the f32 band kernel is built for (its unrolled code; its local memory
/// holds 8 rows of 64 + 2w pixels and 8 filtered rows of 64: 26 KiB at w = 32).
const BAND_F32_MAX_RADIUS: u32 = 32;

/// The largest radius the f32 radius-built passes are built for (their unrolled code).
pub(super) const RADIUS_F32_MAX_RADIUS: u32 = 64;

/// Output rows a work-item of the f32 radius-built vertical pass takes by default (H200, w = 25:
/// that pass 1.60 ms with 8 rows, 3.74 with 16: its unrolled code).
const RADIUS_F32_ROWS: u32 = 8;

/// Output rows a block of the f32 radius-built vertical pass walking strips a float lane a
/// work-item (`blur_vs_rad_f32`; 0: `blur_v_rad_f32`, pixel columns of [`RADIUS_F32_ROWS`]).
/// H200, 8192², both passes, kernel ms, columns of 8 rows / blocks of 4 / 8 / 16 rows: w = 8
/// 1.474 / 1.274 / 1.151 / 1.148, w = 12 1.670 / 1.464 / 1.262 / 1.239, w = 16 1.886 / 1.650 /
/// 1.397 / 1.375, w = 25 2.477–2.485 / 2.160 / 1.753–1.758 / 1.771, w = 32 3.13–3.45 / 2.518 /
/// 2.160 / 2.275; at w = 25 the vertical pass alone 1.612 ms in columns, 0.885 in blocks of 8.
const RADIUS_F32_VROWS: u32 = 8;

/// The largest radius the f32 register kernel is built for (its 2w + 1 accumulators and
/// unrolled code).
pub(super) const REGISTER_F32_MAX_RADIUS: u32 = 32;

/// Output pixels a group of the f32 register kernel owns (64 work-items of 4 channels, 128 of
/// 2 or 256 of 1). 128 was no faster on the H200 (w = 2 0.754 against 0.742 ms).
const REGISTER_F32_PIXELS: usize = 64;

/// Columns (vectors of a row, 64 work-items apart) a work-item of the f32 register kernel takes
/// at radius `w` (`forced` by `blur.f32_columns`). H200, 8192², kernel ms, 2 columns
/// against 1: w = 1 0.575–0.577 / 0.628–0.632, w = 2 0.645–0.652 / 0.737, w = 3 0.782–0.785 /
/// 0.809, w = 4 0.817–0.819 / 0.965–0.966, w = 8 3.26–3.28 / 1.33 (twice the accumulators).
fn register_f32_columns(w: u32, forced: Option<u32>) -> u32 {
    match forced {
        Some(c) => c,
        None if w <= 4 => 2,
        None => 1,
    }
}

/// Channels a work-item of the f32 register kernel takes at radius `w` (its accumulators are
/// 2w + 1 vectors of them).
fn register_f32_channels(w: u32, forced: Option<u32>) -> u32 {
    match forced {
        Some(c) => c,
        None if w <= 8 => 4,
        None if w <= 16 => 2,
        None => 1,
    }
}

/// The GPU f32 blur's kernels for one call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum F32Choice {
    /// `blur_fused_f32`, generic.
    Tile,
    /// `blur_fused_reg_f32`, built per radius.
    Registers,
    /// `blur_fused_band_f32`, built per radius.
    Band,
    /// `blur_h_rad_f32`, then `blur_vs_rad_f32` (or `blur_v_rad_f32`), built per radius.
    Radius,
    /// `blur_h_f32` and `blur_v_f32`, generic.
    TwoPass,
}

/// The kernels a GPU f32 blur at `blur`'s radius runs, and whether the tuning forced them (a
/// forced kernel that does not fit or build is an error). By default a radius-built kernel once
/// its program is ready (it builds in the background from the second call at a radius, the
/// generic kernels answering until then, with the same bits).
pub(super) fn f32_choice(cl: &Arc<ClEngine>, blur: &GaussianBlur) -> (F32Choice, bool) {
    let w = blur.radius;
    let forced = match cl.tuning.blur.f32_kernel {
        Some(BlurF32Kernel::Tile) => Some(F32Choice::Tile),
        Some(BlurF32Kernel::Registers) => Some(F32Choice::Registers),
        Some(BlurF32Kernel::Band) => Some(F32Choice::Band),
        Some(BlurF32Kernel::Radius) => Some(F32Choice::Radius),
        Some(BlurF32Kernel::TwoPass) => Some(F32Choice::TwoPass),
        None => None,
    };
    if let Some(choice) = forced {
        return (choice, true);
    }
    let built = |cl: &Arc<ClEngine>| {
        let blur = *blur;
        cl.specialisation_ready(("blur_f32", w), move |cl| {
            specialise_f32_in_background(cl, &blur)
        })
    };
    let choice = if BAND_F32_RADII.contains(&w) && built(cl) {
        F32Choice::Band
    } else if RADIUS_F32_RADII.contains(&w) && built(cl) {
        F32Choice::Radius
    } else if w <= TILE_F32_MAX_RADIUS {
        F32Choice::Tile
    } else {
        F32Choice::TwoPass
    };
    (choice, false)
}

/// The f32 blur of a whole image in one kernel where `choice` asks for one and it fits and
/// builds (a radius-built kernel that does not, unforced, leaves the generic tile kernel where
/// the radius allows): `Ok(false)` (nothing enqueued) for the two passes. Waits for its kernel.
pub(super) fn gpu_f32_one_kernel<S>(
    cl: &Arc<ClEngine>,
    (choice, forced): (F32Choice, bool),
    io: Io<'_, S>,
    size: (u32, u32),
    blur: &GaussianBlur,
) -> Result<bool> {
    let done = match choice {
        F32Choice::Tile if forced => {
            return gpu_tile_f32(cl, io, size, blur, TILE_F32_FORCED_MAX_RADIUS);
        }
        F32Choice::Tile => false,
        F32Choice::Registers => gpu_registers_f32(cl, io, size, blur, forced)?,
        // Where the band kernel does not fit (groups of 256) or build, the register kernel
        // (groups of 64) at the radii where it is next best.
        F32Choice::Band => {
            gpu_band_f32(cl, io, size, blur, forced)?
                || (!forced
                    && REGISTER_F32_FALLBACK_RADII.contains(&blur.radius)
                    && gpu_registers_f32(cl, io, size, blur, false)?)
        }
        F32Choice::Radius | F32Choice::TwoPass => return Ok(false),
    };
    match done {
        true => Ok(true),
        false => gpu_tile_f32(cl, io, size, blur, TILE_F32_MAX_RADIUS),
    }
}

/// The f32 two passes built per radius (`blur_h_rad_f32`, `blur_v_rad_f32`) from `src`
/// through `tmp` (an f32 image) into `dst`. `Ok(false)` where the radius is beyond
/// [`RADIUS_F32_MAX_RADIUS`], the device's local memory is too small or they do not build
/// (unless `forced`: then an error), for the generic passes.
pub(super) fn gpu_radius_f32<S>(
    cl: &Arc<ClEngine>,
    (src, tmp, dst, weights): PassesIo<'_, S>,
    (width, height): (u32, u32),
    blur: &GaussianBlur,
    forced: bool,
) -> Result<bool> {
    const H_ITEMS: usize = 128;
    const H_PIXELS: usize = 256;
    const V_ITEMS: usize = 64;
    const V_LANES: usize = 128;
    let (w, code) = (blur.radius, blur.border.code());
    let rows = cl.tuning.blur.f32_rows.unwrap_or(RADIUS_F32_ROWS) as usize;
    // Four input planes of 256 + 4 ceil(w / 2) floats and four of 256 results, each plane 4
    // floats longer at most (HRPL, HRHS in blur_f32.cl).
    let local = 4 * (2 * H_PIXELS + 4 * w.div_ceil(2) as usize + 8) * 4;
    let fits = (1..=RADIUS_F32_MAX_RADIUS).contains(&w)
        && H_ITEMS <= cl.info.max_work_group_size
        && (local + 1024) as u64 <= cl.info.local_mem_bytes;
    if !fits {
        let what = "the f32 radius-built passes' radius (1 to 64) and local memory";
        return unfit(cl, forced, (BLUR_H_RAD_F32, what), local);
    }
    let vrows = cl.tuning.blur.f32_vrows.unwrap_or(RADIUS_F32_VROWS);
    let mut variant = Defines::NONE
        .with("BLUR_W", w)
        .with("BLUR_F32VR", rows as u32);
    if vrows > 0 {
        variant = variant.with("BLUR_F32VS", vrows);
    }
    let launched = (|| {
        let hx = (width as usize).div_ceil(H_PIXELS);
        let mut hargs = pass_args(
            Arg::buf(src),
            (width, height),
            weights,
            (w, code),
            Arg::buf(tmp),
            &[Arg::U32(hx as u32)],
        );
        hargs.push(Arg::Local(local));
        let h = cl.launch_variant(
            BLUR_H_RAD_F32,
            variant,
            &hargs,
            hx * height as usize * H_ITEMS,
            H_ITEMS,
        )?;
        let v = if vrows > 0 {
            // A float lane a work-item, strips of rows in blocks of `vrows`.
            let xg = (4 * width as usize).div_ceil(V_LANES);
            let strip = strip_rows(w, vrows as usize, 256, xg, height, cl.info.compute_units);
            let yg = (height as usize).div_ceil(strip);
            let vargs = pass_args(
                Arg::buf(tmp),
                (width, height),
                weights,
                (w, code),
                Arg::buf(dst),
                &[Arg::U32(xg as u32), Arg::U32(strip as u32)],
            );
            cl.launch_variant(BLUR_VS_RAD_F32, variant, &vargs, xg * yg * V_LANES, V_LANES)?
        } else {
            let vx = (width as usize).div_ceil(V_ITEMS);
            let vy = (height as usize).div_ceil(rows);
            let vargs = pass_args(
                Arg::buf(tmp),
                (width, height),
                weights,
                (w, code),
                Arg::buf(dst),
                &[Arg::U32(vx as u32)],
            );
            cl.launch_variant(BLUR_V_RAD_F32, variant, &vargs, vx * vy * V_ITEMS, V_ITEMS)?
        };
        Ok(vec![h, v])
    })();
    finish_per_radius(cl, launched, ("the f32 radius-built passes", forced), w)
}

/// Makes the f32 radius-built kernels of `blur`'s radius ready, on a background thread: the
/// blur of a small image takes the path a real call will (building what it needs); a failure is
/// only logged, and the real call then falls back.
fn specialise_f32_in_background(cl: &Arc<ClEngine>, blur: &GaussianBlur) {
    const SIDE: u32 = 64;
    let n = 4 * (SIDE * SIDE) as usize;
    let run = || -> Result<()> {
        let mut src = cl.buffer::<f32>(n, "a background build's image")?;
        cl.fill(&mut src, 0.5f32, n)?;
        let dst = cl.buffer::<f32>(n, "a background build's result")?;
        let wbuf = f32_weights(cl, blur)?;
        cl_passes::<f32, f32>(
            cl,
            Format::RgbaF32,
            &src,
            &dst,
            Arg::buf(&wbuf),
            SIDE,
            SIDE,
            blur,
            16,
        )
    };
    if let Err(e) = run() {
        log::warn!(
            "clpix: the f32 blur's programs for w = {} did not build in the background: {e}",
            blur.radius
        );
    }
}

/// The f32 register kernel (`blur_fused_reg_f32`, built per radius) from `src` into `dst`.
/// `Ok(false)` when the radius is beyond [`REGISTER_F32_MAX_RADIUS`], the device's groups or
/// local memory are too small, or it does not build (unless `forced`: then an error).
fn gpu_registers_f32<S>(
    cl: &Arc<ClEngine>,
    io: Io<'_, S>,
    (width, height): (u32, u32),
    blur: &GaussianBlur,
    forced: bool,
) -> Result<bool> {
    let w = blur.radius;
    let ch = register_f32_channels(w, cl.tuning.blur.f32_channels);
    let cpx = register_f32_columns(w, cl.tuning.blur.f32_columns) as usize;
    let threads = REGISTER_F32_PIXELS * 4 / ch as usize;
    let px = REGISTER_F32_PIXELS * cpx;
    let local = 2 * (px + 2 * w as usize) * 16;
    if let Some(no) = one_kernel_unfit(
        cl,
        (
            BLUR_FUSED_REG_F32,
            "the f32 register kernel's radius (1 to 32), group and local memory",
            forced,
        ),
        (w, REGISTER_F32_MAX_RADIUS),
        (threads, local),
        (width, height),
    ) {
        return no;
    }
    let xg = (width as usize).div_ceil(px);
    let strip = register_strip(w, xg, height, cl.info.compute_units);
    launch_strips(
        cl,
        io,
        (width, height),
        blur,
        (
            BLUR_FUSED_REG_F32,
            Defines::NONE
                .with("BLUR_W", w)
                .with("BLUR_F32CH", ch)
                .with("BLUR_F32CPX", cpx as u32)
                .with("BLUR_F32FX", threads as u32),
            threads,
        ),
        (xg, strip),
        &[Arg::Local(local)],
        ("the f32 register blur kernel", forced),
    )
}

/// `None` where the f32 one-kernel blur `kernel` (`what`: its limits), built per radius up to
/// `max`, of `threads` work-items a group and `local` bytes of local memory, runs a
/// `width × height` image at radius `w` here; else what its launcher returns: [`unfit`]'s
/// answer (`Ok(false)`, or the error where `forced`).
fn one_kernel_unfit(
    cl: &ClEngine,
    (kernel, what, forced): (Kernel, &'static str, bool),
    (w, max): (u32, u32),
    (threads, local): (usize, usize),
    (width, height): (u32, u32),
) -> Option<Result<bool>> {
    let fits = (1..=max).contains(&w)
        && threads <= cl.info.max_work_group_size
        && (local + 1024) as u64 <= cl.info.local_mem_bytes
        && counts_fit_i32(width, height, w);
    (!fits).then(|| unfit(cl, forced, (kernel, what), local))
}

/// The f32 band kernel built for radius `blur.radius` (1 to [`BAND_F32_MAX_RADIUS`]) from `src`
/// into `dst`: `Ok(false)` when it does not fit or build here, unforced (the caller takes
/// another kernel, with the same bits).
fn gpu_band_f32<S>(
    cl: &Arc<ClEngine>,
    io: Io<'_, S>,
    (width, height): (u32, u32),
    blur: &GaussianBlur,
    forced: bool,
) -> Result<bool> {
    const THREADS: usize = 256;
    const PIXELS: usize = 64;
    const ROWS: usize = 8;
    let w = blur.radius;
    // Input planes of 64 + 2w pixels rounded up to 4 floats (and 4 more where that is a
    // multiple of 8), filtered planes of 72 floats (FB_TS, FB_FS in blur_f32.cl).
    let span = (PIXELS + 2 * w as usize).div_ceil(4) * 4;
    let ts = if span.is_multiple_of(8) {
        span + 4
    } else {
        span
    };
    let local = ROWS * 4 * (ts + 72) * 4;
    if let Some(no) = one_kernel_unfit(
        cl,
        (
            BLUR_FUSED_BAND_F32,
            "the f32 band kernel's radius (1 to 32), group and local memory",
            forced,
        ),
        (w, BAND_F32_MAX_RADIUS),
        (THREADS, local),
        (width, height),
    ) {
        return no;
    }
    let xg = (width as usize).div_ceil(PIXELS);
    let strip = strip_rows(w, ROWS, 256, xg, height, cl.info.compute_units);
    launch_strips(
        cl,
        io,
        (width, height),
        blur,
        (
            BLUR_FUSED_BAND_F32,
            Defines::NONE.with("BLUR_W", w).with("BLUR_F32BAND", 1),
            THREADS,
        ),
        (xg, strip),
        &[],
        ("the f32 band blur kernel", forced),
    )
}

/// The f32 blur of a whole image in the generic tile kernel (`blur_fused_f32`) where the
/// radius (up to `max`) and the device's local memory allow; `false` (nothing enqueued)
/// elsewhere. Waits for it.
fn gpu_tile_f32<S>(
    cl: &Arc<ClEngine>,
    (src, dst, weights): Io<'_, S>,
    (width, height): (u32, u32),
    blur: &GaussianBlur,
    max: u32,
) -> Result<bool> {
    const TILE: u32 = 32;
    let (w, code) = (blur.radius, blur.border.code());
    let local = (TILE + 2 * w) as usize * TILE as usize * 16;
    if w > max
        || (local + 1024) as u64 > cl.info.local_mem_bytes
        || cl.info.max_work_group_size < 128
    {
        return Ok(false);
    }
    let tiles_x = width.div_ceil(TILE);
    let groups = tiles_x as usize * height.div_ceil(TILE) as usize;
    let mut args = pass_args(
        Arg::buf(src),
        (width, height),
        weights,
        (w, code),
        Arg::buf(dst),
        &[],
    );
    args.extend([Arg::U32(tiles_x), Arg::Local(local)]);
    let event = cl.launch(BLUR_FUSED_F32, &args, groups * 128, 128)?;
    cl.finish(&[event])?;
    Ok(true)
}

/// A per-radius f32 kernel that does not fit this device (its radius, group or `local` bytes):
/// the caller's generic kernels (`Ok(false)`), or where it was `forced` a `DeviceLimit` error
/// naming it.
fn unfit(
    cl: &ClEngine,
    forced: bool,
    (kernel, what): (Kernel, &'static str),
    local: usize,
) -> Result<bool> {
    match forced {
        true => Err(cl.limit_error(kernel, what, local as u64, cl.info.local_mem_bytes)),
        false => Ok(false),
    }
}
