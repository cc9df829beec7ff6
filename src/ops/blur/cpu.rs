//! The CPU path of the blur: the executable specification.

use super::*;

/// Channel values per block of the row loops (a few vector registers of u32 or f32).
pub(super) const BLK: usize = 64;

pub(super) mod kern {
    use super::BLK;
    use crate::cpu::multiversion;

    multiversion! {
        fn h_u8(pad: &[u8], q: &[u32], c: usize, out: &mut [u16]) -> () {
            // out[j] = (Σ_i q[i] · pad[j + c i] + 128) >> 8 (c channels a pixel), symmetric
            // weights paired.
            let w = q.len() / 2;
            let n = out.len();
            let mut j0 = 0;
            while j0 + BLK <= n {
                let mut acc = [0u32; BLK];
                let ctr: &[u8; BLK] = pad[j0 + c * w..j0 + c * w + BLK].try_into().unwrap_or(&[0; BLK]);
                let qc = q[w];
                for k in 0..BLK {
                    acc[k] = qc * ctr[k] as u32;
                }
                for d in 1..=w {
                    // A side weight is below 2^15 (checked in weights_fixed): with that bound
                    // known the compiler multiplies with 16-bit multiply-adds (about 3% of a
                    // w = 2 blur here).
                    let qd = q[w + d] & 0x7fff;
                    let a: &[u8; BLK] = pad[j0 + c * (w - d)..j0 + c * (w - d) + BLK].try_into().unwrap_or(&[0; BLK]);
                    let b: &[u8; BLK] = pad[j0 + c * (w + d)..j0 + c * (w + d) + BLK].try_into().unwrap_or(&[0; BLK]);
                    for k in 0..BLK {
                        acc[k] = acc[k].wrapping_add(qd * (a[k] as u32 + b[k] as u32));
                    }
                }
                if let Ok(o) = <&mut [u16; BLK]>::try_from(&mut out[j0..j0 + BLK]) {
                    for k in 0..BLK {
                        o[k] = (acc[k].wrapping_add(128) >> 8) as u16;
                    }
                }
                j0 += BLK;
                if j0 < n && n >= BLK && j0 + BLK > n {
                    // The last values as one block ending at n, overlapping the one before
                    // (same values written twice) rather than a scalar tail.
                    j0 = n - BLK;
                }
            }
            for j in j0..n {
                let mut acc = q[w] * pad[j + c * w] as u32;
                for d in 1..=w {
                    acc = acc.wrapping_add(
                        q[w + d].wrapping_mul(pad[j + c * (w - d)] as u32 + pad[j + c * (w + d)] as u32),
                    );
                }
                out[j] = (acc.wrapping_add(128) >> 8) as u16;
            }
        }
    }

    multiversion! {
        fn v_u8(rows: &[&[u16]], q: &[u32], out: &mut [u8]) -> () {
            // out[j] = (Σ_i q[i] · rows[i][j] + 2^23) >> 24, symmetric weights paired.
            let w = q.len() / 2;
            let n = out.len();
            let mut j0 = 0;
            while j0 + BLK <= n {
                let mut acc = [0u32; BLK];
                let c: &[u16; BLK] = rows[w][j0..j0 + BLK].try_into().unwrap_or(&[0; BLK]);
                let qc = q[w];
                for k in 0..BLK {
                    acc[k] = qc.wrapping_mul(c[k] as u32);
                }
                for d in 1..=w {
                    let qd = q[w + d];
                    let a: &[u16; BLK] = rows[w - d][j0..j0 + BLK].try_into().unwrap_or(&[0; BLK]);
                    let b: &[u16; BLK] = rows[w + d][j0..j0 + BLK].try_into().unwrap_or(&[0; BLK]);
                    for k in 0..BLK {
                        acc[k] = acc[k].wrapping_add(qd.wrapping_mul(a[k] as u32 + b[k] as u32));
                    }
                }
                if let Ok(o) = <&mut [u8; BLK]>::try_from(&mut out[j0..j0 + BLK]) {
                    for k in 0..BLK {
                        o[k] = (acc[k].wrapping_add(1 << 23) >> 24) as u8;
                    }
                }
                j0 += BLK;
                if j0 < n && n >= BLK && j0 + BLK > n {
                    // As in h_u8: an overlapping last block instead of a scalar tail.
                    j0 = n - BLK;
                }
            }
            for j in j0..n {
                let mut acc = q[w].wrapping_mul(rows[w][j] as u32);
                for d in 1..=w {
                    acc = acc.wrapping_add(
                        q[w + d].wrapping_mul(rows[w - d][j] as u32 + rows[w + d][j] as u32),
                    );
                }
                out[j] = (acc.wrapping_add(1 << 23) >> 24) as u8;
            }
        }
    }
}

