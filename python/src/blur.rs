//! `Engine.gaussian_blur` on NumPy arrays of every pixel format: RGBA8 (`(H, W, 4)` `uint8`)
//! and RGBA f32 (`(H, W, 4)` `float32`) through their own paths (as before the other formats
//! were taken), every other format of [`formats`] through clpix's generic
//! `Engine::gaussian_blur` and `gaussian_blur_into`, with the GIL released.

use crate::convert::{image_f32, image_out, image_out_array, image_u8};
use crate::errors::{type_error, value_error, IntoPyResult};
use crate::formats::{
    self, any_image, shape_text, AnyImage, Dtype, FormatPixel, IntoValues, Job, Values,
};
use clpix::{Engine, GaussianBlur, IntoImage};
use numpy::{
    BorrowError, Element, PyArrayDescrMethods, PyArrayDyn, PyArrayMethods, PyReadwriteArrayDyn,
    PyUntypedArray, PyUntypedArrayMethods,
};
use pyo3::prelude::*;

/// The blur of `img` (any format) with `blur`, into `out` when given (returned), else a fresh
/// array of the image's shape and dtype.
pub(crate) fn gaussian_blur<'py>(
    py: Python<'py>,
    engine: &Engine,
    img: &Bound<'py, PyAny>,
    blur: GaussianBlur,
    out: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyAny>> {
    match rgba_dtype(img) {
        Some(Dtype::U8) => blur_rgba8(py, engine, img, blur, out),
        Some(Dtype::F32) => blur_rgba_f32(py, engine, img, blur, out),
        _ => blur_any(py, engine, img, blur, out),
    }
}

/// The channel type of an `(H, W, 4)` array of `uint8` or `float32` (the formats with paths
/// of their own); `None` for anything else.
fn rgba_dtype(img: &Bound<'_, PyAny>) -> Option<Dtype> {
    let py = img.py();
    let array = img.cast::<PyUntypedArray>().ok()?;
    if !matches!(array.shape(), [_, _, 4]) {
        return None;
    }
    let dtype = array.dtype();
    [Dtype::U8, Dtype::F32]
        .into_iter()
        .find(|d| dtype.is_equiv_to(&d.numpy(py)))
}

/// RGBA8: read in place where its layout allows; an `out` must not share memory with it.
fn blur_rgba8<'py>(
    py: Python<'py>,
    engine: &Engine,
    img: &Bound<'py, PyAny>,
    blur: GaussianBlur,
    out: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyAny>> {
    let img = image_u8(img)?;
    let (w, h) = img.size();
    let view = img.view()?;
    if let Some(out) = out {
        let mut dst = image_out_array::<u8>(out, "uint8", (w, h))?;
        let bytes = dst.as_slice_mut().map_err(|e| value_error(e.to_string()))?;
        py.detach(|| engine.gaussian_blur_into(view, &blur, bytes))
            .py()?;
        return Ok(out.clone());
    }
    let res = py.detach(|| engine.gaussian_blur(view, &blur)).py()?;
    Ok(image_out(py, res.into_raw(), w, h)?.into_any())
}

/// RGBA f32: read in place when C-contiguous, else copied; an `out` may be the image.
fn blur_rgba_f32<'py>(
    py: Python<'py>,
    engine: &Engine,
    img: &Bound<'py, PyAny>,
    blur: GaussianBlur,
    out: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyAny>> {
    let src = image_f32(img)?;
    let (w, h) = src.dimensions();
    if let Some(out) = out {
        // An `out` that shares memory with the image cannot be lent for writing while the
        // image is lent: the image is then copied first, so `out` may be `img`.
        let (src, mut dst) = match image_out_array::<f32>(out, "float32", (w, h)) {
            Ok(dst) => (src, dst),
            Err(_) if src.is_borrowed() => {
                let src = src.into_copied()?;
                let dst = image_out_array::<f32>(out, "float32", (w, h))?;
                (src, dst)
            }
            Err(e) => return Err(e),
        };
        let view = src.view()?;
        let values = dst.as_slice_mut().map_err(|e| value_error(e.to_string()))?;
        py.detach(|| engine.gaussian_blur_f32_into(&view, &blur, values))
            .py()?;
        return Ok(out.clone());
    }
    let view = src.view()?;
    let res = py.detach(|| engine.gaussian_blur_f32(&view, &blur)).py()?;
    Ok(image_out(py, res.into_raw(), w, h)?.into_any())
}

/// Every other format (also the errors of an object that is no image of any format): read in
/// place where its layout allows; an `out` may share memory with it (it is then copied first).
fn blur_any<'py>(
    py: Python<'py>,
    engine: &Engine,
    img: &Bound<'py, PyAny>,
    blur: GaussianBlur,
    out: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyAny>> {
    let img = any_image(img)?;
    let shape = img.shape();
    let Some(out) = out else {
        return formats::run(py, engine, &img, BlurJob(blur))?.into_array(py, &shape);
    };
    let array = checked_out(out, &img)?;
    let kind = img.dtype();
    // An `out` that overlaps a borrowed image cannot be lent for writing while the image is
    // lent: the image is then copied, and its borrow given back, first.
    let (img, mut dst) = match OutArray::borrow(array, kind)? {
        Ok(dst) => (img, dst),
        Err(BorrowError::AlreadyBorrowed) if img.is_borrowed() => {
            let img = img.into_copied();
            let dst = OutArray::borrow(array, kind)?.map_err(unwritable)?;
            (img, dst)
        }
        Err(e) => return Err(unwritable(e)),
    };
    let job = BlurIntoJob {
        blur,
        out: dst.bytes()?,
    };
    formats::run(py, engine, &img, job)?;
    Ok(out.clone())
}

