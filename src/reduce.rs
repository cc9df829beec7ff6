//! Reductions: the brightest and darkest pixel, and luminance statistics.
//!
//! # Specification
//! - **brightest**: the pixel with the largest [luminance](crate::luminance); among equal
//!   luminance the smallest scan index (`y * width + x`) wins.
//! - **darkest**: the pixel with the smallest luminance; ties likewise.
//! - **luminance stats**: the sum of L over all pixels (u64), the count, the mean (sum / count
//!   as f64), the minimum and maximum.
//! - An image with no pixels has no brightest or darkest pixel and no statistics: an error.
//! - **array stats** of u32 values: the count, the exact sum (u64: no wrap for up to
//!   `u32::MAX` elements, the most an array may hold), the minimum and maximum, and the index
//!   of the first occurrence of each. An empty array has none: an error.
//!
//! # Method
//! The CPU path splits the image into pieces for rayon; in each piece it takes the maximum of
//! the weighted sums `21 r + 72 g + 7 b` over blocks of pixels (a loop the compiler vectorises)
//! and looks for the index only when a block improves on the best so far. The OpenCL kernels
//! (`cl/reduce.cl`) do the same per work-item and reduce each work-group in local memory; the
//! host combines one partial per group. Keys `(L << 32) | !index` make "largest luminance,
//! then smallest index" a plain maximum.
//!
//! Array stats work the same way: blocks of 512 elements give their sum, minimum and maximum
//! (a vectorised loop), and a block is searched for the first index of its minimum (maximum)
//! only when it beats the one so far. The kernel `u32_stats` writes a sum and the keys
//! `(min << 32) | index` and `(max << 32) | !index` per group.

use crate::compact::{check_array_len, u32_arg, DeviceArray};
use crate::cpu::{map_pieces, with_u32_blocks, PIECE};
use crate::engine::{Backend, Engine, HostPixels};
use crate::error::{Error, Result};
use crate::image::{check_pixel_count, ImageInput};
use crate::opencl::{Arg, ClEngine};
use opencl3::memory::Buffer;
use rayon::prelude::*;
use std::sync::Arc;

/// One pixel found by an operation: its position, luminance and colour.
///
/// ```
/// let img = image::RgbaImage::from_fn(3, 2, |x, y| image::Rgba([(x * 50 + y * 10) as u8, 0, 0, 255]));
/// let hit = clpix::Engine::cpu().brightest(&img)?;
/// assert_eq!((hit.x, hit.y, hit.rgba), (2, 1, [110, 0, 0, 255]));
/// assert_eq!(hit.luminance, clpix::luminance(110, 0, 0));
/// # Ok::<(), clpix::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
// C layout (x, y, luminance, rgba, 2 bytes of padding): CPU OpenCL devices write hits whole.
#[repr(C)]
pub struct PixelHit {
    /// Column.
    pub x: u32,
    /// Row.
    pub y: u32,
    /// Luminance, 0..=1023.
    pub luminance: u16,
    /// The pixel's RGBA.
    pub rgba: [u8; 4],
}

/// Luminance statistics of an image.
///
/// ```
/// let img = image::RgbaImage::from_pixel(4, 4, image::Rgba([255, 255, 255, 0]));
/// let s = clpix::Engine::cpu().luminance_stats(&img)?;
/// assert_eq!((s.sum, s.count, s.min, s.max), (16 * 1023, 16, 1023, 1023));
/// assert_eq!(s.mean, 1023.0);
/// # Ok::<(), clpix::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LuminanceStats {
    /// Sum of the luminance of every pixel.
    pub sum: u64,
    /// Number of pixels.
    pub count: u64,
    /// `sum / count`.
    pub mean: f64,
    /// Smallest luminance.
    pub min: u16,
    /// Largest luminance.
    pub max: u16,
}

/// Statistics of a u32 array: count, exact sum, minimum and maximum with the index of the
/// first occurrence of each. Made by [`Engine::array_stats`] and [`Engine::array_stats_device`].
///
/// ```
/// let s = clpix::Engine::cpu().array_stats(&[4, 1, 9, 1, 9])?;
/// assert_eq!((s.count, s.sum), (5, 24));
/// assert_eq!((s.min, s.argmin, s.max, s.argmax), (1, 1, 9, 2));
/// # Ok::<(), clpix::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ArrayStats {
    /// Number of elements.
    pub count: u64,
    /// Sum of the elements, exact (no wrap).
    pub sum: u64,
    /// Smallest element.
    pub min: u32,
    /// Largest element.
    pub max: u32,
    /// Index of the first element equal to `min`.
    pub argmin: u64,
    /// Index of the first element equal to `max`.
    pub argmax: u64,
}