/// A device buffer for a large result or intermediate. On a CPU device the buffer's memory is the host's:
/// mapped once before any kernel touches it and advised to use huge pages, which took the
/// page-fault time of a 64 MiB result on PoCL from about half the blur to a few percent.
pub(super) fn large_buffer<T>(
    cl: &Arc<ClEngine>,
    count: usize,
    what: &'static str,
) -> Result<opencl3::memory::Buffer<T>> {
    let buf = cl.buffer::<T>(count, what)?;
    if cl.grid.contiguous {
        cl.with_mapped(&buf, count, advise_huge_pages)?;
    }
    Ok(buf)
}

/// Fills `pad` with the pixels `x0 - w .. x1 + w` (`c` channels each) of `row` (`width`
/// pixels), those outside the row read through the border mode.
pub(super) fn pad_row<T: Copy + Default>(
    row: &[T],
    (width, c): (usize, usize),
    (x0, x1): (usize, usize),
    w: usize,
    border: Border,
    pad: &mut Vec<T>,
) {
    pad.clear();
    pad.resize((x1 - x0 + 2 * w) * c, T::default());
    let first = x0 as i64 - w as i64;
    // The part inside the row is one copy.
    let lo = first.max(0) as usize;
    let hi = (x1 + w).min(width);
    if lo < hi {
        let at = (lo as i64 - first) as usize * c;
        pad[at..at + (hi - lo) * c].copy_from_slice(&row[lo * c..hi * c]);
    }
    // The pixels before and after it, through the border mode.
    let total = x1 - x0 + 2 * w;
    let (copy_from, copy_to) = if lo < hi {
        ((lo as i64 - first) as usize, (hi as i64 - first) as usize)
    } else {
        (total, total)
    };
    let edges = (0..copy_from.min(total)).chain(copy_to..total);
    for k in edges {
        let dst = &mut pad[c * k..c * k + c];
        match border.map(first + k as i64, width as u64) {
            Some(s) => {
                let s = s as usize * c;
                dst.copy_from_slice(&row[s..s + c]);
            }
            None => dst.fill(T::default()),
        }
    }
}

/// The horizontal pass of pixels `x0..x1` of one row into `dst` (`c (x1 - x0)` values), with
/// `h(input, dst)` filtering `input` (the pixels and their `w`-pixel halo on each side): the
/// part whose halo lies inside the row is read in place, and only the pixels within `w` of an
/// edge go through a padded copy (copying whole edge strips had cost 9% of a w = 2 blur).
#[allow(clippy::too_many_arguments)]
pub(super) fn h_row<T: Copy + Default, O>(
    row: &[T],
    (width, c): (usize, usize),
    (x0, x1): (usize, usize),
    w: usize,
    border: Border,
    pad: &mut Vec<T>,
    dst: &mut [O],
    h: impl Fn(&[T], &mut [O]),
) {
    let (a, b) = (x0.max(w), x1.min(width.saturating_sub(w)));
    if a >= b {
        pad_row(row, (width, c), (x0, x1), w, border, pad);
        h(pad, dst);
        return;
    }
    let (left, rest) = dst.split_at_mut(c * (a - x0));
    let (middle, right) = rest.split_at_mut(c * (b - a));
    if a > x0 {
        pad_row(row, (width, c), (x0, a), w, border, pad);
        h(pad, left);
    }
    h(&row[c * (a - w)..c * (b + w)], middle);
    if x1 > b {
        pad_row(row, (width, c), (b, x1), w, border, pad);
        h(pad, right);
    }
}

