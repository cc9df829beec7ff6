//! The bins of the histograms with bins per call (docs/SPEC.md, "Histograms of every format"):
//! what a call asks for, checked.

use crate::error::{Error, Result};

/// The bins of a histogram: `count` bins over the values `lo..=hi`.
///
/// For integer formats `lo` and `hi` are integers and the bins split the `hi − lo + 1` values
/// evenly: value `v` (with `lo ≤ v ≤ hi`) falls in bin `⌊(v − lo) · count / (hi − lo + 1)⌋`.
/// For f32 formats the bins are those of `numpy.histogram(values.astype(numpy.float64),
/// bins=count, range=(lo, hi))`, exactly: `count` equal bins between the f64 edges
/// `numpy.linspace(lo, hi, count + 1)`, each closed below and open above but the last, which
/// holds `hi`. Values outside (and NaN) are not counted. (NumPy 2 given the f32 array itself
/// makes f32 edges: its bins differ from these only for values within an f32 ulp of an edge.)
///
/// ```
/// let b = clpix::Bins::new(4096, 0.0, 65535.0)?;
/// assert_eq!((b.count(), b.lo(), b.hi()), (4096, 0.0, 65535.0));
/// assert!(clpix::Bins::new(0, 0.0, 1.0).is_err());
/// assert!(clpix::Bins::new(8, 2.0, 1.0).is_err());
/// # Ok::<(), clpix::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bins {
    count: u32,
    lo: f64,
    hi: f64,
}

/// The most bins a histogram may have.
pub const MAX_BINS: u32 = 1 << 20;

impl Bins {
    /// `count` bins over `lo..=hi`: an error unless `1 ≤ count ≤ MAX_BINS` and `lo ≤ hi`, both
    /// finite.
    ///
    /// ```
    /// assert!(clpix::Bins::new(256, 0.0, 255.0).is_ok());
    /// assert!(clpix::Bins::new(16, 0.0, f64::NAN).is_err());
    /// ```
    pub fn new(count: u32, lo: f64, hi: f64) -> Result<Bins> {
        if count == 0 || count > MAX_BINS {
            return Err(Error::invalid(
                "bin count",
                count,
                "1 to 1,048,576 bins (clpix::MAX_BINS)",
            ));
        }
        if !(lo.is_finite() && hi.is_finite() && lo <= hi) {
            return Err(Error::invalid(
                "histogram range",
                format!("{lo}..={hi}"),
                "finite bounds with lo <= hi",
            ));
        }
        Ok(Bins { count, lo, hi })
    }

    /// The number of bins.
    ///
    /// ```
    /// assert_eq!(clpix::Bins::new(10, 0.0, 1.0)?.count(), 10);
    /// # Ok::<(), clpix::Error>(())
    /// ```
    pub fn count(&self) -> u32 {
        self.count
    }

    /// The lowest value counted.
    ///
    /// ```
    /// assert_eq!(clpix::Bins::new(10, -1.0, 1.0)?.lo(), -1.0);
    /// # Ok::<(), clpix::Error>(())
    /// ```
    pub fn lo(&self) -> f64 {
        self.lo
    }

    /// The highest value counted.
    ///
    /// ```
    /// assert_eq!(clpix::Bins::new(10, -1.0, 1.0)?.hi(), 1.0);
    /// # Ok::<(), clpix::Error>(())
    /// ```
    pub fn hi(&self) -> f64 {
        self.hi
    }
}

/// The value that gets a bin: each channel, or the key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Of {
    Channels,
    Key,
}