/// Which end of the luminance range an arg-reduction looks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Extreme {
    Brightest,
    Darkest,
}

impl Extreme {
    fn flip(self) -> u32 {
        match self {
            Extreme::Brightest => 0,
            Extreme::Darkest => 1,
        }
    }
    fn name(self) -> &'static str {
        match self {
            Extreme::Brightest => "brightest",
            Extreme::Darkest => "darkest",
        }
    }
}

/// The best pixel so far: `key = (L' << 32) | !index` (L' = L, or 1023 - L for the darkest),
/// so that the largest key wins; indices are u64 across parts and combined the same way.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Best {
    l: u32,
    /// `u64::MAX - index`: larger is earlier.
    rev_index: u64,
    rgba: u32,
}

impl Best {
    fn new(l: u32, index: u64, rgba: u32) -> Best {
        Best {
            l,
            rev_index: u64::MAX - index,
            rgba,
        }
    }
    fn index(&self) -> u64 {
        u64::MAX - self.rev_index
    }
    fn max(a: Best, b: Best) -> Best {
        a.max(b)
    }
    fn into_hit(self, width: u32, extreme: Extreme) -> PixelHit {
        let i = self.index();
        let l = match extreme {
            Extreme::Brightest => self.l,
            Extreme::Darkest => 1023 - self.l,
        };
        PixelHit {
            x: (i % width as u64) as u32,
            y: (i / width as u64) as u32,
            luminance: l as u16,
            rgba: self.rgba.to_le_bytes(),
        }
    }
}

fn check_nonempty(op: &'static str, input: &ImageInput<'_>) -> Result<()> {
    check_pixel_count(input.width(), input.height())?;
    if input.pixel_count() == 0 {
        return Err(Error::EmptyImage {
            operation: op,
            width: input.width(),
            height: input.height(),
        });
    }
    Ok(())
}