/// Bytes the ring of 2w + 1 filtered rows of one band may take: half of this machine's 1 MiB
/// L2 cache a core, so that the ring stays there. A column strip is as wide as the ring allows.
pub(super) const RING_BYTES: usize = 512 * 1024;

/// Ring rows start an odd multiple of this many values apart (a row rounded up to a multiple of
/// twice it, plus it), so that they are never a power of two bytes apart (they would share the
/// cache's sets).
pub(super) const RING_PAD: usize = 32;

/// Pixels per column strip of the ring path at `taps` rows of `size`-byte values. Measured here
/// (2-core EPYC, 4096², three alternating rounds, median ms), against strips of 1024 pixels
/// with ring rows 8 KiB apart: w = 2 16.6–17.5 / 17.8–23.7, w = 8 31.6–32.4 / 34.6–41.0,
/// w = 25 67–82 / 120–138.
pub(super) fn strip_pixels(taps: usize, size: usize, (width, c): (usize, usize)) -> usize {
    (RING_BYTES / (taps * c * size)).max(64).min(width)
}

/// The two-pass blur over rows, generic in the intermediate `T` and output `O` element types.
///
/// `hfun(src_row, (x0, x1), scratch, out)` fills the intermediate values of pixels `x0..x1`
/// (`c (x1 - x0)` values, `c` channels a pixel) of source row `src_row`; `vfun(rows, out)` combines `2w + 1`
/// intermediate row pieces into output values, and `vfun2(rows, out0, out1)` two adjacent output
/// rows from `2w + 2` pieces (`out0` from the first `2w + 1`, `out1` from the last). Rows outside
/// the image come from the border mode (rows of `zero`, the intermediate form of a zero row, for
/// [`Border::Zero`]).
#[allow(clippy::too_many_arguments)]
pub(super) fn two_pass<T, P, O, H, V, V2>(
    (width, c): (usize, usize),
    height: usize,
    w: usize,
    border: Border,
    zero: T,
    out: &mut [O],
    hfun: H,
    (vfun, vfun2): (V, V2),
) where
    T: Copy + Default + Send + Sync + bytemuck::Zeroable,
    P: Send,
    O: Send,
    H: Fn(usize, (usize, usize), &mut Vec<P>, &mut [T]) + Sync,
    V: Fn(&[&[T]], &mut [O]) + Sync,
    V2: Fn(&[&[T]], &mut [O], &mut [O]) + Sync,
{
    let n = c * width;
    if n == 0 || height == 0 {
        return;
    }
    let taps = 2 * w + 1;
    let zero_row = vec![zero; n];
    let threads = rayon::current_num_threads().max(1);
    // About four bands a thread, but at least 8w rows (the halo costs at most a quarter) while
    // every thread still gets a band.
    let band = height
        .div_ceil(4 * threads)
        .max((8 * w).min(height.div_ceil(threads)))
        .max(16);
    let map_row = |v: i64| border.map(v, height as u64).map(|r| r as usize);
    if 2 * w > band || band >= height {
        // The halo would cost more than the band: compute every intermediate row once.
        let mut t = alloc_zeroed::<T>(n * height);
        t.par_chunks_mut(n)
            .enumerate()
            .for_each_init(Vec::new, |scratch, (y, row)| {
                hfun(y, (0, width), scratch, row)
            });
        out.par_chunks_mut(n).enumerate().for_each_init(
            || Vec::with_capacity(taps),
            |rows: &mut Vec<&[T]>, (y, o)| {
                rows.clear();
                for i in 0..taps {
                    rows.push(match map_row(y as i64 + i as i64 - w as i64) {
                        Some(r) => &t[r * n..(r + 1) * n],
                        None => &zero_row,
                    });
                }
                vfun(rows, o);
                rows.clear();
            },
        );
        return;
    }
    // Bands of rows in parallel; in each, column strips one after the other, each with a ring
    // of 2w + 2 intermediate rows (output rows are made two at a time).
    let slots = taps + 1;
    out.par_chunks_mut(band * n)
        .enumerate()
        .for_each(|(b, chunk)| {
            let y0 = b * band;
            let rows_here = chunk.len() / n;
            let sw = strip_pixels(slots, std::mem::size_of::<T>(), (width, c));
            let ms = (c * sw).div_ceil(2 * RING_PAD) * 2 * RING_PAD + RING_PAD;
            // Ring rows start on a cache line (`ms` is a multiple of 64 bytes for every `T`), so
            // that no vector load of the vertical pass straddles two lines.
            let mut ring_store = vec![zero; slots * ms + 64 / std::mem::size_of::<T>()];
            let lead = ring_store
                .as_ptr()
                .align_offset(64)
                .min(ring_store.len() - slots * ms);
            let ring = &mut ring_store[lead..lead + slots * ms];
            let mut scratch = Vec::new();
            let first = y0 as i64 - w as i64;
            let mut x0 = 0;
            while x0 < width {
                let x1 = (x0 + sw).min(width);
                let m = c * (x1 - x0);
                let mut fill = |ring: &mut [T], v: i64| {
                    let slot = (v - first) as usize % slots;
                    let dst = &mut ring[slot * ms..slot * ms + m];
                    match map_row(v) {
                        Some(r) => hfun(r, (x0, x1), &mut scratch, dst),
                        None => dst.fill(zero),
                    }
                };
                for v in first..(y0 as i64 + w as i64) {
                    fill(ring, v);
                }
                for k in (0..rows_here).step_by(2) {
                    let y = (y0 + k) as i64;
                    let pair = k + 1 < rows_here;
                    fill(ring, y + w as i64);
                    if pair {
                        fill(ring, y + w as i64 + 1);
                    }
                    // Row y - w + i sits in slot (k + i) % slots.
                    let rows: Vec<&[T]> = (0..taps + pair as usize)
                        .map(|i| {
                            let slot = (k + i) % slots;
                            &ring[slot * ms..slot * ms + m]
                        })
                        .collect();
                    let (o0, rest) = chunk[k * n..].split_at_mut(n);
                    let o0 = &mut o0[c * x0..c * x1];
                    match rest.get_mut(c * x0..c * x1) {
                        Some(o1) if pair => vfun2(&rows, o0, o1),
                        _ => vfun(&rows, o0),
                    }
                }
                x0 = x1;
            }
        });
}

