//! `clpix.DeviceImage`: an image of any format held by an engine (`Engine.upload`, or the blur
//! kept there by `Engine.gaussian_blur_device`), which every operation takes in place of a
//! NumPy array and reads where it is; `Engine.download` reads it back. clpix's
//! `DeviceImage<P>` of each format, behind one Python type.

use crate::records::{Dtype, IntoValues};
use clpix::{DeviceImage as Held, Engine};
use image::{Luma, Rgb, Rgba};
use pyo3::prelude::*;

/// A held image of one of the seven formats.
pub(crate) enum AnyHeld {
    Luma8(Held<Luma<u8>>),
    Luma16(Held<Luma<u16>>),
    LumaF32(Held<Luma<f32>>),
    Rgb8(Held<Rgb<u8>>),
    Rgba8(Held<Rgba<u8>>),
    Rgba16(Held<Rgba<u16>>),
    RgbaF32(Held<Rgba<f32>>),
}

/// The formats' held images into [`AnyHeld`].
pub(crate) trait HeldPixel: clpix::Pixel + Sized {
    fn any_held(held: Held<Self>) -> AnyHeld;
}

macro_rules! held_pixel {
    ($($variant:ident: $pixel:ty),*) => {$(
        impl HeldPixel for $pixel {
            fn any_held(held: Held<Self>) -> AnyHeld {
                AnyHeld::$variant(held)
            }
        }
    )*};
}
held_pixel!(Luma8: Luma<u8>, Luma16: Luma<u16>, LumaF32: Luma<f32>, Rgb8: Rgb<u8>,
    Rgba8: Rgba<u8>, Rgba16: Rgba<u16>, RgbaF32: Rgba<f32>);

/// An image held by an engine (on its device, or in host memory for the CPU engine), of the
/// shape and dtype of the NumPy array it came from. Every operation of `Engine` takes it; an
/// engine reads an image another engine holds back first.
#[pyclass(module = "clpix", name = "DeviceImage", frozen)]
pub(crate) struct DeviceImage {
    pub(crate) held: AnyHeld,
    pub(crate) shape: Vec<usize>,
    pub(crate) dtype: Dtype,
}

#[pymethods]
impl DeviceImage {
    /// `(H, W)` or `(H, W, channels)`, as the array it came from.
    #[getter]
    fn shape<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, pyo3::types::PyTuple>> {
        pyo3::types::PyTuple::new(py, &self.shape)
    }

    /// Its number of channel values (as NumPy's `size`: the product of `shape`).
    #[getter]
    fn size(&self) -> usize {
        self.shape.iter().product()
    }

    /// NumPy's dtype of its channels.
    #[getter]
    fn dtype<'py>(&self, py: Python<'py>) -> Bound<'py, numpy::PyArrayDescr> {
        self.dtype.numpy(py)
    }

    fn __repr__(&self) -> String {
        self.repr()
    }
}

impl DeviceImage {
    /// The RGBA8 image it holds (the operations of RGBA8 only); a TypeError for another format.
    pub(crate) fn rgba8(&self) -> PyResult<&Held<Rgba<u8>>> {
        match &self.held {
            AnyHeld::Rgba8(d) => Ok(d),
            _ => Err(crate::errors::type_error(format!(
                "an RGBA8 image is needed: an (H, W, 4) uint8 DeviceImage, not {}",
                self.repr()
            ))),
        }
    }

    /// `DeviceImage(shape=(…), dtype=…)`.
    pub(crate) fn repr(&self) -> String {
        // The shape as Python writes a tuple of two or three.
        let sides: Vec<String> = self.shape.iter().map(usize::to_string).collect();
        format!(
            "DeviceImage(shape=({}), dtype={})",
            sides.join(", "),
            self.dtype.name()
        )
    }
}

impl DeviceImage {
    /// Its pixel format.
    pub(crate) fn format(&self) -> clpix::Format {
        use clpix::Format as F;
        match &self.held {
            AnyHeld::Luma8(_) => F::Luma8,
            AnyHeld::Luma16(_) => F::Luma16,
            AnyHeld::LumaF32(_) => F::LumaF32,
            AnyHeld::Rgb8(_) => F::Rgb8,
            AnyHeld::Rgba8(_) => F::Rgba8,
            AnyHeld::Rgba16(_) => F::Rgba16,
            AnyHeld::RgbaF32(_) => F::RgbaF32,
        }
    }

    /// Its pixels read back: a NumPy array of its shape and dtype.
    pub(crate) fn download<'py>(
        &self,
        py: Python<'py>,
        engine: &Engine,
    ) -> PyResult<Bound<'py, PyAny>> {
        use crate::errors::IntoPyResult;
        macro_rules! go {
            ($($variant:ident),*) => {
                match &self.held {
                    $(AnyHeld::$variant(d) => py
                        .detach(|| engine.download(d).map(|b| IntoValues::into_values(b.into_raw())))
                        .py()?,)*
                }
            };
        }
        let values = go!(Luma8, Luma16, LumaF32, Rgb8, Rgba8, Rgba16, RgbaF32);
        values.into_array(py, &self.shape)
    }
}
