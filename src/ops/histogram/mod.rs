//! Histograms: RGBA (4 × 256 counters) and luminance (1024 counters).
//!
//! # Specification
//! - **RGBA histogram**: four arrays of 256 counters; `counts[c][v]` counts the pixels whose
//!   channel `c` (0 = R, 1 = G, 2 = B, 3 = A) equals `v`. Every pixel adds exactly 1 to each of
//!   the four arrays, so each array sums to the pixel count.
//! - **luminance histogram**: 1024 counters; `counts[l]` counts the pixels whose
//!   [luminance](crate::luminance) is `l`.
//! - Counters are `u32`; an image with more than `u32::MAX` pixels is refused with
//!   [`Error::ImageTooLarge`](crate::Error::ImageTooLarge). An image without pixels has an
//!   all-zero histogram (not an error).
//!
//! # Method
//! The CPU path folds the image in parallel (rayon) into one partial histogram per task and
//! adds the partials up. Each partial keeps two sub-tables, even pixels counted into the first
//! and odd pixels into the second, so that runs of equal pixels (a constant image puts every
//! pixel in one bin) alternate between two counters instead of waiting on one. The luminance
//! of a block of pixels is computed by a vectorised loop (AVX-512 or AVX2 when the CPU has it)
//! before the block is counted.
//!
//! The OpenCL kernels (`histogram.cl`) privatise: on GPUs each work-group counts with
//! `atomic_inc` into its own copy of the histogram in local memory (grid-stride, 16-byte loads)
//! and adds it into the global histogram with one `atomic_add` per non-zero bin; never one
//! global atomic per pixel. On CPU devices (PoCL) each work-group is one work-item walking a
//! contiguous range with two plain sub-tables, merged the same way. The parts of an image too
//! large for one buffer accumulate into the same global histogram.

use crate::cpu::PIECE;
use crate::device::HostPixels;
use crate::device::ImageInput;
use crate::engine::Engine;
use crate::error::Result;
use crate::image::{ImageView, check_pixel_count};
use crate::opencl::{Arg, ClEngine, Kernel};
use image::{Rgba, RgbaImage};
use rayon::prelude::*;
use std::sync::Arc;

/// Number of counters of either histogram.
const BINS: usize = 1024;

/// The counts of every value of each channel of an image.
///
/// `counts[c][v]` is the number of pixels whose channel `c` (0 = R, 1 = G, 2 = B, 3 = A)
/// equals `v`; each of the four arrays sums to the pixel count.
///
/// ```
/// let img = image::RgbaImage::from_fn(4, 2, |x, _| image::Rgba([x as u8, 7, 7, 255]));
/// let h = clpix::Engine::new()?.histogram_rgba(&img)?;
/// assert_eq!(h.counts[0][..5], [2, 2, 2, 2, 0]); // red: 0, 1, 2, 3 twice each
/// assert_eq!(h.counts[1][7], 8);
/// assert_eq!(h.counts[3][255], 8);
/// # Ok::<(), clpix::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct RgbaHistogram {
    /// Counters of R, G, B and A, 256 each.
    pub counts: [[u32; 256]; 4],
}

/// The counts of every [luminance](crate::luminance) value (0..=1023) of an image.
///
/// ```
/// let img = image::RgbaImage::from_pixel(3, 3, image::Rgba([255, 255, 255, 0]));
/// let h = clpix::Engine::new()?.histogram_luminance(&img)?;
/// assert_eq!(h.counts[1023], 9);
/// assert_eq!(h.pixel_count(), 9);
/// # Ok::<(), clpix::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct LuminanceHistogram {
    /// `counts[l]`: pixels with luminance `l`.
    pub counts: [u32; 1024],
}

impl Default for RgbaHistogram {
    /// All zero: the histogram of an image without pixels.
    ///
    /// ```
    /// assert_eq!(clpix::RgbaHistogram::default().pixel_count(), 0);
    /// ```
    fn default() -> Self {
        RgbaHistogram {
            counts: [[0; 256]; 4],
        }
    }
}

impl Default for LuminanceHistogram {
    /// All zero: the histogram of an image without pixels.
    ///
    /// ```
    /// assert_eq!(clpix::LuminanceHistogram::default().pixel_count(), 0);
    /// ```
    fn default() -> Self {
        LuminanceHistogram { counts: [0; 1024] }
    }
}

impl RgbaHistogram {
    /// The number of pixels counted (the sum of the red array; every array has the same sum).
    ///
    /// ```
    /// let img = image::RgbaImage::new(7, 5);
    /// assert_eq!(clpix::Engine::cpu().histogram_rgba(&img)?.pixel_count(), 35);
    /// # Ok::<(), clpix::Error>(())
    /// ```
    pub fn pixel_count(&self) -> u64 {
        self.counts[0].iter().map(|&c| c as u64).sum()
    }