pub(super) fn cpu_blur_u8(
    view: &crate::image::ImageView<'_>,
    blur: &GaussianBlur,
) -> Result<RgbaImage> {
    let (width, height) = (view.width(), view.height());
    if width == 0 || height == 0 {
        return Ok(RgbaImage::new(width, height));
    }
    if blur.radius == 0 {
        blur.check()?;
        return Ok(view.to_image());
    }
    fresh_result((width, height), |out| cpu_blur_u8_into(view, blur, out))
}

/// The RGBA8 blur of `view` into `out` (`4 × width × height` bytes, rows packed).
pub(super) fn cpu_blur_u8_into(
    view: &crate::image::ImageView<'_>,
    blur: &GaussianBlur,
    out: &mut [u8],
) -> Result<()> {
    let (width, height) = (view.width(), view.height());
    if width == 0 || height == 0 {
        return Ok(());
    }
    if blur.radius == 0 {
        blur.check()?;
        for (y, row) in out.chunks_exact_mut(4 * width as usize).enumerate() {
            row.copy_from_slice(view.row(y as u32));
        }
        return Ok(());
    }
    let q = blur.weights_fixed()?;
    let w = blur.radius as usize;
    let (wu, hu) = (width as usize, height as usize);
    let h_row_of =
        |y: usize, xs, pad: &mut Vec<u8>, dst: &mut [u16], h: &dyn Fn(&[u8], &mut [u16])| {
            h_row(view.row(y as u32), (wu, 4), xs, w, blur.border, pad, dst, h)
        };
    match super::cpu_simd::U8Passes::new(&q) {
        // Half the vector instructions where the CPU has AVX-512 VBMI and VNNI (the same sums).
        Some(fast) => two_pass::<u16, u8, u8, _, _, _>(
            (wu, 4),
            hu,
            w,
            blur.border,
            super::cpu_vnni::BIAS,
            out,
            |y, xs, pad, dst| h_row_of(y, xs, pad, dst, &|i, o| fast.h(i, o)),
            (
                |rows: &[&[u16]], o: &mut [u8]| fast.v(rows, o),
                |rows: &[&[u16]], o0: &mut [u8], o1: &mut [u8]| {
                    fast.v(&rows[..2 * w + 1], o0);
                    fast.v(&rows[1..], o1);
                },
            ),
        ),
        None => two_pass::<u16, u8, u8, _, _, _>(
            (wu, 4),
            hu,
            w,
            blur.border,
            0,
            out,
            |y, xs, pad, dst| h_row_of(y, xs, pad, dst, &|i, o| kern::h_u8(i, &q, 4, o)),
            (
                |rows: &[&[u16]], o: &mut [u8]| kern::v_u8(rows, &q, o),
                |rows: &[&[u16]], o0: &mut [u8], o1: &mut [u8]| {
                    kern::v_u8(&rows[..2 * w + 1], &q, o0);
                    kern::v_u8(&rows[1..], &q, o1);
                },
            ),
        ),
    }
    Ok(())
}

