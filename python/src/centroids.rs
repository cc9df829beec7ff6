//! `Engine.centroids` on NumPy arrays of every format (as `Engine.blobs` takes): the
//! intensity-weighted centroid of the `(2 radius + 1)²` window around each given pixel, as
//! clpix's `Engine::centroids` computes it, run without the GIL, returned as a structured
//! array of [`CENTROID_DTYPE`]'s fields (of float32 images the weight sum as float64: the exact
//! integer sum times the weights' unit `2^-s`).
//!
//! The pixels are an `(N, 2)` integer array-like of `(x, y)`, or records with fields `x` and
//! `y` (what `extremes` and `compact` give).

use crate::blobs::{background_of, blob_image};
use crate::errors::{invalid, type_error, value_error};
use crate::formats::{self, shape_text, FormatPixel, Job};
use clpix::{Engine, IntoImage};
use numpy::{PyArray1, PyArrayMethods, PyUntypedArray, PyUntypedArrayMethods};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PySlice;

/// What `points` may be, as the error messages say it.
const POINTS: &str = "an (N, 2) array-like of integer (x, y), or a 1-D structured array with \
                      integer fields x and y (as extremes and compact give)";

/// The fields of a centroid record, in order, with NumPy's type (native byte order), packed.
const FIELDS: [(&str, &str); 3] = [("x", "=f8"), ("y", "=f8"), ("weight_sum", "=u8")];

/// Bytes of one record.
const BYTES: usize = 3 * 8;

static CENTROID_DTYPE: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
static CENTROID_F32_DTYPE: PyOnceLock<Py<PyAny>> = PyOnceLock::new();

/// The structured dtype of the centroids (`clpix.CENTROID_DTYPE`), or of float32 images'
/// (`clpix.CENTROID_F32_DTYPE`: the weight sum as float64).
pub(crate) fn centroid_dtype(py: Python<'_>, float: bool) -> PyResult<&Bound<'_, PyAny>> {
    let slot = if float {
        &CENTROID_F32_DTYPE
    } else {
        &CENTROID_DTYPE
    };
    let dtype = slot.get_or_try_init(py, || -> PyResult<Py<PyAny>> {
        let fields = FIELDS
            .iter()
            .map(|&(name, kind)| match (float, name) {
                (true, "weight_sum") => (name, "=f8"),
                _ => (name, kind),
            })
            .map(|f| f.into_pyobject(py).map(Bound::into_any))
            .collect::<PyResult<Vec<_>>>()?;
        let dtype = py.import("numpy")?.getattr("dtype")?.call1((fields,))?;
        if dtype.getattr("itemsize")?.extract::<usize>()? != BYTES {
            return Err(value_error(format!(
                "the centroid records are not {BYTES} bytes"
            )));
        }
        Ok(dtype.unbind())
    })?;
    Ok(dtype.bind(py))
}

/// The centroids of the windows around `points` in `img` (any format), `radius` and
/// `background` (an integer, or a number for float32 images) as `Engine::centroids` takes
/// them: a structured array of [`centroid_dtype`], one record a point, in the points' order.
pub(crate) fn centroids<'py>(
    py: Python<'py>,
    engine: &Engine,
    img: &Bound<'py, PyAny>,
    points: &Bound<'py, PyAny>,
    radius: i64,
    background: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    let (image, float) = blob_image(img)?;
    let radius = u32::try_from(radius)
        .map_err(|_| invalid("radius", radius, "an integer from 0 to 2^32 - 1"))?;
    let background = background_of(background, float, "an integer from 0 to 2^32 - 1")?;
    let at = places(points)?;
    let job = CentroidsJob {
        at,
        radius,
        background,
    };
    let records = formats::run(py, engine, &image, job)?;
    PyArray1::from_vec(py, records).call_method1("view", (centroid_dtype(py, float)?,))
}