    /// Draws the histogram as a bar chart of `width` × `height` pixels: R, G and B as bars in
    /// their colours, overlaid additively (where red and green overlap the chart is yellow,
    /// where all three overlap it is white), and A as a grey outline. Bin `v` runs left to
    /// right. Heights are on a square-root scale (a bar of a quarter of the largest count is
    /// half as tall), so that one tall spike does not flatten the rest; the largest R, G or B
    /// count fills the height, and alpha, often one spike at 255, is clipped at the top. Each
    /// column shows the largest count of the bins it covers. A zero width or height gives an
    /// empty image.
    ///
    /// ```
    /// let img = image::RgbaImage::from_fn(64, 64, |x, y| image::Rgba([x as u8 * 4, y as u8 * 4, 128, 255]));
    /// let chart = clpix::Engine::new()?.histogram_rgba(&img)?.to_chart(512, 200);
    /// assert_eq!(chart.dimensions(), (512, 200));
    /// // chart.save("histogram.png") writes it as a PNG.
    /// # Ok::<(), clpix::Error>(())
    /// ```
    pub fn to_chart(&self, width: u32, height: u32) -> RgbaImage {
        let scale = self.counts[..3]
            .iter()
            .flat_map(|c| c.iter())
            .copied()
            .max()
            .unwrap_or(0);
        let mut chart = blank_chart(width, height);
        let colours = [[220, 50, 50], [50, 200, 50], [60, 100, 255]];
        for (c, colour) in colours.iter().enumerate() {
            let tops = bar_tops(&self.counts[c], scale, width, height);
            for (x, &top) in tops.iter().enumerate() {
                for y in top..height {
                    let p = chart.get_pixel_mut(x as u32, y);
                    for (v, add) in p.0.iter_mut().zip(colour) {
                        *v = v.saturating_add(*add);
                    }
                }
            }
        }
        let tops = bar_tops(&self.counts[3], scale, width, height);
        draw_outline(&mut chart, &tops, [170, 170, 170, 255]);
        chart
    }
}

impl LuminanceHistogram {
    /// The number of pixels counted.
    ///
    /// ```
    /// let img = image::RgbaImage::new(7, 5);
    /// assert_eq!(clpix::Engine::cpu().histogram_luminance(&img)?.pixel_count(), 35);
    /// # Ok::<(), clpix::Error>(())
    /// ```
    pub fn pixel_count(&self) -> u64 {
        self.counts.iter().map(|&c| c as u64).sum()
    }

    /// Draws the histogram as a bar chart of `width` × `height` pixels: light bars, luminance 0
    /// at the left and 1023 at the right, on a square-root scale on which the largest count
    /// fills the height. Each column shows the largest count of the bins it covers. A zero
    /// width or height gives an empty image.
    ///
    /// ```
    /// let img = image::RgbaImage::from_fn(64, 64, |x, y| image::Rgba([x as u8 * 4, y as u8 * 4, 0, 255]));
    /// let chart = clpix::Engine::new()?.histogram_luminance(&img)?.to_chart(512, 200);
    /// assert_eq!(chart.dimensions(), (512, 200));
    /// # Ok::<(), clpix::Error>(())
    /// ```
    pub fn to_chart(&self, width: u32, height: u32) -> RgbaImage {
        let scale = self.counts.iter().copied().max().unwrap_or(0);
        let mut chart = blank_chart(width, height);
        let tops = bar_tops(&self.counts, scale, width, height);
        for (x, &top) in tops.iter().enumerate() {
            for y in top..height {
                chart.put_pixel(x as u32, y, Rgba([215, 215, 225, 255]));
            }
        }
        chart
    }
}

/// A dark chart background.
fn blank_chart(width: u32, height: u32) -> RgbaImage {
    RgbaImage::from_pixel(width, height, Rgba([18, 18, 22, 255]))
}

/// For each column of the chart, the row where its bar starts (`height` for an empty bar):
/// the largest count of the bins under the column, on a square-root scale on which `scale`
/// fills the height.
fn bar_tops(counts: &[u32], scale: u32, width: u32, height: u32) -> Vec<u32> {
    let bins = counts.len() as u64;
    (0..width as u64)
        .map(|x| {
            let first = x * bins / width as u64;
            let last = ((x + 1) * bins / width as u64).max(first + 1).min(bins);
            let v = counts[first as usize..last as usize]
                .iter()
                .copied()
                .max()
                .unwrap_or(0);
            if v == 0 || scale == 0 {
                return height;
            }
            // Square-root scale; at least one pixel for a non-zero count; clipped at the top.
            let h = ((v as f64 / scale as f64).sqrt() * height as f64).ceil();
            height - (h as u64).max(1).min(height as u64) as u32
        })
        .collect()
}

/// Draws the top outline of bars (a step line, 2 pixels thick) in `colour`.
fn draw_outline(chart: &mut RgbaImage, tops: &[u32], colour: [u8; 4]) {
    let height = chart.height();
    if height == 0 {
        return;
    }
    for (x, &top) in tops.iter().enumerate() {
        let prev = if x > 0 { tops[x - 1] } else { top };
        // A vertical segment joins this column's top to the previous one's.
        let (a, b) = (top.min(prev), top.max(prev));
        for y in a..=b.saturating_add(1) {
            if y < height {
                chart.put_pixel(x as u32, y, Rgba(colour));
            }
        }
    }
}

