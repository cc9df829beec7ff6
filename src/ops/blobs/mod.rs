//! Blobs: the connected components of the pixels whose key is above a threshold, with canonical
//! labels and per-blob statistics (area, bounding box, sums of keys, the peak, the
//! intensity-weighted centroid from exact integer sums). docs/SPEC.md, "Blobs".
//!
//! The CPU path (`cpu.rs`) labels strips of rows in parallel by union-find over runs and joins
//! them at their seams.

use crate::device::{IntoImage, RawSource};
use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::image::check_pixel_count;
use crate::spec::{Format, Pixel};

mod centroid;
mod cl;
mod cpu;
mod options;
mod sums;
mod weights;
pub use centroid::Centroid;
pub use options::{BlobOptions, Connectivity};
use weights::Weigh;
pub use weights::blob_weight_exponent;
pub(crate) mod kernels;

crate::ops::common::format_families!(fn family, "blobs", kernels::PROGRAM, probe);

/// The known-answer probe: the probe image of the call's format above half its largest key
/// (above 0.0 for f32, whose infinities become ±1e30: an infinite blob pixel is an error on
/// every path), both connectivities with the labels, against the CPU.
fn probe(e: &Engine, operation: &'static str, call: &dyn std::any::Any) -> Result<Option<String>> {
    let Some(&(format, _, _)) = call.downcast_ref::<(Format, u32, BlobOptions)>() else {
        return Err(crate::ops::probe::unknown(operation));
    };
    let raw = crate::ops::probe::probe_raw(format);
    let view = raw.view();
    let finite: Vec<u32> = match format.is_float() {
        true => view
            .data
            .chunks_exact(4)
            .map(|b| {
                let v = f32::from_ne_bytes([b[0], b[1], b[2], b[3]]);
                match v.is_infinite() {
                    true => 1e30f32.copysign(v).to_bits(),
                    false => v.to_bits(),
                }
            })
            .collect(),
        false => Vec::new(),
    };
    let (view, t, options) = match format.max_key() {
        Some(max) => (view, max / 2, BlobOptions::new().background(3)),
        None => (
            crate::image::RawView {
                data: bytemuck::cast_slice(&finite),
                ..view
            },
            crate::spec::order_of_f32(0.0).unwrap_or(0),
            BlobOptions::new().background_f32(-0.5),
        ),
    };
    let both = |e: &Engine| -> Result<Vec<Blobs>> {
        [Connectivity::Eight, Connectivity::Four]
            .into_iter()
            .map(|c| e.raw_blobs(RawSource::Host(view), t, &options.connectivity(c)))
            .collect()
    };
    crate::ops::probe::compare("the blobs", both(e), both(&Engine::cpu()))
}

/// The blobs that pass the area rule, numbered 1..=n in the order of `accs` (the components in
/// the scan order of their first pixels), and each component's number (0 where dropped).
fn number_blobs(
    accs: impl ExactSizeIterator<Item = Acc>,
    opts: &BlobOptions,
) -> (Vec<Blob>, Vec<u32>) {
    let mut blobs = blob_vec(accs.len());
    let mut number = Vec::with_capacity(accs.len());
    for a in accs {
        if opts.keeps(a.area) {
            blobs.push(a.blob(blobs.len() as u32 + 1));
            number.push(blobs.len() as u32);
        } else {
            number.push(0);
        }
    }
    (blobs, number)
}

/// An empty vector for up to `n` blobs, its pages advised huge (millions of blobs are hundreds
/// of MB: far fewer page faults).
fn blob_vec(n: usize) -> Vec<Blob> {
    let v = Vec::with_capacity(n);
    crate::cpu::advise_huge_pages(v.as_ptr() as usize, n * std::mem::size_of::<Blob>());
    v
}