impl Engine {
    /// The brightest pixel: largest luminance, smallest scan index among ties.
    ///
    /// An error for an image without pixels.
    ///
    /// ```
    /// let mut img = image::RgbaImage::new(100, 80);
    /// img.put_pixel(42, 17, image::Rgba([255, 255, 255, 255]));
    /// let hit = clpix::Engine::new()?.brightest(&img)?;
    /// assert_eq!((hit.x, hit.y, hit.luminance), (42, 17, 1023));
    /// # Ok::<(), clpix::Error>(())
    /// ```
    pub fn brightest<'a>(&self, img: impl Into<ImageInput<'a>>) -> Result<PixelHit> {
        self.extreme(img.into(), Extreme::Brightest)
    }

    /// The darkest pixel: smallest luminance, smallest scan index among ties.
    ///
    /// An error for an image without pixels.
    ///
    /// ```
    /// let mut img = image::RgbaImage::from_pixel(10, 10, image::Rgba([90, 90, 90, 255]));
    /// img.put_pixel(3, 4, image::Rgba([0, 0, 1, 255]));
    /// let hit = clpix::Engine::new()?.darkest(&img)?;
    /// assert_eq!((hit.x, hit.y, hit.luminance), (3, 4, 0));
    /// # Ok::<(), clpix::Error>(())
    /// ```
    pub fn darkest<'a>(&self, img: impl Into<ImageInput<'a>>) -> Result<PixelHit> {
        self.extreme(img.into(), Extreme::Darkest)
    }

    /// Sum, count, mean, minimum and maximum of the luminance of every pixel.
    ///
    /// An error for an image without pixels.
    ///
    /// ```
    /// let img = image::RgbaImage::from_fn(2, 1, |x, _| image::Rgba([0, if x == 0 { 0 } else { 255 }, 0, 255]));
    /// let s = clpix::Engine::new()?.luminance_stats(&img)?;
    /// assert_eq!((s.sum, s.min, s.max, s.mean), (736, 0, 736, 368.0));
    /// # Ok::<(), clpix::Error>(())
    /// ```
    pub fn luminance_stats<'a>(&self, img: impl Into<ImageInput<'a>>) -> Result<LuminanceStats> {
        let input = img.into();
        check_nonempty("luminance_stats", &input)?;
        let (sum, min, max) = self.dispatch(
            "luminance_stats",
            || Ok(cpu_stats(&HostPixels::of(input)?.view())),
            |cl| cl_stats(cl, input),
        )?;
        let count = input.pixel_count();
        Ok(LuminanceStats {
            sum,
            count,
            mean: sum as f64 / count as f64,
            min: min as u16,
            max: max as u16,
        })
    }

    /// Count, exact sum, minimum and maximum of `data`, with the index of the first
    /// occurrence of the minimum and of the maximum.
    ///
    /// An error for an empty slice, or one of more than `u32::MAX` elements. On OpenCL, a
    /// slice larger than one device buffer is reduced in parts.
    ///
    /// ```
    /// let engine = clpix::Engine::new()?;
    /// let s = engine.array_stats(&[7, u32::MAX, 0, u32::MAX, 0])?;
    /// assert_eq!(s.sum, 7 + 2 * u32::MAX as u64);
    /// assert_eq!((s.min, s.argmin, s.max, s.argmax), (0, 2, u32::MAX, 1));
    /// assert!(engine.array_stats(&[]).is_err());
    /// # Ok::<(), clpix::Error>(())
    /// ```
    pub fn array_stats(&self, data: &[u32]) -> Result<ArrayStats> {
        check_array(data.len())?;
        let p = self.dispatch(
            "array_stats",
            || Ok(cpu_array_stats(data)),
            |cl| cl_array_stats_host(cl, data),
        )?;
        Ok(p.into_stats(data.len()))
    }

    /// [`array_stats`](Self::array_stats) of an array held by the engine: on OpenCL it is
    /// reduced in device memory, and only one small partial result per work-group is read
    /// back. An array held by another engine is read back and reduced here (same results).
    ///
    /// An error for an empty array.
    ///
    /// ```
    /// let engine = clpix::Engine::new()?;
    /// let a = engine.upload_array(&(0..1000u32).map(|i| i % 7).collect::<Vec<_>>())?;
    /// let s = engine.array_stats_device(&a)?;
    /// assert_eq!((s.count, s.min, s.argmin, s.max, s.argmax), (1000, 0, 0, 6, 6));
    /// # Ok::<(), clpix::Error>(())
    /// ```
    pub fn array_stats_device(&self, array: &DeviceArray<u32>) -> Result<ArrayStats> {
        check_array(array.len())?;
        let on_device = match &self.backend {
            Backend::OpenCl(cl) => array.buffer_on(cl),
            Backend::Cpu => None,
        };
        let Some(buf) = on_device else {
            return self.array_stats(&array.host_data()?);
        };
        let buf = buf?;
        let p = self.dispatch(
            "array_stats_device",
            || Ok(cpu_array_stats(&array.host_data()?)),
            |cl| {
                let mut events = Vec::new();
                let p = cl_array_stats(cl, buf, array.len(), 0, &mut events)?;
                cl.finish(&events)?;
                Ok(p)
            },
        )?;
        Ok(p.into_stats(array.len()))
    }

    fn extreme(&self, input: ImageInput<'_>, extreme: Extreme) -> Result<PixelHit> {
        check_nonempty(extreme.name(), &input)?;
        let best = self.dispatch(
            extreme.name(),
            || Ok(cpu_argbest(&HostPixels::of(input)?.view(), extreme)),
            |cl| cl_argbest(cl, input, extreme),
        )?;
        // Unreachable for a non-empty image; an error rather than a panic all the same.
        let best = best.ok_or(Error::EmptyImage {
            operation: extreme.name(),
            width: input.width(),
            height: input.height(),
        })?;
        Ok(best.into_hit(input.width(), extreme))
    }
}

fn check_array(len: usize) -> Result<()> {
    check_array_len(len)?;
    if len == 0 {
        return Err(Error::invalid(
            "array length",
            0,
            "array_stats needs at least one element; check `is_empty()` before asking",
        ));
    }
    Ok(())
}

/// Array stats of a run of elements (or of several, combined): `argmin`/`argmax` are global
/// indices. The identity (`ArrayPartial::NONE`, index `u64::MAX`) loses every comparison, so
/// that parts that saw nothing combine away.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct ArrayPartial {
    sum: u64,
    min: u32,
    argmin: u64,
    max: u32,
    argmax: u64,
}

