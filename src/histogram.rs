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
//! The OpenCL kernels (`cl/histogram.cl`) privatise: on GPUs each work-group counts with
//! `atomic_inc` into its own copy of the histogram in local memory (grid-stride, 16-byte loads)
//! and adds it into the global histogram with one `atomic_add` per non-zero bin; never one
//! global atomic per pixel. On CPU devices (PoCL) each work-group is one work-item walking a
//! contiguous range with two plain sub-tables, merged the same way. The parts of an image too
//! large for one buffer accumulate into the same global histogram.
//!
//! `CLPIX_HISTOGRAM_REPLICAS=1|2|4|8` (GPUs only; default 1) makes each work-group keep that
//! many interleaved local copies, work-item `i` counting into copy `i % replicas`: the lanes of
//! a warp then spread over disjoint sets of local-memory banks and over separate counters of
//! the same bin, a tuning knob against bank conflicts (random images) and same-address
//! contention (images with few colours), limited by the device's local memory.

use crate::cpu::PIECE;
use crate::engine::{Engine, HostPixels};
use crate::error::{Error, Result};
use crate::image::{check_pixel_count, ImageInput, ImageView};
use crate::opencl::{Arg, ClEngine};
use image::{Rgba, RgbaImage};
use rayon::prelude::*;
use std::sync::{Arc, OnceLock};

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
    fn kernel(self) -> &'static str {
        match self {
            Kind::Rgba => "hist_rgba",
            Kind::Luminance => "hist_luma",
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
        let flat = self.histogram(img.into(), Kind::Rgba)?;
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
            counts: self.histogram(img.into(), Kind::Luminance)?,
        })
    }

    fn histogram(&self, input: ImageInput<'_>, kind: Kind) -> Result<[u32; BINS]> {
        check_pixel_count(input.width(), input.height())?;
        self.dispatch(
            kind.name(),
            || Ok(cpu_histogram(&HostPixels::of(input)?.view(), kind)),
            |cl| cl_histogram(cl, input, kind),
        )
    }
}

// ---------------------------------------------------------------------------------------------
// CPU path: the executable specification.

/// Distance between the two sub-tables of a partial histogram, in counters: 1024 plus 16, so
/// that the two copies are not a multiple of 4 KiB apart (the CPU's store-to-load forwarding
/// would take them for each other).
const SUB: usize = BINS + 16;

/// A partial histogram: two sub-tables, even pixels counted into the first, odd into the second.
type Tables = [[u32; SUB]; 2];

/// Pixels whose luminance is computed at once before they are counted.
const LUMA_BLOCK: usize = 512;

#[inline(always)]
fn bump_rgba(t: &mut [u32; SUB], p: u32) {
    t[(p & 0xff) as usize] += 1;
    t[256 + ((p >> 8) & 0xff) as usize] += 1;
    t[512 + ((p >> 16) & 0xff) as usize] += 1;
    t[768 + (p >> 24) as usize] += 1;
}

mod kernels {
    use super::*;
    use crate::luminance::luma_u32;

    crate::cpu::multiversion! {
        fn count_rgba(bytes: &[u8], t: &mut Tables) -> usize {
            let [t0, t1] = t;
            let mut pairs = bytes.chunks_exact(8);
            for c in &mut pairs {
                bump_rgba(t0, u32::from_le_bytes([c[0], c[1], c[2], c[3]]));
                bump_rgba(t1, u32::from_le_bytes([c[4], c[5], c[6], c[7]]));
            }
            for c in pairs.remainder().chunks_exact(4) {
                bump_rgba(t0, u32::from_le_bytes([c[0], c[1], c[2], c[3]]));
            }
            bytes.len() / 4
        }
    }

    pub(crate) mod luma {
        use super::*;
        crate::cpu::multiversion! {
            fn count_luma(px: &[u32], t: &mut Tables) -> usize {
                let [t0, t1] = t;
                let mut l = [0u16; LUMA_BLOCK];
                for block in px.chunks(LUMA_BLOCK) {
                    let l = &mut l[..block.len()];
                    for (d, &p) in l.iter_mut().zip(block) {
                        *d = luma_u32(p) as u16;
                    }
                    let mut pairs = l.chunks_exact(2);
                    for c in &mut pairs {
                        t0[(c[0] & 1023) as usize] += 1;
                        t1[(c[1] & 1023) as usize] += 1;
                    }
                    for &v in pairs.remainder() {
                        t0[(v & 1023) as usize] += 1;
                    }
                }
                px.len()
            }
        }
    }
}

fn new_tables() -> Box<Tables> {
    Box::new([[0; SUB]; 2])
}

fn add_tables(mut a: Box<Tables>, b: Box<Tables>) -> Box<Tables> {
    for (x, y) in a.iter_mut().zip(b.iter()) {
        for (p, q) in x.iter_mut().zip(y.iter()) {
            *p += q;
        }
    }
    a
}

