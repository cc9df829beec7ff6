//! The reductions of every format but RGBA8 (which keeps its tuned path): the CPU path, the
//! launchers of `typed.cl`, and the call that picks one.
//!
//! Scores (as in `typed.cl`): a pixel's score is 0 when it has no key (NaN), else `k + 1` for
//! an integer key `k` (`max_key + 1 − k` for the darkest), or the f32 key's order key (its
//! complement for the darkest). The largest score wins, the first in scan order among equal.

use super::cl::group_partials;
use super::exact::ExactSum;
use super::kernels::{TYPED_ARGBEST, TYPED_FSTATS, TYPED_STATS};
use super::typed_family::family;
use crate::cpu::PIECE;
use crate::device::RawSource;
use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::image::{RawView, check_pixel_count};
use crate::opencl::{Arg, ClEngine, Defines, ScratchKind};
use crate::spec::{Extreme, Format, RawHit, RawStats, order_of_f32, rgba_f32_key};
use rayon::prelude::*;
use std::sync::Arc;

/// u64 words a group of `typed_fstats` writes.
const FSTATS_WORDS: usize = 4 + super::exact::BINS;
/// Pixels a group of `typed_fstats` may see (its 12-bit halves in 32-bit sums).
const FSTATS_GROUP_MAX: usize = 1 << 19;

/// `CLPIX_FORMAT` of a format (RGBA8 has none: reduce.cl).
pub(crate) fn variant(format: Format) -> Defines {
    let code = match format {
        Format::Luma8 => 0,
        Format::Luma16 => 1,
        Format::LumaF32 => 2,
        Format::Rgb8 => 3,
        Format::Rgba8 => 4,
        Format::Rgba16 => 5,
        Format::RgbaF32 => 6,
    };
    Defines::NONE.with("CLPIX_FORMAT", code)
}

/// Bytes the kernels read at once (`typed.cl`'s chunks).
pub(crate) fn chunk_bytes(format: Format) -> usize {
    if format == Format::Rgb8 { 48 } else { 16 }
}

fn check_nonempty(op: &'static str, v: &RawSource<'_>) -> Result<()> {
    check_pixel_count(v.width(), v.height())?;
    if v.pixel_count() == 0 {
        return Err(Error::EmptyImage {
            operation: op,
            width: v.width(),
            height: v.height(),
        });
    }
    Ok(())
}

/// The score of an order key (`None`: no key).
#[inline(always)]
fn score(format: Format, key: Option<u32>, flip: bool) -> u32 {
    match (key, format.max_key()) {
        (None, _) => 0,
        (Some(k), Some(max)) => {
            if flip {
                max + 1 - k
            } else {
                k + 1
            }
        }
        (Some(o), None) => {
            if flip {
                !o
            } else {
                o
            }
        }
    }
}

/// The order key of a score (> 0).
fn key_of_score(format: Format, s: u32, flip: bool) -> u32 {
    match format.max_key() {
        Some(max) => {
            if flip {
                max + 1 - s
            } else {
                s - 1
            }
        }
        None => {
            if flip {
                !s
            } else {
                s
            }
        }
    }
}

/// Pixels a block of the CPU path: scores in a stack buffer, then their maximum.
const BLOCK: usize = 512;

// Fills `out` with the scores of the pixels in `bytes` (whole pixels; as many as `out`).
crate::cpu::multiversion! {
fn fill_scores(format: Format, bytes: &[u8], flip: bool, out: &mut [u32]) -> () {
    let bpp = format.bytes_per_pixel();
    macro_rules! each {
        ($ty:ty, $n:expr, |$c:ident| $key:expr) => {
            match bytemuck::try_cast_slice::<u8, $ty>(bytes) {
                Ok(v) => {
                    for (o, $c) in out.iter_mut().zip(v.chunks_exact($n)) {
                        *o = score(format, $key, flip);
                    }
                    return;
                }
                Err(_) => {}
            }
        };
    }
    match format {
        Format::Luma8 => {
            for (o, &b) in out.iter_mut().zip(bytes) {
                *o = if flip { 256 - b as u32 } else { b as u32 + 1 };
            }
            return;
        }
        Format::Luma16 => {
            if let Ok(v) = bytemuck::try_cast_slice::<u8, u16>(bytes) {
                for (o, &k) in out.iter_mut().zip(v) {
                    *o = if flip { 65536 - k as u32 } else { k as u32 + 1 };
                }
                return;
            }
        }
        Format::LumaF32 => each!(f32, 1, |c| order_of_f32(c[0])),
        Format::Rgba16 => each!(u16, 4, |c| Some(
            (21 * c[0] as u32 + 72 * c[1] as u32 + 7 * c[2] as u32) / 100
        )),
        Format::RgbaF32 => each!(f32, 4, |c| order_of_f32(rgba_f32_key(c[0], c[1], c[2]))),
        Format::Rgb8 => {
            for (o, c) in out.iter_mut().zip(bytes.chunks_exact(3)) {
                let l = (1023 * (21 * c[0] as u32 + 72 * c[1] as u32 + 7 * c[2] as u32)) / 25500;
                *o = if flip { 1024 - l } else { l + 1 };
            }
            return;
        }
        Format::Rgba8 => {}
    }
    // Any format at any alignment, pixel by pixel.
    for (o, px) in out.iter_mut().zip(bytes.chunks_exact(bpp)) {
        *o = score(format, format.order_key(px), flip);
    }
}
}