/// The pixels of `points` (see the module's documentation): a `TypeError` for a non-integer
/// dtype or records without `x` and `y`, a `ValueError` for another shape or a coordinate
/// that no pixel has (negative, or above `u32::MAX`; clpix checks the image's bounds).
fn places(points: &Bound<'_, PyAny>) -> PyResult<Vec<(u32, u32)>> {
    let py = points.py();
    let array = py
        .import("numpy")?
        .call_method1("asarray", (points,))
        .map_err(|e| {
            let msg = format!("points must be {POINTS}; got {e}");
            if e.is_instance_of::<PyTypeError>(py) {
                type_error(msg)
            } else {
                value_error(msg)
            }
        })?;
    let untyped = array
        .cast::<PyUntypedArray>()
        .map_err(|_| type_error(format!("points must be {POINTS}")))?;
    let shape = untyped.shape().to_vec();
    let named = !array.getattr("dtype")?.getattr("names")?.is_none();
    let (xs, ys) = if named {
        if shape.len() != 1 {
            return Err(value_error(format!(
                "points must be {POINTS}; got records of shape {}",
                shape_text(&shape)
            )));
        }
        let field = |name: &str| {
            array.get_item(name).map_err(|_| {
                type_error(format!(
                    "points must be {POINTS}; got records of dtype {} (no field {name:?})",
                    untyped.dtype()
                ))
            })
        };
        (field("x")?, field("y")?)
    } else {
        if matches!(shape[..], [0] | [0, 2]) {
            // No points (`[]` is a float64 array of shape (0,)).
            return Ok(Vec::new());
        }
        integer_kind(&array)?;
        match shape[..] {
            [_, 2] => {}
            _ => {
                return Err(value_error(format!(
                    "points must be {POINTS}; got an array of shape {}",
                    shape_text(&shape)
                )))
            }
        }
        let all = PySlice::full(py);
        (array.get_item((all.clone(), 0))?, array.get_item((all, 1))?)
    };
    let (xs, ys) = (coordinates(&xs)?, coordinates(&ys)?);
    xs.into_iter()
        .zip(ys)
        .map(|(x, y)| match (u32::try_from(x), u32::try_from(y)) {
            (Ok(x), Ok(y)) => Ok((x, y)),
            _ => Err(invalid(
                "centroid place",
                format!("({x}, {y})"),
                "a pixel of the image",
            )),
        })
        .collect()
}

/// Whether the array's dtype is unsigned (`"u"`) or signed (`"i"`): a `TypeError` for another.
fn integer_kind(array: &Bound<'_, PyAny>) -> PyResult<String> {
    let dtype = array.getattr("dtype")?;
    let kind: String = dtype.getattr("kind")?.extract()?;
    match kind.as_str() {
        "u" | "i" => Ok(kind),
        _ => Err(type_error(format!(
            "points must be {POINTS}; got dtype {dtype}"
        ))),
    }
}

/// The values of a 1-D integer array (of any integer dtype, any strides).
fn coordinates(column: &Bound<'_, PyAny>) -> PyResult<Vec<i128>> {
    let py = column.py();
    let values: Vec<i128> = match integer_kind(column)?.as_str() {
        "u" => column
            .call_method1("astype", (numpy::dtype::<u64>(py),))?
            .cast_into::<PyArray1<u64>>()?
            .readonly()
            .as_array()
            .iter()
            .map(|&v| i128::from(v))
            .collect(),
        _ => column
            .call_method1("astype", (numpy::dtype::<i64>(py),))?
            .cast_into::<PyArray1<i64>>()?
            .readonly()
            .as_array()
            .iter()
            .map(|&v| i128::from(v))
            .collect(),
    };
    Ok(values)
}

/// `Engine.centroids` of an image of some format: the records' bytes.
struct CentroidsJob {
    at: Vec<(u32, u32)>,
    radius: u32,
    background: u32,
}

impl Job for CentroidsJob {
    type Out = Vec<u8>;
    fn run<'a, P: FormatPixel, I: IntoImage<'a, Pixel = P> + Copy + Send>(
        self,
        engine: &Engine,
        view: I,
    ) -> clpix::Result<Vec<u8>> {
        let found = engine.centroids(view, &self.at, self.radius, self.background)?;
        let mut out = Vec::with_capacity(found.len() * BYTES);
        for c in &found {
            out.extend_from_slice(&c.x.to_ne_bytes());
            out.extend_from_slice(&c.y.to_ne_bytes());
            match P::FORMAT.is_float() {
                // The exact sum times its unit 2^-s (one rounding, of the integer to f64).
                true => out.extend_from_slice(
                    &(c.weight_sum as f64 * 2f64.powi(-c.weight_exponent)).to_ne_bytes(),
                ),
                false => out.extend_from_slice(&c.weight_sum.to_ne_bytes()),
            }
        }
        Ok(out)
    }
}
