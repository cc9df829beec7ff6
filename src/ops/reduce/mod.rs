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
//! (`reduce.cl`) do the same per work-item and reduce each work-group in local memory; the
//! host combines one partial per group. Keys `(L << 32) | !index` make "largest luminance,
//! then smallest index" a plain maximum.
//!
//! Array stats work the same way: blocks of 512 elements give their sum, minimum and maximum
//! (a vectorised loop), and a block is searched for the first index of its minimum (maximum)
//! only when it beats the one so far. The kernel `u32_stats` writes a sum and the keys
//! `(min << 32) | index` and `(max << 32) | !index` per group.

use crate::cpu::{PIECE, map_pieces, with_u32_blocks};
use crate::device::HostPixels;
use crate::device::{Any, ImageInput, IntoImage};
use crate::device::{ArrayInput, check_array_len};
use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::image::check_pixel_count;
use crate::opencl::{Arg, ClEngine, ScratchKind};
use crate::opencl::{Kernel, u32_arg};
use crate::spec::{Extreme, Pixel, PixelHit, RawHit, RawStats};
use opencl3::memory::Buffer;
use rayon::prelude::*;
use std::sync::Arc;

/// Statistics of a u32 array: count, exact sum, minimum and maximum with the index of the
/// first occurrence of each. Made by [`Engine::array_stats`].
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