/// One blob's statistics. Sums are exact integers; the key is the format's (the value of mono,
/// the luminance of colour), the weight of a pixel its key minus the background. Of an f32
/// image the weights are integers in units of `2^-s` ([`Blobs::weight_exponent`]), the keys
/// order keys ([`peak_f32`](Self::peak_f32) gives the peak's float) and `key_sum` the weights'
/// sum, as `weight_sum` (a float's key has no integer unit).
///
/// ```
/// let img = image::GrayImage::from_fn(8, 4, |x, y| image::Luma([if x >= 4 && y < 2 { 10 + x as u8 } else { 0 }]));
/// let found = clpix::Engine::cpu().blobs(&img, 0, &clpix::BlobOptions::new())?;
/// let b = &found.blobs[0];
/// assert_eq!((b.label, b.area, b.min_x, b.max_x, b.min_y, b.max_y), (1, 8, 4, 7, 0, 1));
/// assert_eq!((b.peak_x, b.peak_y, b.peak_key, b.key_sum), (7, 0, 17, 2 * (14 + 15 + 16 + 17)));
/// let (cx, cy) = b.centroid();
/// assert_eq!((cx, cy), ((14.0 * 4.0 + 15.0 * 5.0 + 16.0 * 6.0 + 17.0 * 7.0) / 62.0, 0.5));
/// # Ok::<(), clpix::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Blob {
    /// Its number: 1..=n in the scan order of the blobs' first pixels.
    pub label: u32,
    /// Pixels.
    pub area: u64,
    /// The bounding box's first column.
    pub min_x: u32,
    /// The bounding box's first row (the row of the blob's first pixel in scan order).
    pub min_y: u32,
    /// The bounding box's last column (inclusive).
    pub max_x: u32,
    /// The bounding box's last row (inclusive).
    pub max_y: u32,
    /// The column of the blob's first pixel in scan order (in row `min_y`).
    pub first_x: u32,
    /// Σ key.
    pub key_sum: u64,
    /// Σ (key − background).
    pub weight_sum: u64,
    /// Σ (key − background) · x.
    pub weighted_x: u128,
    /// Σ (key − background) · y.
    pub weighted_y: u128,
    /// The column of the peak: the greatest key, the first in scan order among equals.
    pub peak_x: u32,
    /// The row of the peak.
    pub peak_y: u32,
    /// The peak's key (of an f32 image, its order key).
    pub peak_key: u32,
}

impl Blob {
    /// The intensity-weighted centroid `(Σ w·x / Σ w, Σ w·y / Σ w)`, pixel centres at integer
    /// coordinates: the quotient in integers, the remainder divided in f64 and added (one
    /// rounding each; the same bits from every path).
    ///
    /// ```
    /// let img = image::GrayImage::from_fn(3, 1, |x, _| image::Luma([[10, 30, 0][x as usize]]));
    /// let b = clpix::Engine::cpu().blobs(&img, 0, &clpix::BlobOptions::new())?.blobs[0];
    /// assert_eq!(b.centroid(), (0.75, 0.0));
    /// # Ok::<(), clpix::Error>(())
    /// ```
    pub fn centroid(&self) -> (f64, f64) {
        (
            ratio(self.weighted_x, self.weight_sum),
            ratio(self.weighted_y, self.weight_sum),
        )
    }

    /// The peak's key as the f32 it is, of a blob of an f32 image.
    ///
    /// ```
    /// let img = image::ImageBuffer::from_fn(3, 1, |x, _| image::Luma([[0.5f32, 2.25, 0.0][x as usize]]));
    /// let b = clpix::Engine::cpu().blobs(&img, 0.25, &clpix::BlobOptions::new())?.blobs[0];
    /// assert_eq!((b.peak_x, b.peak_f32()), (1, 2.25));
    /// # Ok::<(), clpix::Error>(())
    /// ```
    pub fn peak_f32(&self) -> f32 {
        crate::spec::f32_of_order(self.peak_key)
    }
}

/// `n / d` as integer quotient plus the remainder's f64 fraction (one rounding of the fraction,
/// one of the sum).
fn ratio(n: u128, d: u64) -> f64 {
    if d == 0 {
        return f64::NAN;
    }
    let (q, r) = (n / d as u128, n % d as u128);
    q as f64 + r as f64 / d as f64
}

/// A label image: `u32` per pixel, 0 for background, blobs 1..=n.
pub type LabelImage = image::ImageBuffer<image::Luma<u32>, Vec<u32>>;

