//! Reductions: the brightest and darkest pixel, and luminance statistics.
//!
//! # Specification
//! - **brightest**: the pixel with the largest [luminance](crate::luminance); among equal
//!   luminance the smallest scan index (`y * width + x`) wins.
//! - **darkest**: the pixel with the smallest luminance; ties likewise.
//! - **luminance stats**: the sum of L over all pixels (u64), the count, the mean (sum / count
//!   as f64), the minimum and maximum.
//! - An image with no pixels has no brightest or darkest pixel and no statistics: an error.
//!
//! # Method
//! The CPU path splits the image into pieces for rayon; in each piece it takes the maximum of
//! the weighted sums `21 r + 72 g + 7 b` over blocks of pixels (a loop the compiler vectorises)
//! and looks for the index only when a block improves on the best so far. The OpenCL kernels
//! (`cl/reduce.cl`) do the same per work-item and reduce each work-group in local memory; the
//! host combines one partial per group. Keys `(L << 32) | !index` make "largest luminance,
//! then smallest index" a plain maximum.

use crate::cpu::{map_pieces, with_u32_blocks};
use crate::engine::{Engine, HostPixels};
use crate::error::{Error, Result};
use crate::image::{check_pixel_count, ImageInput};
use crate::opencl::{Arg, ClEngine};
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

fn cl_argbest(cl: &Arc<ClEngine>, input: ImageInput<'_>, extreme: Extreme) -> Result<Option<Best>> {
    let width = input.width() as u64;
    let mut best: Option<Best> = None;
    let mut events = Vec::new();
    cl.for_each_part(input, |buf, range| {
        let n = range.pixels();
        let groups = groups_for(cl, n);
        let mut host = vec![0u64; 2 * groups];
        cl.with_partials(|partials| {
            events.push(cl.launch(
                "reduce",
                "luma_argbest",
                &[
                    Arg::buf(buf),
                    Arg::U32(n as u32),
                    Arg::U32(extreme.flip()),
                    Arg::buf(partials),
                ],
                groups * cl.tuning.wg,
                cl.tuning.wg,
            )?);
            cl.read(partials, 0, &mut host)
        })?;
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
        let groups = groups_for(cl, n);
        let mut host = vec![0u64; 2 * groups];
        cl.with_partials(|partials| {
            events.push(cl.launch(
                "reduce",
                "luma_stats",
                &[Arg::buf(buf), Arg::U32(n as u32), Arg::buf(partials)],
                groups * cl.tuning.wg,
                cl.tuning.wg,
            )?);
            cl.read(partials, 0, &mut host)
        })?;
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
    fn luma_of_wsum_is_the_spec() {
        for p in [0u32, 0xffffff, 0x123456, 0x00ff00] {
            assert_eq!(luma_of_wsum(wsum(p)), luma_u32(p));
        }
    }
}
