//! NumPy arrays in and out: RGBA8 and RGBA f32 images of any strides, u32 arrays, and the
//! structured arrays of pixel records.
//!
//! A C-contiguous RGBA8 image, or one whose rows are padded or cut from a wider array (pixels
//! contiguous within rows, rows a positive number of bytes apart), is read in place through an
//! [`ImageView`]; any other layout is copied into a packed buffer first.

use crate::errors::{to_py, type_error, value_error};
use clpix::{ImageView, PixelHit};
use numpy::{
    Element, PyArray1, PyArray3, PyArrayDescrMethods, PyArrayMethods, PyReadonlyArray1,
    PyReadonlyArray3, PyUntypedArray, PyUntypedArrayMethods,
};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;

/// Where an input image's pixels are: in the caller's array (`stride` bytes between row
/// starts), or in a packed copy.
enum Pixels<'py> {
    Borrowed {
        array: PyReadonlyArray3<'py, u8>,
        stride: usize,
    },
    Copied(Vec<u8>),
}

/// An RGBA8 input image (`H×W×4` `uint8`), borrowed where its layout allows.
pub(crate) struct ImageU8<'py> {
    pixels: Pixels<'py>,
    width: u32,
    height: u32,
}

impl ImageU8<'_> {
    /// The pixels as clpix's view (no copy).
    pub(crate) fn view(&self) -> PyResult<ImageView<'_>> {
        match &self.pixels {
            Pixels::Borrowed { array, stride } => {
                let len = (self.height as usize - 1) * stride + self.width as usize * 4;
                // SAFETY: the array is borrowed read-only for `self`'s life (numpy's borrow
                // checker), its data starts at `data()`, and with h > 0 and w > 0 rows, pixel
                // strides of 4 bytes and channel strides of 1 byte (checked in `image_u8`),
                // its last byte lies (h - 1) * stride + 4w - 1 bytes after the first.
                let bytes = unsafe { std::slice::from_raw_parts(array.data() as *const u8, len) };
                ImageView::with_stride(bytes, self.width, self.height, *stride).map_err(to_py)
            }
            Pixels::Copied(bytes) => ImageView::new(bytes, self.width, self.height).map_err(to_py),
        }
    }

    /// Width and height in pixels.
    pub(crate) fn size(&self) -> (u32, u32) {
        (self.width, self.height)
    }
}

/// `obj` as a NumPy array, or a `TypeError` saying that `expected` is (and what `obj` is).
pub(crate) fn ndarray<'a, 'py>(
    obj: &'a Bound<'py, PyAny>,
    expected: &str,
) -> PyResult<&'a Bound<'py, PyUntypedArray>> {
    obj.cast::<PyUntypedArray>().map_err(|_| {
        let name = obj
            .get_type()
            .name()
            .map(|n| n.to_string())
            .unwrap_or_else(|_| "?".into());
        type_error(format!("expected a numpy.ndarray, {expected}; got {name}"))
    })
}

/// The untyped array behind `obj`, checked to be `H×W×4` of `T`, with its width and height.
fn image_array<'a, 'py, T: Element>(
    obj: &'a Bound<'py, PyAny>,
    what: &str,
) -> PyResult<(&'a Bound<'py, PyUntypedArray>, u32, u32)> {
    let py = obj.py();
    let expected = format!("an image of shape (H, W, 4) and dtype {what}");
    let array = ndarray(obj, &expected)?;
    let shape = array.shape();
    if shape.len() != 3 || shape[2] != 4 {
        return Err(value_error(format!(
            "expected {expected}; got an array of shape {shape:?}"
        )));
    }
    if !array.dtype().is_equiv_to(&numpy::dtype::<T>(py)) {
        return Err(type_error(format!(
            "expected {expected}; got dtype {}",
            array.dtype()
        )));
    }
    let side = |n: usize| {
        u32::try_from(n).map_err(|_| {
            to_py(clpix::Error::ImageTooLarge {
                width: shape[1] as u64,
                height: shape[0] as u64,
                reason: "a side above u32::MAX pixels",
            })
        })
    };
    Ok((array, side(shape[1])?, side(shape[0])?))
}

