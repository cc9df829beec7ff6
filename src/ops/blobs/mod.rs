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
pub use centroid::Centroid;
pub(crate) mod kernels;

crate::ops::common::format_families!(fn family, "blobs", kernels::PROGRAM, probe);

/// The known-answer probe: the probe image of the call's format above half its largest key,
/// both connectivities with the labels, against the CPU.
fn probe(e: &Engine, operation: &'static str, call: &dyn std::any::Any) -> Result<Option<String>> {
    let Some(&(format, _, _)) = call.downcast_ref::<(Format, u32, BlobOptions)>() else {
        return Err(crate::ops::probe::unknown(operation));
    };
    let raw = crate::ops::probe::probe_raw(format);
    let half = format.max_key().unwrap_or(0) / 2;
    let both = |e: &Engine| -> Result<Vec<Blobs>> {
        [Connectivity::Eight, Connectivity::Four]
            .into_iter()
            .map(|c| {
                e.raw_blobs(
                    RawSource::Host(raw.view()),
                    half,
                    &BlobOptions::new().connectivity(c).background(3),
                )
            })
            .collect()
    };
    crate::ops::probe::compare("the blobs", both(e), both(&Engine::cpu()))
}

/// The blobs that pass the area rule, numbered 1..=n in the order of `accs` (the components in
/// the scan order of their first pixels), and each component's number (0 where dropped).
fn number_blobs(accs: &[Acc], opts: &BlobOptions) -> (Vec<Blob>, Vec<u32>) {
    let mut blobs = Vec::new();
    let number = accs
        .iter()
        .map(|a| {
            if opts.keeps(a.area) {
                blobs.push(a.blob(blobs.len() as u32 + 1));
                blobs.len() as u32
            } else {
                0
            }
        })
        .collect();
    (blobs, number)
}

/// Which neighbours join two foreground pixels into one blob.
///
/// ```
/// let c = clpix::Connectivity::default();
/// assert_eq!(c, clpix::Connectivity::Eight);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub enum Connectivity {
    /// Left, right, up and down.
    Four,
    /// The four, and the diagonals (the default, as OpenCV's and NPP's labelling).
    #[default]
    Eight,
}

impl Connectivity {
    /// Columns a run may end before another starts and still touch it (diagonals).
    fn slack(self) -> u32 {
        match self {
            Connectivity::Four => 0,
            Connectivity::Eight => 1,
        }
    }
}

/// The options of [`Engine::blobs`]: connectivity, the areas kept, the background subtracted
/// from the keys for the centroids, and whether the label image is made.
///
/// ```
/// use clpix::{BlobOptions, Connectivity};
/// let opts = BlobOptions::new().connectivity(Connectivity::Four).area(3, 500).background(10);
/// assert_eq!((opts.min_area, opts.max_area, opts.background), (3, 500, 10));
/// assert!(!BlobOptions::new().stats_only().labels);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct BlobOptions {
    /// 4- or 8-connected (8 unless set).
    pub connectivity: Connectivity,
    /// The smallest area kept, in pixels (1 unless set).
    pub min_area: u64,
    /// The largest area kept (no limit unless set).
    pub max_area: u64,
    /// Subtracted from each key for the weights of the centroid (0 unless set; at most the
    /// threshold, so that every weight is at least 1).
    pub background: u32,
    /// Whether the label image is made (yes unless [`stats_only`](Self::stats_only)).
    pub labels: bool,
}

impl Default for BlobOptions {
    fn default() -> Self {
        BlobOptions {
            connectivity: Connectivity::Eight,
            min_area: 1,
            max_area: u64::MAX,
            background: 0,
            labels: true,
        }
    }
}

impl BlobOptions {
    /// 8-connected, every area, no background, with the label image.
    ///
    /// ```
    /// assert_eq!(clpix::BlobOptions::new(), clpix::BlobOptions::default());
    /// ```
    pub fn new() -> Self {
        Self::default()
    }
    /// Sets the connectivity.
    ///
    /// ```
    /// let o = clpix::BlobOptions::new().connectivity(clpix::Connectivity::Four);
    /// assert_eq!(o.connectivity, clpix::Connectivity::Four);
    /// ```
    pub fn connectivity(mut self, connectivity: Connectivity) -> Self {
        self.connectivity = connectivity;
        self
    }
    /// Keeps the blobs of `min..=max` pixels only (the others are background in the labels).
    ///
    /// ```
    /// let o = clpix::BlobOptions::new().area(2, 9);
    /// assert_eq!((o.min_area, o.max_area), (2, 9));
    /// ```
    pub fn area(mut self, min: u64, max: u64) -> Self {
        self.min_area = min;
        self.max_area = max;
        self
    }
    /// Subtracts `level` from each key for the centroid's weights.
    ///
    /// ```
    /// assert_eq!(clpix::BlobOptions::new().background(100).background, 100);
    /// ```
    pub fn background(mut self, level: u32) -> Self {
        self.background = level;
        self
    }
    /// Statistics only: no label image is made (nor moved to the host).
    ///
    /// ```
    /// assert!(!clpix::BlobOptions::new().stats_only().labels);
    /// ```
    pub fn stats_only(mut self) -> Self {
        self.labels = false;
        self
    }
    fn keeps(&self, area: u64) -> bool {
        area >= self.min_area && area <= self.max_area
    }
}