/// The kernels' `flip` argument: 0 for the brightest, 1 for the darkest (keys `1023 - L`).
fn flip(extreme: Extreme) -> u32 {
    match extreme {
        Extreme::Brightest => 0,
        Extreme::Darkest => 1,
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
    /// The brightest or the darkest pixel: the largest key (`Extreme::Brightest`) or the
    /// smallest (`Extreme::Darkest`), the smallest scan index among ties. The key is the
    /// luminance for colour formats, the value for one channel (docs/SPEC.md); an f32 pixel
    /// whose key is NaN is never chosen.
    ///
    /// Every [`Pixel`](crate::Pixel) format: an RGBA8 image gives a [`PixelHit`], the others
    /// a [`Hit`](crate::Hit) of their type. An error for an image without pixels (or whose
    /// every key is NaN).
    ///
    /// ```
    /// use clpix::Extreme;
    /// let mut img = image::RgbaImage::from_pixel(100, 80, image::Rgba([90, 90, 90, 255]));
    /// img.put_pixel(42, 17, image::Rgba([255, 255, 255, 255]));
    /// img.put_pixel(3, 4, image::Rgba([0, 0, 1, 255]));
    /// let engine = clpix::Engine::new()?;
    /// let hit = engine.extreme(&img, Extreme::Brightest)?;
    /// assert_eq!((hit.x, hit.y, hit.luminance), (42, 17, 1023));
    /// let hit = engine.extreme(&img, Extreme::Darkest)?;
    /// assert_eq!((hit.x, hit.y, hit.luminance), (3, 4, 0));
    /// // A float frame: NaN is no value.
    /// let f = image::ImageBuffer::<image::Luma<f32>, _>::from_raw(3, 1, vec![0.5, f32::NAN, -2.0]).unwrap();
    /// assert_eq!(engine.extreme(&f, Extreme::Brightest)?.x, 0);
    /// assert_eq!(engine.extreme(&f, Extreme::Darkest)?.key, -2.0);
    /// # Ok::<(), clpix::Error>(())
    /// ```
    pub fn extreme<'a, I: IntoImage<'a>>(
        &self,
        img: I,
        extreme: Extreme,
    ) -> Result<<I::Pixel as Pixel>::Hit> {
        let input = match img.into_any().0 {
            Any::Typed(view) => return Ok(I::Pixel::hit(self.typed_extreme(view, extreme)?)),
            Any::Rgba8(input) => input,
        };
        let hit = self.extreme_rgba8(input, extreme)?;
        let mut value = [0u8; 16];
        value[..4].copy_from_slice(&hit.rgba);
        Ok(I::Pixel::hit(RawHit {
            x: hit.x,
            y: hit.y,
            key: hit.luminance as u32,
            value,
        }))
    }

    fn extreme_rgba8(&self, input: ImageInput<'_>, extreme: Extreme) -> Result<PixelHit> {
        check_nonempty(extreme.name(), &input)?;
        let best = self.dispatch(
            &FAMILY,
            &(),
            extreme.name(),
            input.pixel_count(),
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

    /// The statistics of the keys of every pixel: for RGBA8 and the other integer formats a
    /// [`LuminanceStats`](crate::LuminanceStats) (sum, count, mean, minimum and maximum of the luminance, or of the
    /// value for one channel), for float formats a [`FloatStats`](crate::FloatStats) (NaN keys
    /// not counted; the sum exact, rounded once to f64).
    ///
    /// An error for an image without pixels (or whose every key is NaN).
    ///
    /// ```
    /// let img = image::RgbaImage::from_fn(2, 1, |x, _| image::Rgba([0, if x == 0 { 0 } else { 255 }, 0, 255]));
    /// let s = clpix::Engine::new()?.luminance_stats(&img)?;
    /// assert_eq!((s.sum, s.min, s.max, s.mean), (736, 0, 736, 368.0));
    /// let gray = image::GrayImage::from_fn(3, 1, |x, _| image::Luma([x as u8 * 100]));
    /// let s = clpix::Engine::new()?.luminance_stats(&gray)?;
    /// assert_eq!((s.sum, s.min, s.max), (300, 0, 200));
    /// # Ok::<(), clpix::Error>(())
    /// ```
    pub fn luminance_stats<'a, I: IntoImage<'a>>(
        &self,
        img: I,
    ) -> Result<<I::Pixel as Pixel>::Stats> {
        let input = match img.into_any().0 {
            Any::Typed(view) => return Ok(I::Pixel::stats(self.typed_stats(view)?)),
            Any::Rgba8(input) => input,
        };
        check_nonempty("luminance_stats", &input)?;
        let (sum, min, max) = self.dispatch(
            &FAMILY,
            &(),
            "luminance_stats",
            input.pixel_count(),
            || Ok(cpu_stats(&HostPixels::of(input)?.view())),
            |cl| cl_stats(cl, input),
        )?;
        Ok(I::Pixel::stats(RawStats {
            sum: sum as f64,
            int_sum: sum,
            count: input.pixel_count(),
            min,
            max,
        }))
    }

    /// Count, exact sum, minimum and maximum of an array (a host slice or an array the engine
    /// holds, see [`ArrayInput`]), with the index of the first occurrence of the minimum and of
    /// the maximum.
    ///
    /// An error for an empty array, or one of more than `u32::MAX` elements. On OpenCL, a
    /// slice larger than one device buffer is reduced in parts; an array the engine holds is
    /// reduced in device memory (only one small partial result per work-group is read back),
    /// and one held by another engine is read back and reduced here (the same results).
    ///
    /// ```
    /// let engine = clpix::Engine::new()?;
    /// let s = engine.array_stats(&[7, u32::MAX, 0, u32::MAX, 0])?;
    /// assert_eq!(s.sum, 7 + 2 * u32::MAX as u64);
    /// assert_eq!((s.min, s.argmin, s.max, s.argmax), (0, 2, u32::MAX, 1));
    /// assert!(engine.array_stats(&[]).is_err());
    /// let a = engine.upload_array(&(0..1000u32).map(|i| i % 7).collect::<Vec<_>>())?;
    /// let s = engine.array_stats(&a)?;
    /// assert_eq!((s.count, s.min, s.argmin, s.max, s.argmax), (1000, 0, 0, 6, 6));
    /// # Ok::<(), clpix::Error>(())
    /// ```
    pub fn array_stats<'a>(&self, data: impl Into<ArrayInput<'a>>) -> Result<ArrayStats> {
        let input = data.into();
        check_array(input.len())?;
        let n = input.len();
        let host = |data: &[u32]| {
            self.dispatch(
                &FAMILY,
                &(),
                "array_stats",
                n as u64,
                || Ok(cpu_array_stats(data)),
                |cl| cl_array_stats_host(cl, data),
            )
        };
        let p = match input {
            ArrayInput::Host(data) => host(data)?,
            ArrayInput::Device(array) => self.dispatch_held(
                &FAMILY,
                &(),
                "array_stats",
                n as u64,
                |cl| array.buffer_on(cl),
                || Ok(cpu_array_stats(&array.host_data()?)),
                |cl, buf| {
                    let mut events = Vec::new();
                    let p = cl_array_stats(cl, buf, n, 0, &mut events)?;
                    cl.finish(&events)?;
                    Ok(p)
                },
                || host(&array.host_data()?),
            )?,
        };
        Ok(p.into_stats(n))
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

mod cl;
mod exact;
mod family;
pub(crate) mod kernels;
pub(crate) mod typed;
mod typed_family;
use family::FAMILY;

use kernels::*;
mod cpu;
pub(crate) use cl::groups_for;
use cl::*;
use cpu::*;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::luma_u32;

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
