//! `Engine.blobs` on NumPy arrays of every format (mono8, mono16, mono float32, RGB8, RGBA8,
//! RGBA16, RGBA float32): the connected components of the pixels whose key is above a threshold, as clpix's
//! `Engine::blobs` finds them (docs/SPEC.md, "Blobs"), run without the GIL: the label image as
//! a `(H, W)` uint32 array, and the statistics as a structured array of [`BLOB_DTYPE`]'s
//! fields, built in Rust (one allocation, no Python object a blob). Of float32 images the
//! sums are floats (the exact integer weights times their unit `2^-s`).
//!
//! `Engine._blobs_exact` (for `clpix.dask`) gives the statistics with four more fields: the
//! integer quotients and remainders of `Σ w·x` and `Σ w·y` by `Σ w`, from which the chunks of a
//! Dask image add the exact sums of the blobs they share; of float32 images too (the integer
//! weights in the unit the caller fixed, the peak as its order key).

use crate::errors::{invalid, type_error};
use crate::formats::{self, any_image_accepting, AnyImage, FormatPixel, Job};
use crate::records::Threshold;
use clpix::{Blob, BlobOptions, Connectivity, Engine, IntoImage};
use numpy::{PyArray1, PyArrayMethods};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;

/// What blobs accept, as the error messages say it.
const ACCEPTED: &str = "uint8 of shape (H, W), (H, W, 3) or (H, W, 4), or uint16 or float32 of \
                        shape (H, W) or (H, W, 4)";

/// The fields of the statistics, in order, with NumPy's type (native byte order), packed.
const FIELDS: [(&str, &str); 14] = [
    ("label", "=u4"),
    ("area", "=u8"),
    ("min_x", "=u4"),
    ("min_y", "=u4"),
    ("max_x", "=u4"),
    ("max_y", "=u4"),
    ("first_x", "=u4"),
    ("key_sum", "=u8"),
    ("weight_sum", "=u8"),
    ("centroid_x", "=f8"),
    ("centroid_y", "=f8"),
    ("peak_x", "=u4"),
    ("peak_y", "=u4"),
    ("peak_key", "=u4"),
];

/// The exact variant's added fields: `Σ w·x = wx_q · Σ w + wx_r` (`wx_r < Σ w`), the same in y.
const EXACT_FIELDS: [(&str, &str); 4] = [
    ("wx_q", "=u8"),
    ("wx_r", "=u8"),
    ("wy_q", "=u8"),
    ("wy_r", "=u8"),
];

/// Bytes of one record of [`FIELDS`], and of [`EXACT_FIELDS`] added.
const BYTES: usize = 4 + 8 + 5 * 4 + 2 * 8 + 2 * 8 + 3 * 4;
const EXACT_BYTES: usize = BYTES + 4 * 8;

static BLOB_DTYPE: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
static F32_DTYPE: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
static EXACT_DTYPE: PyOnceLock<Py<PyAny>> = PyOnceLock::new();

/// Which records: integer keys', float32 keys', or the exact variant's (of either).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Records {
    Integer,
    Float,
    Exact,
}

