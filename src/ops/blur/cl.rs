//! The OpenCL launchers of the blur: the generic two passes, the f32 blur, and bands for
//! images larger than one buffer.

use super::*;

/// The GPU two passes: horizontal (row tiles in local memory) into `tmp`, vertical into `dst`.
#[allow(clippy::too_many_arguments)]
pub(super) fn gpu_two_pass<S>(
    cl: &Arc<ClEngine>,
    format: Format,
    src: &opencl3::memory::Buffer<S>,
    tmp: &opencl3::memory::Buffer<u32>,
    dst: &opencl3::memory::Buffer<S>,
    weights: Arg,
    (width, height): (u32, u32),
    blur: &GaussianBlur,
    px_bytes: usize,
) -> Result<()> {
    let (w, code) = (blur.radius, blur.border.code());
    let mut events = vec![h_pass(
        cl, format, src, tmp, weights, width, height, blur, px_bytes,
    )?];
    let xg = (width as usize).div_ceil(TILE_ITEMS);
    let yg = (height as usize).div_ceil(V_ROWS);
    let vargs = pass_args(
        Arg::buf(tmp),
        (width, height),
        weights,
        (w, code),
        Arg::buf(dst),
        &[Arg::U32(xg as u32)],
    );
    events.push(cl.launch(format.v_kernel(), &vargs, xg * yg * TILE_ITEMS, TILE_ITEMS)?);
    cl.finish(&events)
}

/// Packed pixels as an RGBA8 image.
pub(super) fn bytes_to_image(width: u32, height: u32, bytes: Vec<u8>) -> Result<RgbaImage> {
    RgbaImage::from_raw(width, height, bytes).ok_or(Error::ImageTooLarge {
        width: width as u64,
        height: height as u64,
        reason: "the result does not match its size",
    })
}

/// Where the RGBA8 blur on a device puts its result.
pub(super) enum U8Dest<'o> {
    /// In a device buffer where it can ([`ClOut::Buffer`]): for a device image.
    Device,
    /// On the host: a CPU device writes it there directly ([`ClOut::Host`]); a GPU leaves it in
    /// a device buffer for the caller to read.
    Host,
    /// Into the caller's packed bytes (`4 × width × height`, checked by the caller): a CPU
    /// device writes them there directly ([`ClOut::Written`]); a GPU leaves a device buffer.
    Into(&'o mut [u8]),
}

/// The result of the RGBA8 blur on a device.
pub(super) enum ClOut {
    /// An image without pixels.
    Empty,
    /// The whole result in one device buffer.
    Buffer(opencl3::memory::Buffer<u32>),
    /// The whole result as packed RGBA8 bytes on the host: blurred in bands (an image larger
    /// than one buffer), or written there by a CPU device.
    Host(Vec<u8>),
    /// The whole result written into the bytes of [`U8Dest::Into`].
    Written,
}

/// Host bytes of the result as `dest` asks: moved into a [`ClOut::Host`] or copied into the
/// caller's bytes.
fn host_result(dest: U8Dest<'_>, bytes: &[u8], owned: impl FnOnce() -> Vec<u8>) -> ClOut {
    match dest {
        U8Dest::Into(out) => {
            crate::cpu::parallel_copy(bytes, out);
            ClOut::Written
        }
        _ => ClOut::Host(owned()),
    }
}