/// The `out=` array for an image of `width × height` pixels of `T` (`what`: its dtype's name):
/// `H×W×4`, C-contiguous, writeable and sharing no memory with the input, borrowed for writing.
pub(crate) fn image_out_array<'py, T: Element>(
    out: &Bound<'py, PyAny>,
    what: &str,
    (width, height): (u32, u32),
) -> PyResult<numpy::PyReadwriteArray3<'py, T>> {
    let (array, w, h) = image_array::<T>(out, what)?;
    if (w, h) != (width, height) {
        return Err(value_error(format!(
            "out= has shape ({h}, {w}, 4), but the image is ({height}, {width}, 4)"
        )));
    }
    let typed = array.cast::<PyArray3<T>>()?;
    if !typed.is_c_contiguous() {
        return Err(value_error(
            "out= must be C-contiguous (rows packed, as numpy.empty makes them)".into(),
        ));
    }
    typed.try_readwrite().map_err(|e| {
        value_error(format!(
            "out= cannot be written (read-only, or sharing memory with the image): {e}"
        ))
    })
}

fn borrow_error(e: numpy::BorrowError) -> PyErr {
    value_error(format!("the array cannot be read: {e}"))
}

/// Reads an `H×W×4` `uint8` image, in place where its layout allows.
pub(crate) fn image_u8<'py>(obj: &Bound<'py, PyAny>) -> PyResult<ImageU8<'py>> {
    let (array, width, height) = image_array::<u8>(obj, "uint8")?;
    let typed = array.cast::<PyArray3<u8>>()?;
    let readonly = typed.try_readonly().map_err(borrow_error)?;
    let copied = |pixels: Pixels<'py>| {
        Ok(ImageU8 {
            pixels,
            width,
            height,
        })
    };
    if width == 0 || height == 0 {
        return copied(Pixels::Copied(Vec::new()));
    }
    let row = width as usize * 4;
    let strides = typed.strides();
    let stride = if typed.is_c_contiguous() {
        Some(row)
    } else if strides[1] == 4 && strides[2] == 1 {
        usize::try_from(strides[0]).ok().filter(|&s| s >= row)
    } else {
        None
    };
    match stride {
        Some(stride) => copied(Pixels::Borrowed {
            array: readonly,
            stride,
        }),
        None => {
            let packed = readonly.as_array().iter().copied().collect();
            copied(Pixels::Copied(packed))
        }
    }
}

/// Reads an `H×W×4` `float32` image: in place when C-contiguous, else copied.
pub(crate) fn image_f32<'py>(obj: &Bound<'py, PyAny>) -> PyResult<ImageF32<'py>> {
    let (array, width, height) = image_array::<f32>(obj, "float32")?;
    let readonly = array
        .cast::<PyArray3<f32>>()?
        .try_readonly()
        .map_err(borrow_error)?;
    // Not `as_slice` alone: it also takes a Fortran-ordered array, whose values are not in
    // the (row, pixel, channel) order read.
    if readonly.is_c_contiguous() && readonly.as_slice().is_ok() {
        return Ok(ImageF32::Borrowed {
            array: readonly,
            width,
            height,
        });
    }
    copied_f32(&readonly, (width, height))
}

/// A copy of a float32 array's values as clpix's owned f32 image of `width × height` pixels.
fn copied_f32(
    array: &PyReadonlyArray3<'_, f32>,
    (width, height): (u32, u32),
) -> PyResult<ImageF32<'static>> {
    let data: Vec<f32> = array.as_array().iter().copied().collect();
    image::Rgba32FImage::from_raw(width, height, data)
        .map(ImageF32::Copied)
        .ok_or_else(size_mismatch)
}

/// The error for a float32 image whose values do not fill its width and height.
fn size_mismatch() -> PyErr {
    value_error("the float32 image's size does not match its data".into())
}

/// An RGBA f32 input image (`H×W×4` `float32`): read in place when C-contiguous (the f32 blur
/// takes any container of values), else copied.
pub(crate) enum ImageF32<'py> {
    Borrowed {
        array: PyReadonlyArray3<'py, f32>,
        width: u32,
        height: u32,
    },
    Copied(image::Rgba32FImage),
}

impl<'py> ImageF32<'py> {
    /// Width and height in pixels.
    pub(crate) fn dimensions(&self) -> (u32, u32) {
        match self {
            ImageF32::Borrowed { width, height, .. } => (*width, *height),
            ImageF32::Copied(img) => img.dimensions(),
        }
    }

    /// Whether the values are the caller's array's (borrowed from NumPy).
    pub(crate) fn is_borrowed(&self) -> bool {
        matches!(self, ImageF32::Borrowed { .. })
    }

    /// The image as clpix takes it, over the array's values or the copy (no copy here).
    pub(crate) fn view(&self) -> PyResult<image::ImageBuffer<image::Rgba<f32>, &[f32]>> {
        let (width, height) = self.dimensions();
        let values: &[f32] = match self {
            ImageF32::Borrowed { array, .. } => array
                .as_slice()
                .map_err(|e| value_error(format!("the float32 image cannot be read: {e}")))?,
            ImageF32::Copied(img) => img.as_raw(),
        };
        image::ImageBuffer::from_raw(width, height, values).ok_or_else(size_mismatch)
    }

