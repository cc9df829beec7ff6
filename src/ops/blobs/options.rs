//! The options of the blobs: connectivity, the areas kept, the background and the weights'
//! unit of f32 images, and whether the label image is made.

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
    pub(super) fn slack(self) -> u32 {
        match self {
            Connectivity::Four => 0,
            Connectivity::Eight => 1,
        }
    }
}

/// The options of [`Engine::blobs`](crate::Engine::blobs): connectivity, the areas kept, the
/// background subtracted from the keys for the centroids, the weights' unit of f32 images, and
/// whether the label image is made.
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
    /// threshold, so that every weight is at least 1). Of an f32 image, the bits of an f32
    /// ([`background_f32`](Self::background_f32); 0 is 0.0).
    pub background: u32,
    /// Of an f32 image, the weights' unit `2^-s` fixed to this `s` (chosen from the image's
    /// largest key unless set: see [`blob_weight_exponent`](crate::blob_weight_exponent)); an
    /// error for the integer formats, whose unit is 1.
    pub weight_exponent: Option<i32>,
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
            weight_exponent: None,
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
    /// Subtracts `level` from each key of an f32 image for the centroid's weights (stored as
    /// its bits in [`background`](Self::background)).
    ///
    /// ```
    /// let o = clpix::BlobOptions::new().background_f32(0.25);
    /// assert_eq!(f32::from_bits(o.background), 0.25);
    /// ```
    pub fn background_f32(mut self, level: f32) -> Self {
        self.background = level.to_bits();
        self
    }
    /// Fixes the weights' unit of an f32 image to `2^-exponent` (so that the chunks of one
    /// image, labelled apart, sum in one unit: [`blob_weight_exponent`](crate::blob_weight_exponent)
    /// of the whole image's largest key gives it).
    ///
    /// ```
    /// assert_eq!(clpix::BlobOptions::new().weight_exponent(20).weight_exponent, Some(20));
    /// ```
    pub fn weight_exponent(mut self, exponent: i32) -> Self {
        self.weight_exponent = Some(exponent);
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
    pub(super) fn keeps(&self, area: u64) -> bool {
        area >= self.min_area && area <= self.max_area
    }
}
