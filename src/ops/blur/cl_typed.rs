//! The OpenCL launcher of the blur of every format other than RGBA8 and RGBA f32
//! (`blur/typed.cl`, specialised by `CLPIX_FORMAT`): the image's channel values uploaded rows
//! packed (an image the engine holds in one buffer read there), the horizontal pass into an intermediate buffer, the vertical pass, the result read
//! back. The same bits as `cpu_typed.rs`.

use super::cpu_typed::Rule;
use super::*;
use crate::device::RawSource;
use opencl3::memory::Buffer;

/// Output rows a work-item of the vertical pass takes down its column value, by default
/// (`blur.typed_rows` sets it).
const ROWS: u32 = 8;

/// Bytes of the intermediate value of a channel under `rule`.
fn mid_bytes(rule: Rule) -> usize {
    match rule {
        Rule::U8 => 2,
        Rule::U16 | Rule::F32 => 4,
    }
}

/// Writes `bytes` at the start of `buf` (words), the last word padded with zeros.
fn write_bytes(cl: &ClEngine, buf: &mut Buffer<u32>, bytes: &[u8]) -> Result<()> {
    let whole = bytes.len() / 4 * 4;
    match bytemuck::try_cast_slice::<u8, u32>(&bytes[..whole]) {
        Ok(words) => cl.write(buf, 0, words)?,
        Err(_) => {
            let words: Vec<u32> = bytes[..whole]
                .chunks_exact(4)
                .map(bytemuck::pod_read_unaligned)
                .collect();
            cl.write(buf, 0, &words)?;
        }
    }
    if whole < bytes.len() {
        let mut last = [0u8; 4];
        last[..bytes.len() - whole].copy_from_slice(&bytes[whole..]);
        cl.write(buf, whole / 4, &[u32::from_ne_bytes(last)])?;
    }
    Ok(())
}

/// Reads the first `out.len()` bytes of `buf` (words) into `out`.
fn read_bytes(cl: &ClEngine, buf: &Buffer<u32>, out: &mut [u8]) -> Result<()> {
    let whole = out.len() / 4 * 4;
    let (head, tail) = out.split_at_mut(whole);
    match bytemuck::try_cast_slice_mut::<u8, u32>(head) {
        Ok(words) => cl.read(buf, 0, words)?,
        Err(_) => {
            let mut words = vec![0u32; whole / 4];
            cl.read(buf, 0, &mut words)?;
            head.copy_from_slice(bytemuck::cast_slice(&words));
        }
    }
    if !tail.is_empty() {
        let mut last = [0u32];
        cl.read(buf, whole / 4, &mut last)?;
        tail.copy_from_slice(&bytemuck::bytes_of(&last)[..tail.len()]);
    }
    Ok(())
}

/// Where [`cl_blur_raw`] puts the blurred image.
pub(super) enum BlurTo<'o> {
    /// Its channel values, rows packed, as bytes, on the host.
    Host(&'o mut [u8]),
    /// A buffer kept on the device: the image's part padded with zeros to whole chunks of every
    /// format's kernels (a held image's one part), returned with its words.
    Held,
}