/// The RGBA8 blur on a device, its result where `dest` asks.
pub(super) fn cl_blur_u8(
    cl: &Arc<ClEngine>,
    input: ImageInput<'_>,
    blur: &GaussianBlur,
    mut dest: U8Dest<'_>,
) -> Result<ClOut> {
    let (width, height) = (input.width(), input.height());
    let n = width as usize * height as usize;
    if n == 0 {
        return Ok(ClOut::Empty);
    }
    let limit = cl.max_buffer_bytes;
    // The intermediate (4 u16 a pixel) is the largest buffer of the one-buffer blur; larger
    // images (and device images held in several parts) are blurred in bands.
    if n as u64 * 8 > limit {
        let host = HostPixels::of(input)?;
        let view = host.view();
        if blur.radius == 0 {
            let mut fresh = Vec::new();
            let bytes = match &mut dest {
                U8Dest::Into(out) => &mut **out,
                _ => {
                    fresh = alloc_zeroed::<u8>(n * 4);
                    &mut fresh[..]
                }
            };
            for (y, row) in bytes.chunks_exact_mut(4 * width as usize).enumerate() {
                row.copy_from_slice(view.row(y as u32));
            }
            return Ok(match dest {
                U8Dest::Into(_) => ClOut::Written,
                _ => ClOut::Host(fresh),
            });
        }
        let qbuf = fixed_weights_buffer(cl, blur)?;
        let out = cl_banded::<u32, u16, u32>(
            cl,
            Format::Rgba8,
            width,
            height,
            1,
            blur,
            Arg::buf(&qbuf),
            4,
            |y, dst| bytemuck::cast_slice_mut::<u32, u8>(dst).copy_from_slice(view.row(y as u32)),
        )?;
        let bytes: &[u8] = bytemuck::cast_slice(&out);
        return Ok(host_result(dest, bytes, || bytes.to_vec()));
    }
    // The input in one buffer: a device image of this engine in one part is used in place.
    let own = match input {
        ImageInput::Device(d) => match &d.storage {
            Storage::OpenCl(p) if Arc::ptr_eq(&p.owner, cl) && p.parts.len() == 1 => {
                Some(&p.parts[0].buffer)
            }
            _ => None,
        },
        ImageInput::Host(_) => None,
    };
    // A CPU device reads the caller's packed, 4-aligned pixels where they are, and writes a
    // result for the host straight into that result's memory (PoCL 3.1, 4096², w = 2: 94-105 ms
    // a call with an upload and two copies back, 12.6-13.7 ms now, the kernel 12-12.6 ms).
    let in_place = cl.uses_host_memory();
    // The host memory the kernels may use, then the guard that waits for them (dropped first).
    let host;
    let mut fresh = (in_place && matches!(dest, U8Dest::Host)).then(|| alloc_zeroed::<u8>(n * 4));
    let mut drain = cl.queue_drain();
    let (over_host, uploaded);
    let src = match own {
        Some(b) => b,
        None => {
            host = HostPixels::of(input)?;
            let words = host
                .view()
                .packed_bytes()
                .and_then(|b| bytemuck::try_cast_slice::<u8, u32>(b).ok());
            match words.filter(|_| in_place) {
                Some(words) => {
                    // SAFETY: `host` lives until this function returns, after `drain` (or the
                    // blocking read of the result) has waited for every kernel.
                    over_host = unsafe { cl.buffer_over_host_read_only(words, "the image")? };
                    drain.armed = true;
                    &over_host
                }
                None => {
                    uploaded = cl.upload(&host.view())?;
                    match uploaded.parts.as_slice() {
                        [p] => &p.buffer,
                        // Cannot happen: one part holds 4 bytes a pixel, fewer than the 8 checked.
                        _ => {
                            return Err(too_large(
                                "an image part of the blur",
                                n as u64 * 4,
                                limit,
                            ));
                        }
                    }
                }
            }
        }
    };
    // The host bytes a CPU device writes the result into: fresh ones, or the caller's where
    // they are 4-aligned (others get a device buffer that the caller reads).
    let host_bytes = match &mut dest {
        U8Dest::Into(out) if in_place => Some(&mut **out),
        _ => fresh.as_deref_mut(),
    };
    let mut result_words = host_bytes.and_then(|b| bytemuck::try_cast_slice_mut::<u8, u32>(b).ok());
    let mut dst = match result_words.as_deref_mut() {
        Some(words) => {
            drain.armed = true;
            // SAFETY: `words` (in `fresh` or the caller's bytes) holds n words, untouched until
            // the blocking read of `dst` into that same memory below (or `drain`, on an error
            // path) has waited for the kernels.
            unsafe { cl.buffer_over_host(words.as_mut_ptr(), n, "the blurred image")? }
        }
        None => match cl.grid.contiguous {
            true => large_buffer::<u32>(cl, n, "the blurred image")?,
            false => cl.image_buffer(n, "the blurred image")?,
        },
    };
    if blur.radius == 0 {
        // A copy, on the device.
        cl.copy(src, &mut dst, n)?;
    } else {
        let qbuf = fixed_weights_buffer(cl, blur)?;
        cl_passes::<u32, u16>(
            cl,
            Format::Rgba8,
            src,
            &dst,
            Arg::buf(&qbuf),
            width,
            height,
            blur,
            4,
        )?;
    }
    let Some(words) = result_words else {
        return Ok(ClOut::Buffer(dst));
    };
    // Waits for the kernels (an in-order queue); reading into the buffer's own memory copies
    // nothing. The bytes stay allocated until then, so that an error here drains the queue
    // before they are freed.
    cl.read(&dst, 0, words)?;
    drain.armed = false;
    drop(dst);
    Ok(match fresh {
        Some(bytes) => ClOut::Host(bytes),
        None => ClOut::Written,
    })
}