/// Counts the pixels of `bytes` (whole pixels, any alignment) into `t`.
fn count_bytes(t: &mut Tables, bytes: &[u8], kind: Kind) {
    match kind {
        Kind::Rgba => {
            kernels::count_rgba(bytes, t);
        }
        Kind::Luminance => crate::cpu::with_u32_blocks(bytes, 1024, |_, px| {
            kernels::luma::count_luma(px, t);
        }),
    }
}

/// Folds the image in parallel into per-task partial histograms and adds them up: packed
/// images in equal pieces whatever their shape, padded ones row by row.
fn cpu_histogram(view: &ImageView<'_>, kind: Kind) -> [u32; BINS] {
    let fold = |mut t: Box<Tables>, bytes: &[u8]| {
        count_bytes(&mut t, bytes, kind);
        t
    };
    let total = if view.pixel_count() == 0 {
        None
    } else if let Some(bytes) = view.packed_bytes() {
        bytes
            .par_chunks(PIECE * 4)
            .fold(new_tables, fold)
            .reduce_with(add_tables)
    } else {
        (0..view.height())
            .into_par_iter()
            .fold(new_tables, |t, y| fold(t, view.row(y)))
            .reduce_with(add_tables)
    };
    let mut out = [0u32; BINS];
    if let Some(t) = total {
        for (b, o) in out.iter_mut().enumerate() {
            *o = t[0][b] + t[1][b];
        }
    }
    out
}

// ---------------------------------------------------------------------------------------------
// OpenCL path.

/// `CLPIX_HISTOGRAM_REPLICAS`, read once: local copies per work-group on GPUs.
fn replicas_setting() -> Result<usize> {
    static R: OnceLock<Result<usize>> = OnceLock::new();
    R.get_or_init(|| match std::env::var("CLPIX_HISTOGRAM_REPLICAS") {
        Err(_) => Ok(1),
        Ok(v) => match v.trim().parse::<usize>() {
            Ok(r @ (1 | 2 | 4 | 8)) => Ok(r),
            _ => Err(Error::InvalidEnvironment {
                var: "CLPIX_HISTOGRAM_REPLICAS",
                value: v,
                expected: "1, 2, 4 or 8",
            }),
        },
    })
    .clone()
}

/// Work-groups for `n` pixels: enough to fill the device; on GPUs at least 64 pixels per
/// work-item, so that zeroing and merging the local copies is amortised. `scratch` is the local
/// memory of one group: above 16 KiB the grid shrinks so that its groups (8 per compute unit
/// at most) still fit the compute units' local memory at once; a second, partial wave of a
/// grid-stride kernel would cost more than the lost occupancy.
fn groups_for(cl: &ClEngine, n: usize, scratch: usize) -> usize {
    let t = cl.tuning;
    let per_group = if t.contiguous { 64 * 1024 } else { t.wg * 64 };
    let most = if t.contiguous || scratch <= 16 * 1024 {
        t.max_groups
    } else {
        (t.max_groups * 16 * 1024 / scratch).max(1)
    };
    n.div_ceil(per_group).clamp(1, most)
}

fn cl_histogram(cl: &Arc<ClEngine>, input: ImageInput<'_>, kind: Kind) -> Result<[u32; BINS]> {
    let t = cl.tuning;
    let (replicas, scratch) = if t.contiguous {
        // Two sub-tables, SUB counters apart (see cl/histogram.cl).
        (1, 2 * SUB * 4)
    } else {
        let mut r = replicas_setting()?;
        while r > 1 && (r * BINS * 4) as u64 > cl.info.local_mem_bytes {
            r /= 2;
        }
        (r, r * BINS * 4)
    };
    // The histogram is BINS u32s; it lives in a pooled partials buffer when one is large enough
    // (a fresh buffer per call costs more than the kernel on a GPU), else in its own.
    let words = BINS / 2;
    let pooled = cl.partials_len() >= words;
    let run = |hist: &opencl3::memory::Buffer<u64>| -> Result<[u32; BINS]> {
        let mut events = vec![cl.launch(
            "histogram",
            "hist_clear",
            &[Arg::buf(hist), Arg::U32(BINS as u32)],
            t.wg,
            t.wg,
        )?];
        cl.for_each_part(input, |buf, range| {
            let n = range.pixels();
            let groups = groups_for(cl, n, scratch);
            events.push(cl.launch(
                "histogram",
                kind.kernel(),
                &[
                    Arg::buf(buf),
                    Arg::U32(n as u32),
                    Arg::buf(hist),
                    Arg::Local(scratch),
                    Arg::U32(replicas as u32),
                ],
                groups * t.wg,
                t.wg,
            )?);
            Ok(())
        })?;
        let mut raw = [0u64; BINS / 2];
        cl.read(hist, 0, &mut raw)?;
        cl.finish(&events)?;
        let mut out = [0u32; BINS];
        out.copy_from_slice(bytemuck::cast_slice(&raw));
        Ok(out)
    };
    if pooled {
        cl.with_partials(run)
    } else {
        run(&cl.buffer::<u64>(words, "a histogram")?)
    }
}

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
