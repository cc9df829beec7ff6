//! `Engine.compact` on NumPy arrays of every pixel format ([`formats`]): the pixels whose key
//! is above a threshold, as a 1-D structured array built in Rust without the GIL (one
//! allocation, no Python object a record).
//!
//! RGBA8 gives the records of [`hit_dtype`] (x, y, luminance, rgba), as it always has; every
//! other format gives `x`, `y` (uint32), `key` (the key's dtype: uint8 for mono8, uint16 for
//! mono16, RGB8 and RGBA16, float32 for the float formats) and `value` (the pixel's channels
//! in the image's dtype: one, or a sub-array of 3 or 4), packed, native byte order.

use crate::convert::hit_dtype;
use crate::errors::{invalid, type_error, value_error};
use crate::formats::{self, any_image, AnyImage, Dtype, FormatPixel, Job};
use crate::records::{HitRecord, Scalar, Threshold};
use clpix::{CompactOrder, Engine, Format, ImageView};
use numpy::PyArray1;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyInt;

/// The pixels of `img` (any format) whose key is above `threshold`, in `order`, as records.
pub(crate) fn compact<'py>(
    py: Python<'py>,
    engine: &Engine,
    img: &Bound<'py, PyAny>,
    threshold: &Bound<'py, PyAny>,
    order: CompactOrder,
) -> PyResult<Bound<'py, PyAny>> {
    let img = any_image(img)?;
    let threshold = Threshold::of(&img, threshold)?;
    formats::run(py, engine, &img, CompactJob { threshold, order })?.into_array(py)
}

impl Threshold {
    /// The threshold for an image of `img`'s format: an integer in `0..=` the format's largest
    /// key (255, 1023 or 65535), or, for float32 images, a number (rounded to float32, as
    /// NumPy compares a float32 array with a Python float; NaN is clpix's own `ValueError`).
    fn of(img: &AnyImage<'_>, obj: &Bound<'_, PyAny>) -> PyResult<Self> {
        let (name, expected, max) = match img {
            AnyImage::LumaF32(_) | AnyImage::RgbaF32(_) => return Self::float(obj),
            AnyImage::Luma8(_) => ("mono8", "0..=255", 255),
            AnyImage::Rgb8(_) => ("rgb8", "0..=1023", 1023),
            AnyImage::Rgba8(_) => ("rgba8", "0..=1023", 1023),
            AnyImage::Luma16(_) => ("mono16", "0..=65535", 65535),
            AnyImage::Rgba16(_) => ("rgba16", "0..=65535", 65535),
        };
        let t = match obj.extract::<i64>() {
            Ok(t) => t,
            // An integer beyond i64: out of range.
            Err(_) if obj.is_instance_of::<PyInt>() => {
                return Err(invalid("threshold", obj, expected))
            }
            Err(_) => {
                return Err(type_error(format!(
                    "the threshold of a {name} image is an integer in {expected} (a float only \
                     for float32 images); got {}",
                    type_name(obj)
                )))
            }
        };
        match (u8::try_from(t), u16::try_from(t)) {
            (Ok(v), _) if max == 255 => Ok(Threshold::U8(v)),
            (_, Ok(v)) if max != 255 && i64::from(v) <= max => Ok(Threshold::U16(v)),
            _ => Err(invalid("threshold", t, expected)),
        }
    }

    /// A float32 image's threshold: any real number, rounded to float32.
    fn float(obj: &Bound<'_, PyAny>) -> PyResult<Self> {
        match obj.extract::<f64>() {
            Ok(t) => Ok(Threshold::F32(t as f32)),
            Err(_) if obj.is_instance_of::<PyInt>() => Err(value_error(
                "invalid threshold: an integer beyond float64's range".into(),
            )),
            Err(_) => Err(type_error(format!(
                "the threshold of a float32 image is a number (int or float); got {}",
                type_name(obj)
            ))),
        }
    }
}

/// The name of `obj`'s type, for messages.
fn type_name(obj: &Bound<'_, PyAny>) -> String {
    obj.get_type()
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "?".into())
}

/// The compaction of an image of any format.
struct CompactJob {
    threshold: Threshold,
    order: CompactOrder,
}

impl Job for CompactJob {
    type Out = Records;
    fn run<P: FormatPixel>(
        self,
        engine: &Engine,
        view: ImageView<'_, P>,
    ) -> clpix::Result<Records> {
        let threshold = <P::Key as Scalar>::of_threshold(self.threshold).ok_or_else(|| {
            clpix::Error::InvalidParameter {
                name: "threshold",
                value: "of another type".into(),
                expected: "a threshold of the format's key type",
            }
        })?;
        let hits = engine.compact(view, threshold, self.order)?;
        Ok(Records {
            bytes: <P::Hit as HitRecord>::records(&hits),
            format: <P::Hit as HitRecord>::FORMAT,
            fields: <P::Hit as HitRecord>::FIELDS,
            size: <P::Hit as HitRecord>::BYTES,
        })
    }
}

/// The records of a compaction, before they become a NumPy array.
pub(crate) struct Records {
    bytes: Vec<u8>,
    format: Format,
    fields: (Dtype, Dtype, usize),
    size: usize,
}

/// The records' dtype of each format but RGBA8 (in the order of `Format::ALL`).
static FORMAT_DTYPES: [PyOnceLock<Py<PyAny>>; 7] = [const { PyOnceLock::new() }; 7];

impl Records {
    /// The 1-D structured array over the bytes (no copy).
    fn into_array(self, py: Python<'_>) -> PyResult<Bound<'_, PyAny>> {
        let dtype = match self.format {
            Format::Rgba8 => hit_dtype(py)?.clone(),
            format => self.dtype(py, format)?,
        };
        PyArray1::from_vec(py, self.bytes).call_method1("view", (dtype,))
    }

    /// `[("x", uint32), ("y", uint32), ("key", key), ("value", channel, (channels,))]`
    /// (`value` a scalar field for one channel), packed, native byte order.
    fn dtype<'py>(&self, py: Python<'py>, format: Format) -> PyResult<Bound<'py, PyAny>> {
        let slot = Format::ALL
            .iter()
            .position(|&f| f == format)
            .and_then(|i| FORMAT_DTYPES.get(i))
            .ok_or_else(|| value_error(format!("no records for format {}", format.name())))?;
        let (key, value, channels) = self.fields;
        let dtype = slot.get_or_try_init(py, || -> PyResult<Py<PyAny>> {
            let u32_dtype = numpy::dtype::<u32>(py);
            let value_field = match channels {
                1 => ("value", value.numpy(py)).into_pyobject(py)?.into_any(),
                n => ("value", value.numpy(py), (n,))
                    .into_pyobject(py)?
                    .into_any(),
            };
            let fields: Vec<Bound<'_, PyAny>> = vec![
                ("x", u32_dtype.clone()).into_pyobject(py)?.into_any(),
                ("y", u32_dtype).into_pyobject(py)?.into_any(),
                ("key", key.numpy(py)).into_pyobject(py)?.into_any(),
                value_field,
            ];
            let dtype = py.import("numpy")?.getattr("dtype")?.call1((fields,))?;
            if dtype.getattr("itemsize")?.extract::<usize>()? != self.size {
                return Err(value_error(format!(
                    "the records of {} are not {} bytes",
                    format.name(),
                    self.size
                )));
            }
            Ok(dtype.unbind())
        })?;
        Ok(dtype.bind(py).clone())
    }
}