impl ArrayPartial {
    const NONE: ArrayPartial = ArrayPartial {
        sum: 0,
        min: u32::MAX,
        argmin: u64::MAX,
        max: 0,
        argmax: u64::MAX,
    };

    /// The smaller minimum (then the smaller index), the larger maximum (then the smaller
    /// index): associative and commutative, so any grouping gives the same result.
    fn combine(a: ArrayPartial, b: ArrayPartial) -> ArrayPartial {
        let (min, argmin) = (a.min, a.argmin).min((b.min, b.argmin));
        let (max, argmax) =
            if (b.max, std::cmp::Reverse(b.argmax)) > (a.max, std::cmp::Reverse(a.argmax)) {
                (b.max, b.argmax)
            } else {
                (a.max, a.argmax)
            };
        ArrayPartial {
            sum: a.sum + b.sum,
            min,
            argmin,
            max,
            argmax,
        }
    }

    fn into_stats(self, count: usize) -> ArrayStats {
        ArrayStats {
            count: count as u64,
            sum: self.sum,
            min: self.min,
            max: self.max,
            argmin: self.argmin,
            argmax: self.argmax,
        }
    }
}

// ---------------------------------------------------------------------------------------------
// CPU path: the executable specification.

/// Pixels per block: the block's maximum is a vectorised loop; the index search runs only when
/// a block beats the best so far.
const BLOCK: usize = 512;

#[inline(always)]
fn wsum(p: u32) -> u32 {
    21 * (p & 0xff) + 72 * ((p >> 8) & 0xff) + 7 * ((p >> 16) & 0xff)
}

#[inline(always)]
fn luma_of_wsum(s: u32) -> u32 {
    (1023 * s) / 25500
}

/// Score of a pixel: its weighted sum, or 25500 minus it for the darkest; L' grows with it.
#[inline(always)]
fn score(p: u32, flip: bool) -> u32 {
    if flip {
        25500 - wsum(p)
    } else {
        wsum(p)
    }
}

/// L' (L, or 1023 - L for the darkest) of a score.
#[inline(always)]
fn l_of_score(s: u32, flip: bool) -> u32 {
    if flip {
        1023 - luma_of_wsum(25500 - s)
    } else {
        luma_of_wsum(s)
    }
}

mod kernels {
    use super::*;
    crate::cpu::multiversion! {
        fn block_max_score(px: &[u32], flip: bool) -> u32 {
            px.iter().fold(0, |m, &p| m.max(score(p, flip)))
        }
    }
}

mod stats_kernels {
    use super::*;
    crate::cpu::multiversion! {
        fn block_stats(px: &[u32]) -> (u32, u32, u32) {
            let (mut s, mut lo, mut hi) = (0u32, u32::MAX, 0u32);
            for &p in px {
                let w = wsum(p);
                s += luma_of_wsum(w);
                lo = lo.min(w);
                hi = hi.max(w);
            }
            (s, lo, hi)
        }
    }
}

mod array_kernels {
    crate::cpu::multiversion! {
        fn block_stats(a: &[u32]) -> (u64, u32, u32) {
            let (mut s, mut lo, mut hi) = (0u64, u32::MAX, 0u32);
            for &v in a {
                s += v as u64;
                lo = lo.min(v);
                hi = hi.max(v);
            }
            (s, lo, hi)
        }
    }
}

/// Stats of the elements of `a`, the first at index `base`.
fn cpu_array_piece(base: u64, a: &[u32]) -> ArrayPartial {
    let mut p = ArrayPartial::NONE;
    for (k, block) in a.chunks(BLOCK).enumerate() {
        let (s, lo, hi) = array_kernels::block_stats(block);
        p.sum += s;
        let first = base + (k * BLOCK) as u64;
        // Blocks come in index order: only a strictly better value moves an extreme.
        if lo < p.min || p.argmin == u64::MAX {
            let j = block.iter().position(|&v| v == lo).unwrap_or(0);
            (p.min, p.argmin) = (lo, first + j as u64);
        }
        if hi > p.max || p.argmax == u64::MAX {
            let j = block.iter().position(|&v| v == hi).unwrap_or(0);
            (p.max, p.argmax) = (hi, first + j as u64);
        }
    }
    p
}