/// The `out=` array of the blur of `img`: a NumPy array of the image's shape and dtype,
/// C-contiguous and aligned; a `TypeError` or `ValueError` that says what is expected else.
fn checked_out<'a, 'py>(
    out: &'a Bound<'py, PyAny>,
    img: &AnyImage<'_>,
) -> PyResult<&'a Bound<'py, PyUntypedArray>> {
    let (shape, kind) = (img.shape(), img.dtype());
    let expected = || {
        format!(
            "out= must be a C-contiguous numpy.ndarray of the image's shape {} and dtype {}",
            shape_text(&shape),
            kind.name()
        )
    };
    let array = out.cast::<PyUntypedArray>().map_err(|_| {
        let name = out
            .get_type()
            .name()
            .map(|n| n.to_string())
            .unwrap_or_else(|_| "?".into());
        type_error(format!("{}; got {name}", expected()))
    })?;
    if !array.dtype().is_equiv_to(&kind.numpy(out.py())) {
        return Err(type_error(format!(
            "{}; got dtype {}",
            expected(),
            array.dtype()
        )));
    }
    if array.shape() != shape.as_slice() {
        return Err(value_error(format!(
            "out= has shape {}, but the image is {}",
            shape_text(array.shape()),
            shape_text(&shape)
        )));
    }
    if !array.is_c_contiguous() {
        return Err(value_error(
            "out= must be C-contiguous (rows packed, as numpy.empty makes them)".into(),
        ));
    }
    if !array.is_aligned() {
        return Err(value_error(
            "out= must be aligned for its dtype (as numpy.empty makes it)".into(),
        ));
    }
    Ok(array)
}

/// The error of an `out=` that cannot be borrowed for writing.
fn unwritable(e: BorrowError) -> PyErr {
    value_error(match e {
        BorrowError::NotWriteable => "out= cannot be written: it is read-only".into(),
        e => format!("out= cannot be written (lent elsewhere): {e}"),
    })
}

/// A checked `out=` array, borrowed for writing.
enum OutArray<'py> {
    U8(PyReadwriteArrayDyn<'py, u8>),
    U16(PyReadwriteArrayDyn<'py, u16>),
    F32(PyReadwriteArrayDyn<'py, f32>),
}

impl<'py> OutArray<'py> {
    /// Borrows `array` (checked to be of `kind`) for writing; the inner error where NumPy's
    /// borrow checker refuses.
    fn borrow(
        array: &Bound<'py, PyUntypedArray>,
        kind: Dtype,
    ) -> PyResult<Result<Self, BorrowError>> {
        fn typed<'py, T: Element>(
            array: &Bound<'py, PyUntypedArray>,
        ) -> PyResult<Result<PyReadwriteArrayDyn<'py, T>, BorrowError>> {
            Ok(array.cast::<PyArrayDyn<T>>()?.try_readwrite())
        }
        Ok(match kind {
            Dtype::U8 => typed::<u8>(array)?.map(OutArray::U8),
            Dtype::U16 => typed::<u16>(array)?.map(OutArray::U16),
            Dtype::F32 => typed::<f32>(array)?.map(OutArray::F32),
        })
    }

    /// The values, as bytes.
    fn bytes(&mut self) -> PyResult<&mut [u8]> {
        fn of<'a, T: Element + bytemuck::Pod>(
            a: &'a mut PyReadwriteArrayDyn<'_, T>,
        ) -> PyResult<&'a mut [u8]> {
            a.as_slice_mut()
                .map(bytemuck::cast_slice_mut)
                .map_err(|e| value_error(format!("out= cannot be written: {e}")))
        }
        match self {
            OutArray::U8(a) => of(a),
            OutArray::U16(a) => of(a),
            OutArray::F32(a) => of(a),
        }
    }
}

/// The blur of an image of any format, a fresh result.
struct BlurJob(GaussianBlur);

impl Job for BlurJob {
    type Out = Values;
    fn run<'a, P: FormatPixel, I: IntoImage<'a, Pixel = P> + Copy + Send>(
        self,
        engine: &Engine,
        view: I,
    ) -> clpix::Result<Values> {
        let res = engine.gaussian_blur(view, &self.0)?;
        Ok(IntoValues::into_values(res.into_raw()))
    }
}

/// The blur of an image of any format into `out` (its channel values' bytes, rows packed,
/// aligned for the channel type).
struct BlurIntoJob<'o> {
    blur: GaussianBlur,
    out: &'o mut [u8],
}

impl Job for BlurIntoJob<'_> {
    type Out = ();
    fn run<'a, P: FormatPixel, I: IntoImage<'a, Pixel = P> + Copy + Send>(
        self,
        engine: &Engine,
        view: I,
    ) -> clpix::Result<()> {
        let out: &mut [P::Subpixel] =
            bytemuck::try_cast_slice_mut(self.out).map_err(|_| clpix::Error::InvalidParameter {
                name: "out",
                value: "an array of another size or alignment".into(),
                expected: "the image's channel values, rows packed, aligned for their type",
            })?;
        engine.gaussian_blur_into(view, &self.blur, out)
    }
}