/// One blob's statistics. Sums are exact integers; the key is the format's (the value of mono,
/// the luminance of colour), the weight of a pixel its key minus the background.
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
    /// The peak's key.
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
}

/// `n / d` as integer quotient plus the remainder's f64 fraction (`d` below 2^53: weights below
/// 2^16 on fewer than 2^32 pixels).
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

/// Pixels of a run summed at once in u64 (`Σ w·(x − x0)` below 2^16 · 2^40).
const BLOCK: u32 = 1 << 20;

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

    /// Adds the run `x0..x1` of row `y`, pixel `x`'s key `key(x)`.
    #[inline(always)]
    fn add_run(&mut self, key: impl Fn(usize) -> u32, x0: u32, x1: u32, y: u32, background: u32) {
        let (mut best, mut best_x) = (0u32, x0);
        let (mut ks, mut ws) = (0u64, 0u64);
        let mut b = x0;
        while b < x1 {
            let e = (b + BLOCK).min(x1);
            let (mut sw, mut sd) = (0u64, 0u64);
            for x in b..e {
                let k = key(x as usize);
                let w = (k - background) as u64;
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
    /// The blobs of an image of an integer-key format (mono 8/16-bit, RGB8, RGBA8, RGBA16): the
    /// connected components ([`Connectivity`]) of the pixels whose key is above `threshold`
    /// (as [`compact`](Engine::compact)'s), numbered 1..=n in the scan order of their first
    /// pixels, with their statistics ([`Blob`]) and, unless [`BlobOptions::stats_only`], the
    /// label image. Blobs outside the options' areas are dropped (background in the labels)
    /// before the numbering.
    ///
    /// Errors: a float format (not supported yet), a threshold above the format's largest key,
    /// `min_area > max_area`, a background above the threshold. An image without pixels has
    /// no blobs.
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
    /// [`download_array`](Self::download_array); the options' `labels` is not read.
    ///
    /// ```
    /// let img = image::GrayImage::from_fn(5, 2, |x, _| image::Luma([(x % 2 * 200) as u8]));
    /// let engine = clpix::Engine::new()?;
    /// let (blobs, labels) = engine.blobs_device(&img, 100, &clpix::BlobOptions::new())?;
    /// assert_eq!(blobs.len(), 2);
    /// assert_eq!(engine.array_stats(&labels)?.max, 2);
    /// assert_eq!(engine.download_array(&labels)?, [0, 1, 0, 2, 0, 0, 1, 0, 2, 0]);
    /// # Ok::<(), clpix::Error>(())
    /// ```
    pub fn blobs_device<'a, I: IntoImage<'a>>(
        &self,
        img: I,
        threshold: <I::Pixel as Pixel>::Key,
        options: &BlobOptions,
    ) -> Result<(Vec<Blob>, crate::device::DeviceArray<u32>)> {
        let t = <I::Pixel as Pixel>::key_order(threshold).unwrap_or(u32::MAX);
        let (blobs, labels) = img
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
        Ok((blobs, array))
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
        let (blobs, labels) = self.blob_parts(view, t, opts, to)?;
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
        Ok(Blobs { blobs, labels })
    }

    /// The checks, then the blobs of `view` and their labels where `to` says.
    fn blob_parts(
        &self,
        view: RawSource<'_>,
        t: u32,
        opts: &BlobOptions,
        to: LabelsTo,
    ) -> Result<(Vec<Blob>, Option<Labels>)> {
        let Some(max) = view.format().max_key() else {
            return Err(Error::invalid(
                "image format",
                format!("{:?}", view.format()),
                "an integer-key format (mono8, mono16, RGB8, RGBA8, RGBA16): blobs of float \
                 images are not built yet; scale them to u16",
            ));
        };
        if t > max {
            return Err(Error::invalid(
                "threshold",
                format!("{t} (largest key {max})"),
                "at most the format's largest key (255, 1023 or 65535)",
            ));
        }
        if opts.min_area > opts.max_area {
            return Err(Error::invalid(
                "blob areas",
                format!("{}..={}", opts.min_area, opts.max_area),
                "min_area at most max_area",
            ));
        }
        if opts.background > t {
            return Err(Error::invalid(
                "background",
                format!("{} (threshold {t})", opts.background),
                "at most the threshold, so that every blob pixel weighs at least 1",
            ));
        }
        check_pixel_count(view.width(), view.height())?;
        if view.pixel_count() == 0 {
            return Ok((
                Vec::new(),
                (to != LabelsTo::None).then(|| Labels::Host(Vec::new())),
            ));
        }
        self.dispatch(
            family(view.format()),
            &(view.format(), t, *opts),
            "blobs",
            view.pixel_count(),
            || {
                let host = view.host()?;
                let (blobs, labels) = cpu::cpu_blobs(&host.raw(), t, opts, to != LabelsTo::None);
                Ok((blobs, labels.map(Labels::Host)))
            },
            |cl| cl::cl_blobs(cl, &view, t, opts, to),
        )
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