/// What [`Engine::blobs`] finds: the blobs' statistics in label order, and the label image
/// unless [`BlobOptions::stats_only`].
///
/// ```
/// let img = image::GrayImage::from_fn(5, 1, |x, _| image::Luma([(x % 2 * 200) as u8]));
/// let found = clpix::Engine::cpu().blobs(&img, 100, &clpix::BlobOptions::new())?;
/// assert_eq!(found.blobs.len(), 2);
/// assert_eq!(found.labels.unwrap().into_raw(), [0, 1, 0, 2, 0]);
/// # Ok::<(), clpix::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Blobs {
    /// Each blob, blob `i` labelled `i + 1`.
    pub blobs: Vec<Blob>,
    /// The label image, when asked for.
    pub labels: Option<LabelImage>,
    /// The weights' unit is `2^-weight_exponent`: 0 for the integer formats, chosen from the
    /// largest key of an f32 image (or [`BlobOptions::weight_exponent`]).
    pub weight_exponent: i32,
}

/// A blob's sums while it is being found.
#[derive(Debug, Clone, Copy)]
struct Acc {
    area: u64,
    min_x: u32,
    min_y: u32,
    max_x: u32,
    max_y: u32,
    first_x: u32,
    key_sum: u64,
    weight_sum: u64,
    wx: u128,
    wy: u128,
    peak_key: u32,
    peak_x: u32,
    peak_y: u32,
}

/// Pixels of a run summed at once in u64 (`Σ w·(x − x0)` below 2^32 · 2^16 · 2^16).
const BLOCK: u32 = 1 << 16;

impl Acc {
    const EMPTY: Acc = Acc {
        area: 0,
        min_x: u32::MAX,
        min_y: u32::MAX,
        max_x: 0,
        max_y: 0,
        first_x: u32::MAX,
        key_sum: 0,
        weight_sum: 0,
        wx: 0,
        wy: 0,
        peak_key: 0,
        peak_x: u32::MAX,
        peak_y: u32::MAX,
    };

    /// Whether a pixel of key `k` at `(x, y)` is a better peak than this one's.
    fn beats(&self, k: u32, x: u32, y: u32) -> bool {
        self.area == 0
            || k > self.peak_key
            || (k == self.peak_key && (y, x) < (self.peak_y, self.peak_x))
    }

    /// Adds the run `x0..x1` of row `y`, pixel `x`'s key `key(x)`, a key's weight `weight(k)`.
    #[inline(always)]
    fn add_run(
        &mut self,
        key: impl Fn(usize) -> u32,
        weight: impl Fn(u32) -> u64,
        (x0, x1): (u32, u32),
        y: u32,
    ) {
        let (mut best, mut best_x) = (0u32, x0);
        let (mut ks, mut ws) = (0u64, 0u64);
        let mut b = x0;
        while b < x1 {
            let e = (b + BLOCK).min(x1);
            let (mut sw, mut sd) = (0u64, 0u64);
            for x in b..e {
                let k = key(x as usize);
                let w = weight(k);
                ks += k as u64;
                sw += w;
                sd += w * (x - b) as u64;
                if k > best {
                    best = k;
                    best_x = x;
                }
            }
            ws += sw;
            self.wx += sw as u128 * b as u128 + sd as u128;
            b = e;
        }
        self.key_sum += ks;
        self.weight_sum += ws;
        self.wy += ws as u128 * y as u128;
        // `best` is the run's first greatest key: every key of a run is above the threshold,
        // so above 0.
        if self.beats(best, best_x, y) {
            (self.peak_key, self.peak_x, self.peak_y) = (best, best_x, y);
        }
        if (y, x0) < (self.min_y, self.first_x) {
            self.first_x = x0;
        }
        self.area += (x1 - x0) as u64;
        self.min_x = self.min_x.min(x0);
        self.max_x = self.max_x.max(x1 - 1);
        self.min_y = self.min_y.min(y);
        self.max_y = self.max_y.max(y);
    }

    fn merge(&mut self, o: &Acc) {
        if o.area == 0 {
            return;
        }
        if self.beats(o.peak_key, o.peak_x, o.peak_y) {
            (self.peak_key, self.peak_x, self.peak_y) = (o.peak_key, o.peak_x, o.peak_y);
        }
        if (o.min_y, o.first_x) < (self.min_y, self.first_x) {
            self.first_x = o.first_x;
        }
        self.area += o.area;
        self.min_x = self.min_x.min(o.min_x);
        self.min_y = self.min_y.min(o.min_y);
        self.max_x = self.max_x.max(o.max_x);
        self.max_y = self.max_y.max(o.max_y);
        self.key_sum += o.key_sum;
        self.weight_sum += o.weight_sum;
        self.wx += o.wx;
        self.wy += o.wy;
    }