/// The RGBA8 blur's weights on the device, in one buffer written once a call: the `2w + 1`
/// fixed-point weights `q`, then the same values as f32 bits (exact: each is at most 65536),
/// which the band kernel's f32 horizontal pass reads from `q + 2w + 1` beyond w = 16.
pub(super) fn fixed_weights_buffer(
    cl: &ClEngine,
    blur: &GaussianBlur,
) -> Result<Arc<opencl3::memory::Buffer<u32>>> {
    let q = blur.weights_fixed()?;
    let words: Vec<u32> = q
        .iter()
        .copied()
        .chain(q.iter().map(|&v| (v as f32).to_bits()))
        .collect();
    cl.constant_words(&words)
}

/// The f32 blur's weights on the device; an error on a device that flushes denormals (it would
/// give other bits on such inputs).
pub(super) fn f32_weights(
    cl: &Arc<ClEngine>,
    blur: &GaussianBlur,
) -> Result<Arc<opencl3::memory::Buffer<u32>>> {
    if !cl.info.f32_denormals {
        return Err(cl.limit_error(
            Format::RgbaF32.h_kernels().0,
            "f32 denormals kept (CL_FP_DENORM in CL_DEVICE_SINGLE_FP_CONFIG)",
            1,
            0,
        ));
    }
    // The f32 weights' bits: the kernels read them as floats.
    let bits: Vec<u32> = blur.weights_f32()?.iter().map(|w| w.to_bits()).collect();
    cl.constant_words(&bits)
}

/// Blurs the f32 image of `width` × `height` pixels in `src` (one buffer) into a new buffer on
/// the same device; nothing crosses the bus. Waits for its kernels.
pub(super) fn cl_blur_f32_device(
    cl: &Arc<ClEngine>,
    src: &opencl3::memory::Buffer<f32>,
    (width, height): (u32, u32),
    blur: &GaussianBlur,
) -> Result<opencl3::memory::Buffer<f32>> {
    let values = 4 * width as usize * height as usize;
    let wbuf = match values > 0 && blur.radius > 0 {
        true => Some(f32_weights(cl, blur)?),
        false => None,
    };
    let mut dst = match cl.pooled_image_buffer::<f32>(values) {
        Some(b) => b,
        None => large_buffer::<f32>(cl, values.max(1), "the blurred f32 image")?,
    };
    let Some(wbuf) = wbuf else {
        // Empty, or radius 0: a copy on the device.
        cl.copy(src, &mut dst, values)?;
        return Ok(dst);
    };
    f32_passes(cl, (src, &dst), &wbuf, (width, height), blur)?;
    Ok(dst)
}

/// The f32 blur's kernels from `src` into `dst` (one buffer each, on the device or over host
/// memory) with the weights `wbuf`.
fn f32_passes(
    cl: &Arc<ClEngine>,
    (src, dst): (&opencl3::memory::Buffer<f32>, &opencl3::memory::Buffer<f32>),
    wbuf: &opencl3::memory::Buffer<u32>,
    (width, height): (u32, u32),
    blur: &GaussianBlur,
) -> Result<()> {
    cl_passes::<f32, f32>(
        cl,
        Format::RgbaF32,
        src,
        dst,
        Arg::buf(wbuf),
        width,
        height,
        blur,
        16,
    )
}