fn cpu_array_stats(data: &[u32]) -> ArrayPartial {
    data.par_chunks(PIECE)
        .enumerate()
        .map(|(i, c)| cpu_array_piece((i * PIECE) as u64, c))
        .reduce(|| ArrayPartial::NONE, ArrayPartial::combine)
}

fn cpu_argbest(view: &crate::ImageView<'_>, extreme: Extreme) -> Option<Best> {
    let flip = extreme.flip() == 1;
    map_pieces(
        view,
        |base, bytes| {
            let mut best: Option<Best> = None;
            with_u32_blocks(bytes, BLOCK, |offset, block| {
                let l = l_of_score(kernels::block_max_score(block, flip), flip);
                if best.is_none_or(|x| l > x.l) {
                    if let Some(j) = block
                        .iter()
                        .position(|&p| l_of_score(score(p, flip), flip) == l)
                    {
                        best = Some(Best::new(l, base + (offset + j) as u64, block[j]));
                    }
                }
            });
            best
        },
        |a, b| match (a, b) {
            (Some(a), Some(b)) => Some(Best::max(a, b)),
            (a, b) => a.or(b),
        },
    )
    .flatten()
}

fn cpu_stats(view: &crate::ImageView<'_>) -> (u64, u32, u32) {
    map_pieces(
        view,
        |_, bytes| {
            let (mut sum, mut lo, mut hi) = (0u64, u32::MAX, 0u32);
            // Blocks of 512 keep the u32 block sum below 512 * 1023.
            with_u32_blocks(bytes, BLOCK, |_, block| {
                let (s, l, h) = stats_kernels::block_stats(block);
                sum += s as u64;
                lo = lo.min(l);
                hi = hi.max(h);
            });
            (sum, lo, hi)
        },
        |a, b| (a.0 + b.0, a.1.min(b.1), a.2.max(b.2)),
    )
    .map(|(s, lo, hi)| (s, luma_of_wsum(lo), luma_of_wsum(hi)))
    .unwrap_or((0, 0, 0))
}

// ---------------------------------------------------------------------------------------------
// OpenCL path.

/// Work-groups for a streaming reduction over `n` pixels: enough to fill the device, and on
/// GPUs at least 16 pixels per work-item so that the per-group tree is amortised.
fn groups_for(cl: &ClEngine, n: usize) -> usize {
    let t = cl.tuning;
    let per_group = if t.contiguous { 16 * 1024 } else { t.wg * 16 };
    n.div_ceil(per_group).clamp(1, t.max_groups)
}

/// Enqueues `kernel` of `cl/reduce.cl` over `n` elements with `args` and the partials buffer
/// as its last argument, and reads back `per_group` u64s for each work-group.
fn group_partials(
    cl: &ClEngine,
    kernel: &'static str,
    args: &[Arg],
    n: usize,
    per_group: usize,
    events: &mut Vec<opencl3::event::Event>,
) -> Result<Vec<u64>> {
    let groups = groups_for(cl, n);
    let mut host = vec![0u64; per_group * groups];
    cl.with_partials(|partials| {
        let mut all = args.to_vec();
        all.push(Arg::buf(partials));
        events.push(cl.launch("reduce", kernel, &all, groups * cl.tuning.wg, cl.tuning.wg)?);
        cl.read(partials, 0, &mut host)
    })?;
    Ok(host)
}

fn cl_argbest(cl: &Arc<ClEngine>, input: ImageInput<'_>, extreme: Extreme) -> Result<Option<Best>> {
    let width = input.width() as u64;
    let mut best: Option<Best> = None;
    let mut events = Vec::new();
    cl.for_each_part(input, |buf, range| {
        let n = range.pixels();
        let args = [Arg::buf(buf), Arg::U32(n as u32), Arg::U32(extreme.flip())];
        let host = group_partials(cl, "luma_argbest", &args, n, 2, &mut events)?;
        let base = range.first_pixel(width as u32);
        for g in host.chunks_exact(2) {
            if g[0] != 0 {
                let l = (g[0] >> 32) as u32;
                let index = !(g[0] as u32) as u64;
                let b = Best::new(l, base + index, g[1] as u32);
                best = Some(best.map_or(b, |x| Best::max(x, b)));
            }
        }
        Ok(())
    })?;
    cl.finish(&events)?;
    Ok(best)
}