/// Which histogram.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Rgba,
    Luminance,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Rgba => "histogram_rgba",
            Kind::Luminance => "histogram_luminance",
        }
    }
    fn kernel(self) -> Kernel {
        match self {
            Kind::Rgba => HIST_RGBA,
            Kind::Luminance => HIST_LUMA,
        }
    }
}

impl Engine {
    /// The RGBA histogram: for each channel (R, G, B, A), how many pixels have each value.
    ///
    /// An image without pixels gives an all-zero histogram; one with more than `u32::MAX`
    /// pixels is an error.
    ///
    /// ```
    /// let mut img = image::RgbaImage::from_pixel(10, 10, image::Rgba([0, 128, 255, 255]));
    /// img.put_pixel(3, 3, image::Rgba([9, 9, 9, 0]));
    /// let h = clpix::Engine::new()?.histogram_rgba(&img)?;
    /// assert_eq!((h.counts[0][0], h.counts[0][9]), (99, 1));
    /// assert_eq!((h.counts[1][128], h.counts[2][255]), (99, 99));
    /// assert_eq!((h.counts[3][255], h.counts[3][0]), (99, 1));
    /// # Ok::<(), clpix::Error>(())
    /// ```
    pub fn histogram_rgba<'a>(&self, img: impl Into<ImageInput<'a>>) -> Result<RgbaHistogram> {
        let flat = self.fixed_histogram(img.into(), Kind::Rgba)?;
        let mut h = RgbaHistogram::default();
        for (c, chunk) in h.counts.iter_mut().zip(flat.chunks_exact(256)) {
            c.copy_from_slice(chunk);
        }
        Ok(h)
    }

    /// The luminance histogram: how many pixels have each [luminance](crate::luminance)
    /// 0..=1023.
    ///
    /// An image without pixels gives an all-zero histogram; one with more than `u32::MAX`
    /// pixels is an error.
    ///
    /// ```
    /// let img = image::RgbaImage::from_fn(2, 1, |x, _| image::Rgba([0, if x == 0 { 0 } else { 255 }, 0, 255]));
    /// let h = clpix::Engine::new()?.histogram_luminance(&img)?;
    /// assert_eq!((h.counts[0], h.counts[736], h.pixel_count()), (1, 1, 2));
    /// # Ok::<(), clpix::Error>(())
    /// ```
    pub fn histogram_luminance<'a>(
        &self,
        img: impl Into<ImageInput<'a>>,
    ) -> Result<LuminanceHistogram> {
        Ok(LuminanceHistogram {
            counts: self.fixed_histogram(img.into(), Kind::Luminance)?,
        })
    }

    fn fixed_histogram(&self, input: ImageInput<'_>, kind: Kind) -> Result<[u32; BINS]> {
        check_pixel_count(input.width(), input.height())?;
        self.dispatch(
            &FAMILY,
            &(),
            kind.name(),
            input.pixel_count(),
            || Ok(cpu_histogram(&HostPixels::of(input)?.view(), kind)),
            |cl| cl_histogram(cl, input, kind),
        )
    }
}

// ---------------------------------------------------------------------------------------------
// CPU path: the executable specification.

pub(crate) mod bins;
mod cl;
mod family;
pub(crate) mod kernels;
mod typed;
mod typed_family;
use family::FAMILY;

use kernels::*;
mod cpu;
use cl::*;
use cpu::*;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bar_tops_cover_every_bin_and_clip() {
        let mut counts = [0u32; 256];
        counts[0] = 10;
        counts[255] = 5;
        // Narrower than the bins: columns take the maximum of the bins they cover.
        let tops = bar_tops(&counts, 10, 16, 100);
        assert_eq!(tops.len(), 16);
        // sqrt(5 / 10) = 0.707: 71 of 100 rows.
        assert_eq!((tops[0], tops[15], tops[7]), (0, 29, 100));
        // Wider: each bin spans several columns.
        let tops = bar_tops(&counts, 5, 512, 10);
        assert_eq!((tops[0], tops[1], tops[2], tops[511]), (0, 0, 10, 0));
        // Empty charts and empty histograms do not panic.
        assert!(bar_tops(&counts, 0, 0, 0).is_empty());
        assert_eq!(bar_tops(&[0; 4], 0, 3, 7), vec![7, 7, 7]);
    }

    #[test]
    fn charts_of_any_size() {
        let mut h = RgbaHistogram::default();
        h.counts[0][10] = 3;
        h.counts[3][255] = 1000;
        for (w, ht) in [(0, 0), (1, 1), (0, 5), (5, 0), (300, 2), (1024, 64)] {
            assert_eq!(h.to_chart(w, ht).dimensions(), (w, ht));
            let l = LuminanceHistogram::default();
            assert_eq!(l.to_chart(w, ht).dimensions(), (w, ht));
        }
    }
}