    fn blob(&self, label: u32) -> Blob {
        Blob {
            label,
            area: self.area,
            min_x: self.min_x,
            min_y: self.min_y,
            max_x: self.max_x,
            max_y: self.max_y,
            first_x: self.first_x,
            key_sum: self.key_sum,
            weight_sum: self.weight_sum,
            weighted_x: self.wx,
            weighted_y: self.wy,
            peak_x: self.peak_x,
            peak_y: self.peak_y,
            peak_key: self.peak_key,
        }
    }
}

impl Engine {
    /// The blobs of an image of any format: the
    /// connected components ([`Connectivity`]) of the pixels whose key is above `threshold`
    /// (as [`compact`](Engine::compact)'s), numbered 1..=n in the scan order of their first
    /// pixels, with their statistics ([`Blob`]) and, unless [`BlobOptions::stats_only`], the
    /// label image. Blobs outside the options' areas are dropped (background in the labels)
    /// before the numbering. Of an f32 image the weights are integers in one unit `2^-s` for
    /// the call ([`Blobs::weight_exponent`], [`blob_weight_exponent`](crate::blob_weight_exponent)),
    /// NaN is never a blob's.
    ///
    /// Errors: a threshold above the format's largest key, `min_area > max_area`, a background
    /// above the threshold (or not finite), a blob pixel of key +inf (no finite weight), a
    /// weight exponent set for an integer format or too large for the image's keys. An image
    /// without pixels has no blobs.
    ///
    /// ```
    /// use clpix::{BlobOptions, Connectivity};
    /// // Two diagonal pixels: one blob 8-connected, two 4-connected.
    /// let img = image::ImageBuffer::from_fn(3, 3, |x, y| image::Luma([if x == y && x < 2 { 60_000u16 } else { 0 }]));
    /// let engine = clpix::Engine::new()?;
    /// assert_eq!(engine.blobs(&img, 1000, &BlobOptions::new())?.blobs.len(), 1);
    /// let four = engine.blobs(&img, 1000, &BlobOptions::new().connectivity(Connectivity::Four))?;
    /// assert_eq!(four.labels.unwrap().into_raw(), [1, 0, 0, 0, 2, 0, 0, 0, 0]);
    /// # Ok::<(), clpix::Error>(())
    /// ```
    pub fn blobs<'a, I: IntoImage<'a>>(
        &self,
        img: I,
        threshold: <I::Pixel as Pixel>::Key,
        options: &BlobOptions,
    ) -> Result<Blobs> {
        let t = <I::Pixel as Pixel>::key_order(threshold).unwrap_or(u32::MAX);
        img.into_any()
            .0
            .with_source(|src| self.raw_blobs(src, t, options))
    }

    /// [`blobs`](Self::blobs) with the label image kept on the engine: a
    /// [`DeviceArray`](crate::DeviceArray) of `width × height` labels in row order (host
    /// memory on the CPU engine), for array operations or
    /// [`download_array`](Self::download_array), beside the blobs (their `labels` None); the
    /// options' `labels` is not read.
    ///
    /// ```
    /// let img = image::GrayImage::from_fn(5, 2, |x, _| image::Luma([(x % 2 * 200) as u8]));
    /// let engine = clpix::Engine::new()?;
    /// let (found, labels) = engine.blobs_device(&img, 100, &clpix::BlobOptions::new())?;
    /// assert_eq!(found.blobs.len(), 2);
    /// assert_eq!(engine.array_stats(&labels)?.max, 2);
    /// assert_eq!(engine.download_array(&labels)?, [0, 1, 0, 2, 0, 0, 1, 0, 2, 0]);
    /// # Ok::<(), clpix::Error>(())
    /// ```
    pub fn blobs_device<'a, I: IntoImage<'a>>(
        &self,
        img: I,
        threshold: <I::Pixel as Pixel>::Key,
        options: &BlobOptions,
    ) -> Result<(Blobs, crate::device::DeviceArray<u32>)> {
        let t = <I::Pixel as Pixel>::key_order(threshold).unwrap_or(u32::MAX);
        let (blobs, labels, weight_exponent) = img
            .into_any()
            .0
            .with_source(|src| self.blob_parts(src, t, options, LabelsTo::Device))?;
        let array = match labels {
            Some(Labels::Device(a)) => a,
            Some(Labels::Host(v)) => crate::device::DeviceArray {
                len: v.len(),
                storage: crate::device::ArrayStorage::Host(v),
            },
            None => crate::device::DeviceArray {
                len: 0,
                storage: crate::device::ArrayStorage::Host(Vec::new()),
            },
        };
        let found = Blobs {
            blobs,
            labels: None,
            weight_exponent,
        };
        Ok((found, array))
    }