fn cl_stats(cl: &Arc<ClEngine>, input: ImageInput<'_>) -> Result<(u64, u32, u32)> {
    let (mut sum, mut lo, mut hi) = (0u64, u32::MAX, 0u32);
    let mut events = Vec::new();
    cl.for_each_part(input, |buf, range| {
        let n = range.pixels();
        let args = [Arg::buf(buf), Arg::U32(n as u32)];
        let host = group_partials(cl, "luma_stats", &args, n, 2, &mut events)?;
        for g in host.chunks_exact(2) {
            sum += g[0];
            lo = lo.min((g[1] >> 32) as u32);
            hi = hi.max(g[1] as u32);
        }
        Ok(())
    })?;
    cl.finish(&events)?;
    Ok((sum, lo, hi))
}

/// Enqueues `u32_stats` over the first `n` elements of `buf` (n >= 1) and combines the
/// per-group partials, with indices offset by `base`.
fn cl_array_stats(
    cl: &ClEngine,
    buf: &Buffer<u32>,
    n: usize,
    base: u64,
    events: &mut Vec<opencl3::event::Event>,
) -> Result<ArrayPartial> {
    let args = [Arg::buf(buf), Arg::U32(u32_arg(n, "array length")?)];
    let host = group_partials(cl, "u32_stats", &args, n, 3, events)?;
    let mut p = ArrayPartial::NONE;
    for g in host.chunks_exact(3) {
        // The neutral keys of a group that saw nothing: u64::MAX for the minimum, 0 for the
        // maximum (no index reaches u32::MAX).
        let group = ArrayPartial {
            sum: g[0],
            min: (g[1] >> 32) as u32,
            argmin: if g[1] == u64::MAX {
                u64::MAX
            } else {
                base + (g[1] as u32) as u64
            },
            max: (g[2] >> 32) as u32,
            argmax: if g[2] == 0 {
                u64::MAX
            } else {
                base + (!(g[2] as u32)) as u64
            },
        };
        p = ArrayPartial::combine(p, group);
    }
    Ok(p)
}

/// Array stats of a host slice on the device, in chunks of one buffer each.
fn cl_array_stats_host(cl: &Arc<ClEngine>, data: &[u32]) -> Result<ArrayPartial> {
    let cap = ((cl.max_buffer_bytes / 4) as usize).clamp(1024, 1 << 30);
    let chunk = cap.min(data.len()).max(1);
    let (count, mut buf) = cl.take_scratch("array stats input", chunk)?;
    let mut events = Vec::new();
    let mut p = ArrayPartial::NONE;
    let result = data.chunks(chunk).enumerate().try_for_each(|(i, d)| {
        cl.write(&mut buf, 0, d)?;
        let part = cl_array_stats(cl, &buf, d.len(), (i * chunk) as u64, &mut events)?;
        p = ArrayPartial::combine(p, part);
        Ok::<(), Error>(())
    });
    let finished = result.and_then(|()| cl.finish(&events));
    cl.give_scratch("array stats input", count, buf);
    finished.map(|()| p)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::luminance::luma_u32;

    #[test]
    fn keys_prefer_luminance_then_the_earlier_index() {
        let a = Best::new(5, 10, 0);
        let b = Best::new(5, 3, 0);
        let c = Best::new(6, 99, 0);
        assert_eq!(Best::max(a, b).index(), 3);
        assert_eq!(Best::max(b, c).index(), 99);
    }

    #[test]
    fn array_partials_combine_to_the_first_extremes() {
        let a = ArrayPartial {
            sum: 1,
            min: 3,
            argmin: 10,
            max: 9,
            argmax: 11,
        };
        let b = ArrayPartial {
            sum: 2,
            min: 3,
            argmin: 4,
            max: 9,
            argmax: 5,
        };
        for c in [ArrayPartial::combine(a, b), ArrayPartial::combine(b, a)] {
            assert_eq!((c.sum, c.argmin, c.argmax), (3, 4, 5));
        }
        assert_eq!(ArrayPartial::combine(ArrayPartial::NONE, a), a);
        assert_eq!(ArrayPartial::combine(a, ArrayPartial::NONE), a);
    }

    #[test]
    fn luma_of_wsum_is_the_spec() {
        for p in [0u32, 0xffffff, 0x123456, 0x00ff00] {
            assert_eq!(luma_of_wsum(wsum(p)), luma_u32(p));
        }
    }
}