/// The structured dtype of the statistics (`clpix.BLOB_DTYPE`, `clpix.BLOB_F32_DTYPE`), or of
/// the exact variant's.
pub(crate) fn blob_dtype(py: Python<'_>, records: Records) -> PyResult<&Bound<'_, PyAny>> {
    let (slot, size) = match records {
        Records::Integer => (&BLOB_DTYPE, BYTES),
        Records::Float => (&F32_DTYPE, BYTES),
        Records::Exact => (&EXACT_DTYPE, EXACT_BYTES),
    };
    let exact = records == Records::Exact;
    let dtype = slot.get_or_try_init(py, || -> PyResult<Py<PyAny>> {
        let extra: &[(&str, &str)] = if exact { &EXACT_FIELDS } else { &[] };
        // Of float32 images the sums are float64 (the exact integer sums times the weights'
        // unit, one rounding) and the peak's key float32.
        let float = |(name, kind): (&'static str, &'static str)| match (records, name) {
            (Records::Float, "key_sum" | "weight_sum") => (name, "=f8"),
            (Records::Float, "peak_key") => (name, "=f4"),
            _ => (name, kind),
        };
        let fields = FIELDS.iter().map(|&f| float(f)).collect::<Vec<_>>();
        let fields = fields
            .iter()
            .chain(extra)
            .map(|&f| f.into_pyobject(py).map(Bound::into_any))
            .collect::<PyResult<Vec<_>>>()?;
        let dtype = py.import("numpy")?.getattr("dtype")?.call1((fields,))?;
        if dtype.getattr("itemsize")?.extract::<usize>()? != size {
            return Err(crate::errors::value_error(format!(
                "the blob records are not {size} bytes"
            )));
        }
        Ok(dtype.unbind())
    })?;
    Ok(dtype.bind(py))
}

/// An image of a format blobs and centroids take (any), and whether its keys are float32:
/// a `TypeError` for another dtype or object, a `ValueError` for another shape, each naming
/// what is accepted.
pub(crate) fn blob_image<'py>(img: &Bound<'py, PyAny>) -> PyResult<(AnyImage<'py>, bool)> {
    let image = any_image_accepting(img, ACCEPTED)?;
    let float = image.dtype() == crate::formats::Dtype::F32;
    Ok((image, float))
}

/// A background as clpix takes it: of float32 images a number, as float32's bits; else an
/// integer in `u32` (`range` says which, for the error).
pub(crate) fn background_of(
    level: &Bound<'_, PyAny>,
    float: bool,
    range: &'static str,
) -> PyResult<u32> {
    if float {
        // As float32 (a Python float rounded once).
        let v: f64 = level.extract().map_err(|_| {
            type_error(format!(
                "background: expected a number (a float32 image's background); got {level}"
            ))
        })?;
        return Ok((v as f32).to_bits());
    }
    let v: i128 = level.extract().map_err(|_| {
        type_error(format!(
            "background: expected an integer (an integer-key image's background); got {level}"
        ))
    })?;
    u32::try_from(v).map_err(|_| invalid("background", v, range))
}

/// The arguments of `Engine.blobs`, before they are checked.
pub(crate) struct BlobArgs<'a, 'py> {
    pub(crate) threshold: &'a Bound<'py, PyAny>,
    pub(crate) connectivity: i64,
    pub(crate) min_area: i128,
    pub(crate) max_area: Option<i128>,
    pub(crate) background: &'a Bound<'py, PyAny>,
    pub(crate) labels: bool,
    pub(crate) weight_exponent: Option<i32>,
}

impl BlobArgs<'_, '_> {
    /// clpix's options for an image of float keys or not; a `ValueError` for a connectivity
    /// other than 4 or 8, a negative area or background of integer keys, a `TypeError` for a
    /// background that is not a number (clpix checks the rest).
    fn options(&self, float: bool) -> PyResult<BlobOptions> {
        let connectivity = match self.connectivity {
            4 => Connectivity::Four,
            8 => Connectivity::Eight,
            c => return Err(invalid("connectivity", c, "4 or 8")),
        };
        let area = |name: &'static str, v: i128| {
            u64::try_from(v).map_err(|_| invalid(name, v, "an integer from 0 to 2^64 - 1"))
        };
        let min = area("min_area", self.min_area)?;
        let max = self
            .max_area
            .map_or(Ok(u64::MAX), |v| area("max_area", v))?;
        let background =
            background_of(self.background, float, "an integer from 0 to the threshold")?;
        // Of float32 images the background is an f32's bits (BlobOptions::background_f32).
        let options = BlobOptions::new()
            .connectivity(connectivity)
            .area(min, max)
            .background(background);
        let options = match self.weight_exponent {
            Some(s) => options.weight_exponent(s),
            None => options,
        };
        Ok(if self.labels {
            options
        } else {
            options.stats_only()
        })
    }
}