/// The blur of `view` on `cl` to `to`. An error ([`Error::DeviceLimit`], which the engine
/// answers on the CPU by default) where the intermediate does not fit one buffer, or for f32 on
/// a device that flushes denormals.
pub(super) fn cl_blur_raw(
    cl: &Arc<ClEngine>,
    view: &RawSource<'_>,
    blur: &GaussianBlur,
    to: BlurTo<'_>,
) -> Result<Option<(Buffer<u32>, usize)>> {
    let format = view.format();
    let rule = Rule::of(format);
    if rule == Rule::F32 && !cl.info.f32_denormals {
        return Err(cl.limit_error(
            BLUR_TYPED_H,
            "f32 denormals kept (CL_FP_DENORM in CL_DEVICE_SINGLE_FP_CONFIG)",
            1,
            0,
        ));
    }
    let c = format.channels();
    let (width, height) = (view.width(), view.height());
    let nvals = width as usize * c;
    let values = nvals * height as usize;
    let image_bytes = values * format.bytes_per_pixel() / c;
    let mid_len = (values * mid_bytes(rule)) as u64;
    if mid_len > cl.max_buffer_bytes {
        return Err(cl.limit_error(
            BLUR_TYPED_H,
            "bytes of one buffer (the blur's intermediate values)",
            mid_len,
            cl.max_buffer_bytes,
        ));
    }
    let words = |bytes: usize| bytes.div_ceil(4).max(1);
    let q = cl.constant_words(&Rule::of(format).weights(blur)?)?;
    // An image this engine holds in one buffer is read there; any other is uploaded.
    let held = view.parts_on(cl).filter(|parts| parts.len() == 1);
    let staged = match held {
        Some(_) => None,
        None => {
            let host = view.host()?;
            let view = host.raw();
            let mut src = cl.image_buffer::<u32>(words(image_bytes), "the image")?;
            match view.packed_bytes() {
                Some(bytes) => write_bytes(cl, &mut src, bytes)?,
                None => {
                    let mut packed = Vec::with_capacity(image_bytes);
                    for y in 0..height {
                        packed.extend_from_slice(view.row(y));
                    }
                    write_bytes(cl, &mut src, &packed)?;
                }
            }
            Some(src)
        }
    };
    let src = match (&staged, held) {
        (Some(buffer), _) => buffer,
        (None, Some(parts)) => &parts[0].buffer,
        (None, None) => return Err(Error::invalid("image", "no pixels", "an image")),
    };
    let mid = cl.image_buffer::<u32>(words(mid_len as usize), "the blur's intermediate")?;
    let dst_words = match to {
        BlurTo::Host(_) => words(image_bytes),
        BlurTo::Held => crate::device::held_words(width as u64 * height as u64, format),
    };
    let mut dst = cl.image_buffer::<u32>(dst_words, "the blurred image")?;
    if matches!(to, BlurTo::Held) {
        // The padding after the pixels is zeros (the kernels write the pixels' bytes only; the
        // word the last pixel ends in is zeroed before they run).
        let zeros = vec![0u32; dst_words - image_bytes / 4];
        cl.write(&mut dst, image_bytes / 4, &zeros)?;
    }
    let wg = cl.grid.wg;
    // Adjacent pixels a work-item of the horizontal pass takes: odd, so that the work-items'
    // local-memory reads fall in different banks.
    let vpi = if c == 1 { 9 } else { 3 };
    let seg = wg * vpi;
    let w = blur.radius;
    let tile = (seg + 2 * w as usize) * format.bytes_per_pixel();
    let local = (tile as u64) + 1024 <= cl.info.local_mem_bytes;
    let rows = cl.tuning.blur.typed_rows.unwrap_or(ROWS);
    if let Some(cap) = cl.quirks.loop_cap {
        // A driver that stops a work-item's loops after `cap` iterations (rusticl 22: about
        // 8,000 taps of RGB8 taps read from the row, counted over the loops a tap runs) would
        // leave taps out: such radii are refused (an automatic engine answers on the CPU).
        let per_tap = (vpi * c + c + 2).max(2 * rows as usize + 2) as u64;
        let iterations = (2 * w as u64 + rows as u64) * per_tap;
        if iterations > cap {
            return Err(cl.limit_error(
                BLUR_TYPED_H,
                "loop iterations a work-item (the driver stops longer loops)",
                iterations,
                cap,
            ));
        }
    }
    let defines = crate::ops::reduce::typed::variant(format)
        .with("BLUR_VPI", vpi as u32)
        .with("BLUR_ROWS", rows)
        .with("BLUR_H_LOCAL", local as u32);
    let common = |buf: &Buffer<u32>| {
        [
            Arg::buf(buf),
            Arg::U32(width),
            Arg::U32(height),
            Arg::buf(&*q),
            Arg::U32(w),
            Arg::U32(blur.border.code()),
        ]
    };
    let h_groups = height as usize * (width as usize).div_ceil(seg);
    let mut h_args = common(src).to_vec();
    h_args.extend([Arg::buf(&mid), Arg::Local(if local { tile } else { 4 })]);
    // Four adjacent values a work-item of the vertical pass where rows hold a multiple of 4.
    let vector = cl.tuning.blur.typed_vector.unwrap_or(4) == 4 && nvals.is_multiple_of(4);
    let (v_kernel, per_item) = match vector {
        true => (BLUR_TYPED_V4, 4),
        false => (BLUR_TYPED_V, 1),
    };
    let v_groups = (height as usize).div_ceil(rows as usize) * (nvals / per_item).div_ceil(wg);
    let mut v_args = common(&mid).to_vec();
    v_args.push(Arg::buf(&dst));
    let held_out = matches!(to, BlurTo::Held);
    let run = (|| {
        let h = cl.launch_variant(BLUR_TYPED_H, defines, &h_args, h_groups * wg, wg)?;
        let v = cl.launch_variant(v_kernel, defines, &v_args, v_groups * wg, wg)?;
        if let BlurTo::Host(out) = to {
            read_bytes(cl, &dst, out)?;
        }
        cl.finish(&[h, v])
    })();
    if let Some(src) = staged {
        cl.give_image_buffer(words(image_bytes), src);
    }
    cl.give_image_buffer(words(mid_len as usize), mid);
    match (run, held_out) {
        (Ok(()), true) => Ok(Some((dst, dst_words))),
        (run, _) => {
            cl.give_image_buffer(dst_words, dst);
            run.map(|()| None)
        }
    }
}