    /// A copy of the values, the array's borrow given back (for an `out=` that is the image).
    pub(crate) fn into_copied(self) -> PyResult<ImageF32<'py>> {
        let (width, height) = self.dimensions();
        match self {
            // The array's borrow ends here, once its values are copied.
            ImageF32::Borrowed { array, .. } => copied_f32(&array, (width, height)),
            copied => Ok(copied),
        }
    }
}

/// A 1-D `uint32` array, borrowed when contiguous, else copied.
pub(crate) enum ArrayU32<'py> {
    Borrowed(PyReadonlyArray1<'py, u32>),
    Copied(Vec<u32>),
}

impl ArrayU32<'_> {
    /// The elements in order.
    pub(crate) fn as_slice(&self) -> &[u32] {
        match self {
            ArrayU32::Borrowed(a) => a.as_slice().unwrap_or(&[]),
            ArrayU32::Copied(v) => v,
        }
    }
}

/// Reads a 1-D `uint32` array.
pub(crate) fn array_u32<'py>(obj: &Bound<'py, PyAny>) -> PyResult<ArrayU32<'py>> {
    let expected = "a 1-D array of dtype uint32";
    let array = obj
        .cast::<PyUntypedArray>()
        .map_err(|_| type_error(format!("expected a numpy.ndarray, {expected}")))?;
    if array.ndim() != 1 {
        return Err(value_error(format!(
            "expected {expected}; got an array of shape {:?}",
            array.shape()
        )));
    }
    if !array.dtype().is_equiv_to(&numpy::dtype::<u32>(obj.py())) {
        return Err(type_error(format!(
            "expected {expected}; got dtype {}",
            array.dtype()
        )));
    }
    let readonly = array
        .cast::<PyArray1<u32>>()?
        .try_readonly()
        .map_err(borrow_error)?;
    if readonly.as_slice().is_ok() {
        Ok(ArrayU32::Borrowed(readonly))
    } else {
        Ok(ArrayU32::Copied(
            readonly.as_array().iter().copied().collect(),
        ))
    }
}

/// Wraps packed pixels (`height × width × channels` values) as a NumPy array without copying.
pub(crate) fn image_out<T: Element>(
    py: Python<'_>,
    data: Vec<T>,
    width: u32,
    height: u32,
) -> PyResult<Bound<'_, PyArray3<T>>> {
    PyArray1::from_vec(py, data).reshape([height as usize, width as usize, 4])
}

/// Bytes of one record of [`hit_dtype`]: x (u32), y (u32), luminance (u16), rgba (4 × u8),
/// packed (NumPy's canonical layout for these fields: concatenating record arrays keeps it).
pub(crate) const HIT_BYTES: usize = 14;

/// The records' bytes, little-endian, [`HIT_BYTES`] each (built without the GIL).
pub(crate) fn hit_bytes(hits: &[PixelHit]) -> Vec<u8> {
    let mut out = Vec::with_capacity(hits.len() * HIT_BYTES);
    for h in hits {
        out.extend_from_slice(&h.x.to_le_bytes());
        out.extend_from_slice(&h.y.to_le_bytes());
        out.extend_from_slice(&h.luminance.to_le_bytes());
        out.extend_from_slice(&h.rgba);
    }
    out
}

static HIT_DTYPE: PyOnceLock<Py<PyAny>> = PyOnceLock::new();

/// The structured dtype of pixel records: fields `x`, `y` (`<u4`), `luminance` (`<u2`) and
/// `rgba` (`4 × u1`), packed, 14 bytes a record.
pub(crate) fn hit_dtype(py: Python<'_>) -> PyResult<&Bound<'_, PyAny>> {
    let dtype = HIT_DTYPE.get_or_try_init(py, || -> PyResult<Py<PyAny>> {
        let fields: Vec<Bound<'_, PyAny>> = vec![
            ("x", "<u4").into_pyobject(py)?.into_any(),
            ("y", "<u4").into_pyobject(py)?.into_any(),
            ("luminance", "<u2").into_pyobject(py)?.into_any(),
            ("rgba", "u1", (4,)).into_pyobject(py)?.into_any(),
        ];
        let dtype = py.import("numpy")?.getattr("dtype")?.call1((fields,))?;
        debug_assert_eq!(dtype.getattr("itemsize")?.extract::<usize>()?, HIT_BYTES);
        Ok(dtype.unbind())
    })?;
    Ok(dtype.bind(py))
}