/// The best score of a block of mono8 or mono16 pixels, from the values' maximum (minimum for
/// the darkest: a loop the compiler vectorises), and its first position where it beats `than`;
/// `None` for the other formats (or a misaligned block).
#[inline]
fn mono_best(format: Format, block: &[u8], flip: bool, than: u32) -> Option<(u32, usize)> {
    fn best<T: Copy + Ord + Into<u32>>(v: &[T], flip: bool, max: u32, than: u32) -> (u32, usize) {
        let m = match flip {
            true => v.iter().copied().min(),
            false => v.iter().copied().max(),
        };
        let Some(m) = m else { return (0, 0) };
        let k: u32 = m.into();
        let score = if flip { max + 1 - k } else { k + 1 };
        match score > than {
            true => (score, v.iter().position(|&x| x == m).unwrap_or(0)),
            false => (score, 0),
        }
    }
    match format {
        Format::Luma8 => Some(best(block, flip, 255, than)),
        Format::Luma16 => bytemuck::try_cast_slice::<u8, u16>(block)
            .ok()
            .map(|v| best(v, flip, 65535, than)),
        _ => None,
    }
}

// Sum, minimum and maximum of a block of at most 512 mono8 or mono16 values (the sum fits a
// u32); `None` for the other formats (or a misaligned block).
crate::cpu::multiversion! {
fn mono_stats(format: Format, block: &[u8]) -> Option<(u32, u32, u32)> {
    fn st<T: Copy + Into<u32>>(v: &[T]) -> (u32, u32, u32) {
        let (mut s, mut lo, mut hi) = (0u32, u32::MAX, 0u32);
        for &x in v {
            let x: u32 = x.into();
            s += x;
            lo = lo.min(x);
            hi = hi.max(x);
        }
        (s, lo, hi)
    }
    match format {
        Format::Luma8 => Some(st(block)),
        Format::Luma16 => bytemuck::try_cast_slice::<u8, u16>(block).ok().map(st),
        _ => None,
    }
}
}

/// Calls `f(first pixel index, bytes)` for runs of whole pixels of `view` in parallel and
/// combines: packed images in equal pieces, padded ones row by row.
fn map_pieces<R: Send>(
    view: &RawView<'_>,
    f: impl Fn(u64, &[u8]) -> R + Sync + Send,
    combine: impl Fn(R, R) -> R + Sync + Send,
) -> Option<R> {
    let bpp = view.format.bytes_per_pixel();
    if let Some(bytes) = view.packed_bytes() {
        return bytes
            .par_chunks(PIECE * bpp)
            .enumerate()
            .map(|(i, c)| f((i * PIECE) as u64, c))
            .reduce_with(&combine);
    }
    let w = view.width as u64;
    (0..view.height)
        .into_par_iter()
        .filter_map(|y| {
            view.row(y)
                .chunks(PIECE * bpp)
                .enumerate()
                .map(|(i, c)| f(y as u64 * w + (i * PIECE) as u64, c))
                .reduce(&combine)
        })
        .reduce_with(&combine)
}

/// The best (score, index) of `view` on the CPU: `None` when no pixel has a key.
fn cpu_argbest(view: &RawView<'_>, flip: bool) -> Option<(u32, u64)> {
    let (format, bpp) = (view.format, view.format.bytes_per_pixel());
    let best = |a: (u32, u64), b: (u32, u64)| {
        if (b.0, std::cmp::Reverse(b.1)) > (a.0, std::cmp::Reverse(a.1)) {
            b
        } else {
            a
        }
    };
    let found = map_pieces(
        view,
        |base, bytes| {
            let mut scores = [0u32; BLOCK];
            let mut found = (0u32, u64::MAX);
            for (k, block) in bytes.chunks(BLOCK * bpp).enumerate() {
                let (m, j) = match mono_best(format, block, flip, found.0) {
                    Some(best) => best,
                    None => {
                        let s = &mut scores[..block.len() / bpp];
                        fill_scores(format, block, flip, s);
                        let m = s.iter().copied().max().unwrap_or(0);
                        (m, s.iter().position(|&x| x == m).unwrap_or(0))
                    }
                };
                if m > found.0 {
                    found = (m, base + (k * BLOCK + j) as u64);
                }
            }
            found
        },
        best,
    )?;
    (found.0 > 0).then_some(found)
}