/// The f32 blur of `img` on the device into `out` (`4 × width × height` values).
pub(super) fn cl_blur_f32_into(
    cl: &Arc<ClEngine>,
    img: &F32View<'_>,
    blur: &GaussianBlur,
    out: &mut [f32],
) -> Result<()> {
    let (width, height) = img.dimensions();
    let n = width as usize * height as usize;
    if n == 0 || blur.radius == 0 {
        out.copy_from_slice(img.as_raw());
        return Ok(());
    }
    let limit = cl.max_buffer_bytes;
    let wbuf = f32_weights(cl, blur)?;
    if n as u64 * 16 > limit {
        let src = img.as_raw();
        let m = 4 * width as usize;
        let bands = cl_banded::<f32, f32, f32>(
            cl,
            Format::RgbaF32,
            width,
            height,
            4,
            blur,
            Arg::buf(&wbuf),
            16,
            |y, dst| dst.copy_from_slice(&src[y * m..(y + 1) * m]),
        )?;
        out.copy_from_slice(&bands);
    } else if cl.uses_host_memory() {
        // A CPU device reads the image where it is and writes the result straight into `out`
        // (PoCL 3.1, 4096², w = 8: 199 ms a call with the copies, the kernels 53 ms).
        // Dropped before `out` and `img`: drains the queue on an error path.
        let mut drain = cl.queue_drain();
        drain.armed = true;
        // SAFETY: `img` and `out` (borrowed for this call) hold 4n f32 each and stay allocated
        // and otherwise untouched until their kernels have finished (the blocking read below,
        // or `drain`); `out` is only read into through that blocking read of `dst` into the
        // same memory.
        let (src, dst) = unsafe {
            (
                cl.buffer_over_host_read_only(img.as_raw(), "an f32 image")?,
                cl.buffer_over_host(out.as_mut_ptr(), 4 * n, "the blurred image")?,
            )
        };
        f32_passes(cl, (&src, &dst), &wbuf, (width, height), blur)?;
        cl.read(&dst, 0, out)?;
        drain.armed = false;
        drop((src, dst));
    } else {
        // Uploaded into the engine's idle f32 buffers and blurred as a device image is: no
        // buffer is made or freed a call once the pool holds them.
        let mut src = cl.image_buffer::<f32>(4 * n, "an f32 image")?;
        cl.write(&mut src, 0, img.as_raw())?;
        let dst = cl_blur_f32_device(cl, &src, (width, height), blur)?;
        let read = cl.read(&dst, 0, out);
        if read.is_ok() {
            cl.give_image_buffer(4 * n, src);
            cl.give_image_buffer(4 * n, dst);
        }
        read?;
    }
    Ok(())
}

/// How an image larger than one buffer is blurred: bands of `rows` output rows, each taking
/// its `2w + 1` taps in chunks of `k` (a window of `rows + k - 1` intermediate rows a chunk).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct BandPlan {
    pub(super) rows: usize,
    pub(super) k: usize,
}

/// The bands for an image `width` pixels wide under a cap of `limit` bytes a buffer: every
/// buffer of a band (input window, intermediate window, accumulator, result) takes at most
/// 16 bytes a pixel, so a window of `rows + k - 1 ≤ limit / (16 · width)` rows fits. An error
/// when not even one row fits.
pub(super) fn band_plan(limit: u64, width: u32, height: u32, taps: usize) -> Result<BandPlan> {
    let row_bytes = 16 * width as u64;
    // The band kernels index with 32 bits: at most 2^32 bytes (2^30 values) a buffer.
    let cap = limit.min(1 << 32);
    let fit = (cap / row_bytes.max(1)) as usize;
    if fit == 0 {
        return Err(too_large(
            "one image row of the blur (with its intermediate and accumulator rows, 16 bytes a pixel)",
            row_bytes,
            limit,
        ));
    }
    let k = if 2 * taps <= fit {
        taps
    } else {
        (fit / 2).max(1)
    };
    let rows = (fit + 1 - k).min(height as usize).max(1);
    Ok(BandPlan { rows, k })
}

/// The horizontal pass over `rows` whole rows of `src` into `t`, on either kernel layout.
#[allow(clippy::too_many_arguments)]
pub(super) fn h_pass<S, D>(
    cl: &Arc<ClEngine>,
    format: Format,
    src: &opencl3::memory::Buffer<S>,
    t: &opencl3::memory::Buffer<D>,
    weights: Arg,
    width: u32,
    rows: u32,
    blur: &GaussianBlur,
    px_bytes: usize,
) -> Result<opencl3::event::Event> {
    let (hk, hk_direct) = format.h_kernels();
    let w = blur.radius;
    let io = |rest: &[Arg]| {
        pass_args(
            Arg::buf(src),
            (width, rows),
            weights,
            (w, blur.border.code()),
            Arg::buf(t),
            rest,
        )
    };
    if cl.grid.contiguous {
        let groups = (rows as usize).clamp(1, cl.grid.max_groups);
        return cl.launch(hk, &io(&[]), groups, 1);
    }
    let tile = TILE_ITEMS * TILE_PX;
    let tiles = (width as usize).div_ceil(tile);
    let global = tiles * rows as usize * TILE_ITEMS;
    let local_bytes = (tile + 2 * w as usize) * px_bytes;
    let tiles = Arg::U32(tiles as u32);
    // The row tile in local memory where it fits with 1 KiB to spare, else read directly.
    if (local_bytes as u64) + 1024 <= cl.info.local_mem_bytes {
        cl.launch(
            hk,
            &io(&[tiles, Arg::Local(local_bytes)]),
            global,
            TILE_ITEMS,
        )
    } else {
        cl.launch(hk_direct, &io(&[tiles]), global, TILE_ITEMS)
    }
}