/// The blobs of `img` (any format): the label image (`(H, W)` uint32, or None) and the
/// statistics (of `blob_dtype`: the integer or float records, or the exact ones for `exact`).
pub(crate) fn blobs<'py>(
    py: Python<'py>,
    engine: &Engine,
    img: &Bound<'py, PyAny>,
    args: BlobArgs<'_, 'py>,
    exact: bool,
) -> PyResult<(Option<Bound<'py, PyAny>>, Bound<'py, PyAny>)> {
    let (image, float) = blob_image(img)?;
    let options = args.options(float)?;
    let threshold = Threshold::of(&image, args.threshold)?;
    let shape = image.shape();
    let job = BlobsJob {
        threshold,
        options,
        exact,
    };
    let (labels, records) = formats::run(py, engine, &image, job)?;
    let labels = match labels {
        Some(l) => Some(
            PyArray1::from_vec(py, l)
                .reshape([shape[0], shape[1]])?
                .into_any(),
        ),
        None => None,
    };
    let kind = match (exact, float) {
        (true, _) => Records::Exact,
        (false, true) => Records::Float,
        (false, false) => Records::Integer,
    };
    let stats = PyArray1::from_vec(py, records).call_method1("view", (blob_dtype(py, kind)?,))?;
    Ok((labels, stats))
}

/// `Engine.blobs` of an image of some format: the label image's values and the statistics'
/// bytes.
struct BlobsJob {
    threshold: Threshold,
    options: BlobOptions,
    exact: bool,
}

impl Job for BlobsJob {
    type Out = (Option<Vec<u32>>, Vec<u8>);
    fn run<'a, P: FormatPixel, I: IntoImage<'a, Pixel = P> + Copy + Send>(
        self,
        engine: &Engine,
        view: I,
    ) -> clpix::Result<Self::Out> {
        let found = engine.blobs(view, self.threshold.key::<P>()?, &self.options)?;
        let size = if self.exact { EXACT_BYTES } else { BYTES };
        let mut records = Vec::with_capacity(found.blobs.len() * size);
        // The weights' unit of float keys: exact sums times 2^-s (a power of two: one rounding,
        // of the integer to f64).
        let unit = (!self.exact && P::FORMAT.is_float()).then(|| 2f64.powi(-found.weight_exponent));
        for blob in &found.blobs {
            write(&mut records, blob, self.exact, unit);
        }
        Ok((found.labels.map(|l| l.into_raw()), records))
    }
}

/// `n = q · d + r` with `r < d` (`q` below 2^32: a coordinate; 0 and 0 for `d = 0`, which no
/// blob has).
fn quotient(n: u128, d: u64) -> (u64, u64) {
    if d == 0 {
        return (0, 0);
    }
    let d = u128::from(d);
    let (q, r) = (n / d, n % d);
    (
        u64::try_from(q).unwrap_or(u64::MAX),
        u64::try_from(r).unwrap_or(u64::MAX),
    )
}

/// Appends the record of `b` (as [`FIELDS`], and [`EXACT_FIELDS`] for `exact`; the sums as
/// f64 and the peak as f32 where the weights' `unit` is given).
fn write(out: &mut Vec<u8>, b: &Blob, exact: bool, unit: Option<f64>) {
    let (cx, cy) = b.centroid();
    out.extend_from_slice(&b.label.to_ne_bytes());
    out.extend_from_slice(&b.area.to_ne_bytes());
    for v in [b.min_x, b.min_y, b.max_x, b.max_y, b.first_x] {
        out.extend_from_slice(&v.to_ne_bytes());
    }
    match unit {
        Some(u) => {
            out.extend_from_slice(&(b.key_sum as f64 * u).to_ne_bytes());
            out.extend_from_slice(&(b.weight_sum as f64 * u).to_ne_bytes());
        }
        None => {
            out.extend_from_slice(&b.key_sum.to_ne_bytes());
            out.extend_from_slice(&b.weight_sum.to_ne_bytes());
        }
    }
    out.extend_from_slice(&cx.to_ne_bytes());
    out.extend_from_slice(&cy.to_ne_bytes());
    for v in [b.peak_x, b.peak_y] {
        out.extend_from_slice(&v.to_ne_bytes());
    }
    match unit {
        Some(_) => out.extend_from_slice(&b.peak_f32().to_ne_bytes()),
        None => out.extend_from_slice(&b.peak_key.to_ne_bytes()),
    }
    if exact {
        let (xq, xr) = quotient(b.weighted_x, b.weight_sum);
        let (yq, yr) = quotient(b.weighted_y, b.weight_sum);
        for v in [xq, xr, yq, yr] {
            out.extend_from_slice(&v.to_ne_bytes());
        }
    }
}
