//! `Engine.compact` and `Engine.compacted_image` on NumPy arrays of every pixel format
//! ([`formats`]): the pixels whose key is above a threshold, as a 1-D structured array built in
//! Rust without the GIL (one allocation, no Python object a record), or packed at the start of
//! an image of the input's format.
//!
//! The records are those of [`Records`]: RGBA8 gives the records of `HIT_DTYPE` (x, y,
//! luminance, rgba), as it always has; every other format gives `x`, `y` (uint32), `key` (the
//! key's dtype) and `value` (the pixel's channels in the image's dtype).

use crate::errors::{invalid, type_error, value_error};
use crate::formats::{self, any_image, AnyImage, FormatPixel, IntoValues, Job, Values};
use crate::records::{Records, Scalar, Threshold};
use clpix::{CompactOrder, Engine, Format, IntoImage};
use pyo3::prelude::*;
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

/// An array of `img`'s shape and dtype (any format, C-contiguous) whose first pixels in scan
/// order are those whose key is above `threshold`, in `order`, and whose others are zeros.
pub(crate) fn compacted_image<'py>(
    py: Python<'py>,
    engine: &Engine,
    img: &Bound<'py, PyAny>,
    threshold: &Bound<'py, PyAny>,
    order: CompactOrder,
) -> PyResult<Bound<'py, PyAny>> {
    let img = any_image(img)?;
    let threshold = Threshold::of(&img, threshold)?;
    let job = CompactJob { threshold, order };
    formats::run(py, engine, &img, CompactedImageJob(job))?.into_array(py, &img.shape())
}

impl Threshold {
    /// The threshold for an image of `img`'s format: an integer in `0..=` the format's largest
    /// key (255, 1023 or 65535), or, for float32 images, a number (rounded to float32, as
    /// NumPy compares a float32 array with a Python float; NaN is clpix's own `ValueError`).
    pub(crate) fn of(img: &AnyImage<'_>, obj: &Bound<'_, PyAny>) -> PyResult<Self> {
        let (name, expected, max) = match img.format() {
            Format::LumaF32 | Format::RgbaF32 => return Self::float(obj),
            Format::Luma8 => ("mono8", "0..=255", 255),
            Format::Rgb8 => ("rgb8", "0..=1023", 1023),
            Format::Rgba8 => ("rgba8", "0..=1023", 1023),
            Format::Luma16 => ("mono16", "0..=65535", 65535),
            Format::Rgba16 => ("rgba16", "0..=65535", 65535),
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

impl Threshold {
    /// The threshold as `P`'s key (of its type by [`Threshold::of`]).
    pub(crate) fn key<P: FormatPixel>(self) -> clpix::Result<P::Key> {
        <P::Key as Scalar>::of_threshold(self).ok_or_else(|| clpix::Error::InvalidParameter {
            name: "threshold",
            value: "of another type".into(),
            expected: "a threshold of the format's key type",
        })
    }
}

impl CompactJob {
    /// The threshold as `P`'s key.
    fn threshold<P: FormatPixel>(&self) -> clpix::Result<P::Key> {
        self.threshold.key::<P>()
    }
}

impl Job for CompactJob {
    type Out = Records;
    fn run<'a, P: FormatPixel, I: IntoImage<'a, Pixel = P> + Copy + Send>(
        self,
        engine: &Engine,
        view: I,
    ) -> clpix::Result<Records> {
        let hits = engine.compact(view, self.threshold::<P>()?, self.order)?;
        Ok(Records::of(&hits))
    }
}

/// The compacted image of an image of any format: its channels, rows packed.
struct CompactedImageJob(CompactJob);

impl Job for CompactedImageJob {
    type Out = Values;
    fn run<'a, P: FormatPixel, I: IntoImage<'a, Pixel = P> + Copy + Send>(
        self,
        engine: &Engine,
        view: I,
    ) -> clpix::Result<Values> {
        let threshold = self.0.threshold::<P>()?;
        let image = engine.compacted_image(view, threshold, self.0.order)?;
        Ok(IntoValues::into_values(image.into_raw()))
    }
}