/// Integer keys: (sum, min, max); f32 keys: the exact sum, count, min and max order keys.
#[derive(Debug, Clone, Default)]
struct KeyStats {
    sum: u64,
    exact: Option<Box<ExactSum>>,
    count: u64,
    min: u32,
    max: u32,
}

impl KeyStats {
    fn none() -> KeyStats {
        KeyStats {
            min: u32::MAX,
            ..Default::default()
        }
    }
    fn merge(mut a: KeyStats, b: KeyStats) -> KeyStats {
        a.sum += b.sum;
        a.count += b.count;
        a.min = a.min.min(b.min);
        a.max = a.max.max(b.max);
        a.exact = match (a.exact, b.exact) {
            (Some(mut x), Some(y)) => {
                x.merge(&y);
                Some(x)
            }
            (x, y) => x.or(y),
        };
        a
    }
    fn into_raw(self) -> RawStats {
        RawStats {
            sum: self.exact.map_or(self.sum as f64, |e| e.to_f64()),
            int_sum: self.sum,
            count: self.count,
            min: self.min,
            max: self.max,
        }
    }
}

fn cpu_stats(view: &RawView<'_>) -> KeyStats {
    let (format, bpp) = (view.format, view.format.bytes_per_pixel());
    map_pieces(
        view,
        |_, bytes| {
            let mut scores = [0u32; BLOCK];
            let mut st = KeyStats::none();
            let float = format.is_float();
            if float {
                st.exact = Some(Box::default());
            }
            for block in bytes.chunks(BLOCK * bpp) {
                if let Some((sum, lo, hi)) = mono_stats(format, block) {
                    st.sum += sum as u64;
                    st.count += (block.len() / bpp) as u64;
                    st.min = st.min.min(lo);
                    st.max = st.max.max(hi);
                    continue;
                }
                let s = &mut scores[..block.len() / bpp];
                fill_scores(format, block, false, s);
                if !float {
                    // Scores are k + 1: the sum of 512 keys of 65535 fits a u32.
                    let (mut sum, mut lo, mut hi) = (0u32, u32::MAX, 0u32);
                    for &x in s.iter() {
                        sum += x - 1;
                        lo = lo.min(x);
                        hi = hi.max(x);
                    }
                    st.sum += sum as u64;
                    st.count += s.len() as u64;
                    st.min = st.min.min(lo - 1);
                    st.max = st.max.max(hi - 1);
                } else if let Some(exact) = st.exact.as_mut() {
                    for &o in s.iter().filter(|&&o| o != 0) {
                        st.count += 1;
                        st.min = st.min.min(o);
                        st.max = st.max.max(o);
                        exact.add_bits(crate::spec::f32_of_order(o).to_bits());
                    }
                }
            }
            st
        },
        KeyStats::merge,
    )
    .unwrap_or_else(KeyStats::none)
}

impl Engine {
    /// The brightest or darkest pixel of a view of any format but RGBA8.
    pub(crate) fn typed_extreme(&self, src: RawSource<'_>, extreme: Extreme) -> Result<RawHit> {
        check_nonempty(extreme.name(), &src)?;
        let flip = extreme == Extreme::Darkest;
        let format = src.format();
        let on_cpu = || Ok(cpu_argbest(&src.host()?.raw(), flip));
        let found = self.dispatch(
            family(format),
            &format,
            extreme.name(),
            src.pixel_count(),
            on_cpu,
            |cl| match device_computes(cl, format) {
                true => cl_argbest(cl, &src, flip),
                false => on_cpu(),
            },
        )?;
        let (s, index) = found.ok_or(Error::EmptyImage {
            operation: extreme.name(),
            width: src.width(),
            height: src.height(),
        })?;
        let width = src.width() as u64;
        Ok(RawHit {
            x: (index % width) as u32,
            y: (index / width) as u32,
            key: key_of_score(format, s, flip),
            // The pixel's bytes where they are (one read of a held image).
            value: src.pixel_bytes(index)?,
        })
    }