    pub(crate) fn raw_blobs(
        &self,
        view: RawSource<'_>,
        t: u32,
        opts: &BlobOptions,
    ) -> Result<Blobs> {
        let to = if opts.labels {
            LabelsTo::Host
        } else {
            LabelsTo::None
        };
        let (blobs, labels, weight_exponent) = self.blob_parts(view, t, opts, to)?;
        let labels = match labels {
            Some(Labels::Host(l)) => {
                Some(LabelImage::from_raw(view.width(), view.height(), l).ok_or(
                    Error::ImageTooLarge {
                        width: view.width() as u64,
                        height: view.height() as u64,
                        reason: "the label image does not match its size",
                    },
                )?)
            }
            _ => None,
        };
        Ok(Blobs {
            blobs,
            labels,
            weight_exponent,
        })
    }

    /// The checks, then the blobs of `view`, their labels where `to` says, and the exponent of
    /// the weights' unit.
    fn blob_parts(
        &self,
        view: RawSource<'_>,
        t: u32,
        opts: &BlobOptions,
        to: LabelsTo,
    ) -> Result<(Vec<Blob>, Option<Labels>, i32)> {
        let format = view.format();
        match format.max_key() {
            Some(max) if t > max => {
                return Err(Error::invalid(
                    "threshold",
                    format!("{t} (largest key {max})"),
                    "at most the format's largest key (255, 1023 or 65535)",
                ));
            }
            Some(_) if opts.weight_exponent.is_some() => {
                return Err(Error::invalid(
                    "weight exponent",
                    format!("{:?} for a {format:?} image", opts.weight_exponent),
                    "None: the weights of integer keys are integers already (f32 images only)",
                ));
            }
            Some(_) if opts.background > t => {
                return Err(Error::invalid(
                    "background",
                    format!("{} (threshold {t})", opts.background),
                    "at most the threshold, so that every blob pixel weighs at least 1",
                ));
            }
            Some(_) => {}
            None => weights::check_f32_background(opts.background, t)?,
        }
        if opts.min_area > opts.max_area {
            return Err(Error::invalid(
                "blob areas",
                format!("{}..={}", opts.min_area, opts.max_area),
                "min_area at most max_area",
            ));
        }
        check_pixel_count(view.width(), view.height())?;
        if view.pixel_count() == 0 {
            let labels = (to != LabelsTo::None).then(|| Labels::Host(Vec::new()));
            let exponent = Weigh::of(format, opts, None)?.exponent();
            return Ok((Vec::new(), labels, exponent));
        }
        let on_cpu = || {
            let host = view.host()?;
            let (blobs, labels, weigh) =
                cpu::cpu_blobs(&host.raw(), t, opts, to != LabelsTo::None)?;
            Ok((blobs, labels.map(Labels::Host), weigh))
        };
        let (mut blobs, labels, weigh) = self.dispatch(
            family(format),
            &(format, t, *opts),
            "blobs",
            view.pixel_count(),
            on_cpu,
            // RGBA f32's keys are float arithmetic: where denormals are flushed, the CPU's.
            |cl| match format != Format::RgbaF32 || cl.info.f32_denormals {
                true => cl::cl_blobs(cl, &view, t, opts, to),
                false => on_cpu(),
            },
        )?;
        if format.is_float() {
            // A float's key has no integer unit: its sum is the weights'.
            for b in &mut blobs {
                b.key_sum = b.weight_sum;
            }
        }
        Ok((blobs, labels, weigh.exponent()))
    }
}

/// Where the label image goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum LabelsTo {
    None,
    Host,
    Device,
}

/// A label image made: on the host, or kept on the engine.
enum Labels {
    Host(Vec<u32>),
    Device(crate::device::DeviceArray<u32>),
}