/// The f32 blur of `img` as a new image.
pub(super) fn cpu_blur_f32(img: &F32View<'_>, blur: &GaussianBlur) -> Result<Rgba32FImage> {
    fresh_result(img.dimensions(), |out| cpu_blur_f32_into(img, blur, out))
}

/// The f32 blur of `img` into `out` (`4 × width × height` values).
pub(super) fn cpu_blur_f32_into(
    img: &F32View<'_>,
    blur: &GaussianBlur,
    out: &mut [f32],
) -> Result<()> {
    let (width, height) = img.dimensions();
    if blur.radius == 0 {
        out.copy_from_slice(img.as_raw());
        return Ok(());
    }
    let wt = blur.weights_f32()?;
    let w = blur.radius as usize;
    let n = width as usize * 4;
    let src = img.as_raw();
    // The f32 pad holds f32; `two_pass` hands a Vec<T> scratch of the intermediate type.
    two_pass::<f32, f32, f32, _, _, _>(
        (width as usize, 4),
        height as usize,
        w,
        blur.border,
        0.0,
        out,
        |y, xs, pad: &mut Vec<f32>, dst| {
            let row = &src[y * n..(y + 1) * n];
            h_row(
                row,
                (width as usize, 4),
                xs,
                w,
                blur.border,
                pad,
                dst,
                |i, o| super::cpu_f32::h_f32(i, &wt, 4, o),
            );
        },
        (
            |rows: &[&[f32]], o: &mut [f32]| super::cpu_f32::v_f32(rows, &wt, o),
            |rows: &[&[f32]], o0: &mut [f32], o1: &mut [f32]| {
                super::cpu_f32::v2_f32(rows, &wt, o0, o1)
            },
        ),
    );
    Ok(())
}