    /// The statistics of the keys of a view of any format but RGBA8.
    pub(crate) fn typed_stats(&self, src: RawSource<'_>) -> Result<RawStats> {
        check_nonempty("luminance_stats", &src)?;
        let format = src.format();
        let on_cpu = || Ok(cpu_stats(&src.host()?.raw()));
        let st = self.dispatch(
            family(format),
            &format,
            "luminance_stats",
            src.pixel_count(),
            on_cpu,
            |cl| match device_computes(cl, format) {
                true => cl_stats(cl, &src),
                false => on_cpu(),
            },
        )?;
        if st.count == 0 {
            return Err(Error::EmptyImage {
                operation: "luminance_stats (every key is NaN)",
                width: src.width(),
                height: src.height(),
            });
        }
        Ok(st.into_raw())
    }
}

/// Whether the device computes this format's keys as the CPU does: RGBA f32 keys are
/// arithmetic, which a device that flushes f32 denormals would round otherwise.
fn device_computes(cl: &ClEngine, format: Format) -> bool {
    format != Format::RgbaF32 || cl.info.f32_denormals
}

/// Work-groups of `typed_fstats` over `n` pixels: the streaming grid, and enough that none sees
/// more than `FSTATS_GROUP_MAX` pixels.
fn fstats_groups(cl: &ClEngine, n: usize) -> usize {
    super::cl::groups_for(cl, n).max(n.div_ceil(FSTATS_GROUP_MAX))
}

fn cl_argbest(cl: &Arc<ClEngine>, src: &RawSource<'_>, flip: bool) -> Result<Option<(u32, u64)>> {
    let (format, width) = (src.format(), src.width());
    let mut best: Option<(u32, u64)> = None;
    let mut events = Vec::new();
    cl.for_each_source_part(src, chunk_bytes(format), |buf, range| {
        let n = range.pixels();
        let args = [Arg::buf(buf), Arg::U32(n as u32), Arg::U32(flip as u32)];
        let host = group_partials(
            cl,
            (TYPED_ARGBEST, variant(format)),
            &args,
            n,
            1,
            &mut events,
        )?;
        let base = range.first_pixel(width);
        for &k in host.iter().filter(|&&k| k != 0) {
            let found = ((k >> 32) as u32, base + !(k as u32) as u64);
            best = Some(match best {
                Some(b)
                    if (b.0, std::cmp::Reverse(b.1)) >= (found.0, std::cmp::Reverse(found.1)) =>
                {
                    b
                }
                _ => found,
            });
        }
        Ok(())
    })?;
    cl.finish(&events)?;
    Ok(best)
}

fn cl_stats(cl: &Arc<ClEngine>, src: &RawSource<'_>) -> Result<KeyStats> {
    let format = src.format();
    let float = format.is_float();
    let mut st = KeyStats::none();
    if float {
        st.exact = Some(Box::default());
    }
    let mut events = Vec::new();
    cl.for_each_source_part(src, chunk_bytes(format), |buf, range| {
        let n = range.pixels();
        if !float {
            let args = [Arg::buf(buf), Arg::U32(n as u32)];
            let host =
                group_partials(cl, (TYPED_STATS, variant(format)), &args, n, 2, &mut events)?;
            for p in host.chunks_exact(2) {
                st.sum += p[0];
                st.min = st.min.min((p[1] >> 32) as u32);
                st.max = st.max.max(p[1] as u32);
            }
            st.count += n as u64;
            return Ok(());
        }
        let g = fstats_groups(cl, n);
        let mut host = vec![0u64; FSTATS_WORDS * g];
        let partials = cl.scratch(ScratchKind::GroupPartials, 2 * host.len())?;
        let args = [Arg::buf(buf), Arg::U32(n as u32), Arg::buf(&partials)];
        events.push(cl.launch_variant(
            TYPED_FSTATS,
            variant(format),
            &args,
            g * cl.grid.wg,
            cl.grid.wg,
        )?);
        // The kernel's ulongs, read as the u32 words of the scratch buffer's type.
        cl.read(
            &partials,
            0,
            bytemuck::cast_slice_mut::<u64, u32>(&mut host),
        )?;
        drop(partials);
        for p in host.chunks_exact(FSTATS_WORDS) {
            st.count += p[0];
            st.min = st.min.min((p[3] >> 32) as u32);
            st.max = st.max.max(p[3] as u32);
            if let Some(exact) = st.exact.as_mut() {
                exact.pos_inf += p[1];
                exact.neg_inf += p[2];
                for (b, &v) in exact.bins.iter_mut().zip(&p[4..]) {
                    *b += v as i64;
                }
            }
        }
        Ok(())
    })?;
    cl.finish(&events)?;
    Ok(st)
}