/// The blur of an image larger than one buffer, in bands of output rows (see [`band_plan`]).
///
/// For each band `y0..y1` and chunk of taps `i0..i1`, the host gathers the input rows of the
/// virtual rows `y0 - w + i0 .. y1 - w + i1 - 1`, each mapped through the border
/// ([`Border::map`]; a zero row for [`Border::Zero`]), into one contiguous staging window;
/// the device filters the window's rows horizontally (the horizontal border applies inside
/// each whole row) and adds taps `i0..i1` of the vertical pass to the band's accumulator, in
/// tap order. The vertical border is thereby applied on the host, at the real image edges
/// only, for any radius (a radius above the image height maps rows many times, as the
/// one-buffer kernels do). `fill(y, dst)` copies image row `y` (`epp · width` elements).
/// Returns the result on the host, `epp · width · height` elements in scan order.
#[allow(clippy::too_many_arguments)]
pub(super) fn cl_banded<S, D, A>(
    cl: &Arc<ClEngine>,
    format: Format,
    width: u32,
    height: u32,
    epp: usize,
    blur: &GaussianBlur,
    weights: Arg,
    px_bytes: usize,
    fill: impl Fn(usize, &mut [S]),
) -> Result<Vec<S>>
where
    S: bytemuck::Pod + Default,
{
    let w = blur.radius as usize;
    let taps = 2 * w + 1;
    let plan = band_plan(cl.max_buffer_bytes, width, height, taps)?;
    let m = epp * width as usize; // source elements a row
    let nv = 4 * width as usize; // intermediate / accumulator values a row
    let window = plan.rows + plan.k - 1;
    let mut stage = cl.buffer::<S>(window * m, "a band of the blur's input")?;
    let t = cl.buffer::<D>(window * nv, "a band of the blur's intermediate")?;
    let acc = cl.buffer::<A>(plan.rows * nv, "a band of the blur's accumulator")?;
    let dst = cl.buffer::<S>(plan.rows * m, "a band of the blurred image")?;
    let vk = format.band_v_kernel();
    let mut host = vec![S::default(); window * m];
    let mut out = vec![S::default(); height as usize * m];
    let mut kernel_ns = (0u64, 0u64);
    let mut y0 = 0usize;
    while y0 < height as usize {
        let rows = plan.rows.min(height as usize - y0);
        let mut i0 = 0usize;
        while i0 < taps {
            let k = plan.k.min(taps - i0);
            let win = rows + k - 1;
            let first = y0 as i64 - w as i64 + i0 as i64;
            for (r, dst_row) in host[..win * m].chunks_exact_mut(m).enumerate() {
                match blur.border.map(first + r as i64, height as u64) {
                    Some(y) => fill(y as usize, dst_row),
                    None => dst_row.fill(S::default()),
                }
            }
            cl.write(&mut stage, 0, &host[..win * m])?;
            let mut events = vec![h_pass(
                cl, format, &stage, &t, weights, width, win as u32, blur, px_bytes,
            )?];
            let total = rows * nv;
            let (global, local) = if cl.grid.contiguous {
                (rows.clamp(1, cl.grid.max_groups), 1)
            } else {
                let wg = cl.grid.wg.max(1);
                (total.div_ceil(wg).clamp(1, cl.grid.max_groups) * wg, wg)
            };
            let args = [
                Arg::buf(&t),
                Arg::U32(nv as u32),
                Arg::U32(rows as u32),
                weights,
                Arg::U32(i0 as u32),
                Arg::U32(k as u32),
                Arg::buf(&acc),
                Arg::U32((i0 == 0) as u32),
                Arg::U32((i0 + k == taps) as u32),
                Arg::buf(&dst),
            ];
            events.push(cl.launch(vk, &args, global, local)?);
            cl.finish(&events)?;
            let (sum, span) = crate::opencl::last_kernel_ns().unwrap_or((0, 0));
            kernel_ns.0 += sum;
            kernel_ns.1 += span;
            i0 += k;
        }
        cl.read(&dst, 0, &mut out[y0 * m..(y0 + rows) * m])?;
        y0 += rows;
    }
    // The kernel time of the whole blur, every band and chunk (the spans of its waits added
    // up: the host's work between them is not device time).
    crate::opencl::set_last_kernel_ns(Some(kernel_ns));
    Ok(out)
}
