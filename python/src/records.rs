//! The per-format value types the jobs of every format share, beneath `formats.rs`, `blur.rs`
//! and `compact.rs`: the dtypes taken, a blur's (or compacted image's) values, a threshold, a
//! key type, and hits as the records of a structured array (`compact`, `extremes`).

use crate::convert::{hit_dtype, HIT_BYTES};
use crate::errors::value_error;
use clpix::{Format, Pixel, PixelHit};
use numpy::{PyArray1, PyArrayMethods};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use rayon::prelude::*;

/// The channel types of the arrays taken.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Dtype {
    U8,
    U16,
    F32,
}

impl Dtype {
    /// NumPy's name of it.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Dtype::U8 => "uint8",
            Dtype::U16 => "uint16",
            Dtype::F32 => "float32",
        }
    }

    /// NumPy's dtype of it (native byte order).
    pub(crate) fn numpy(self, py: Python<'_>) -> Bound<'_, numpy::PyArrayDescr> {
        match self {
            Dtype::U8 => numpy::dtype::<u8>(py),
            Dtype::U16 => numpy::dtype::<u16>(py),
            Dtype::F32 => numpy::dtype::<f32>(py),
        }
    }
}

/// A threshold as one of clpix's key types.
#[derive(Clone, Copy)]
pub(crate) enum Threshold {
    U8(u8),
    U16(u16),
    F32(f32),
}

/// The key types: their NumPy dtype, and the threshold of their type.
pub(crate) trait Scalar: bytemuck::Pod {
    /// The NumPy dtype.
    const DTYPE: Dtype;
    /// The threshold when it is of this type.
    fn of_threshold(t: Threshold) -> Option<Self>;
}

impl Scalar for u8 {
    const DTYPE: Dtype = Dtype::U8;
    fn of_threshold(t: Threshold) -> Option<u8> {
        match t {
            Threshold::U8(v) => Some(v),
            _ => None,
        }
    }
}

impl Scalar for u16 {
    const DTYPE: Dtype = Dtype::U16;
    fn of_threshold(t: Threshold) -> Option<u16> {
        match t {
            Threshold::U16(v) => Some(v),
            _ => None,
        }
    }
}

impl Scalar for f32 {
    const DTYPE: Dtype = Dtype::F32;
    fn of_threshold(t: Threshold) -> Option<f32> {
        match t {
            Threshold::F32(v) => Some(v),
            _ => None,
        }
    }
}

/// A hit of some format as a record of the structured array.
pub(crate) trait HitRecord: Sized + Sync {
    /// The format of the image.
    const FORMAT: Format;
    /// The key's and the channels' dtypes, and the channels.
    const FIELDS: (Dtype, Dtype, usize);
    /// Bytes of one record.
    const BYTES: usize;
    /// Writes the record into `out` (`BYTES` long).
    fn write(&self, out: &mut [u8]);
    /// The records' bytes, packed.
    fn records(hits: &[Self]) -> Vec<u8> {
        let mut out = vec![0u8; hits.len() * Self::BYTES];
        if Self::BYTES > 0 {
            out.par_chunks_mut(Self::BYTES)
                .zip(hits.par_iter())
                .with_min_len(1 << 12)
                .for_each(|(o, h)| h.write(o));
        }
        out
    }
}

impl HitRecord for PixelHit {
    const FORMAT: Format = Format::Rgba8;
    const FIELDS: (Dtype, Dtype, usize) = (Dtype::U16, Dtype::U8, 4);
    const BYTES: usize = HIT_BYTES;
    fn write(&self, out: &mut [u8]) {
        // As `convert::hit_bytes`: little-endian, as `hit_dtype` says.
        out[..4].copy_from_slice(&self.x.to_le_bytes());
        out[4..8].copy_from_slice(&self.y.to_le_bytes());
        out[8..10].copy_from_slice(&self.luminance.to_le_bytes());
        out[10..].copy_from_slice(&self.rgba);
    }
}

impl<P> HitRecord for clpix::Hit<P>
where
    P: Pixel<Subpixel: Scalar, Key: Scalar>,
{
    const FORMAT: Format = P::FORMAT;
    const FIELDS: (Dtype, Dtype, usize) = (
        <P::Key as Scalar>::DTYPE,
        <P::Subpixel as Scalar>::DTYPE,
        P::CHANNEL_COUNT as usize,
    );
    const BYTES: usize = 8
        + std::mem::size_of::<P::Key>()
        + P::CHANNEL_COUNT as usize * std::mem::size_of::<P::Subpixel>();
    fn write(&self, out: &mut [u8]) {
        let key = 8 + std::mem::size_of::<P::Key>();
        out[..4].copy_from_slice(&self.x.to_ne_bytes());
        out[4..8].copy_from_slice(&self.y.to_ne_bytes());
        out[8..key].copy_from_slice(bytemuck::bytes_of(&self.key));
        out[key..].copy_from_slice(bytemuck::cast_slice(self.value.channels()));
    }
}

/// Hits of some format as records, before they become a NumPy array: RGBA8's of `HIT_DTYPE`
/// (x, y, luminance, rgba), as always; every other format's `x`, `y` (uint32), `key` (the key's
/// dtype: uint8 for mono8, uint16 for mono16, RGB8 and RGBA16, float32 for the float formats)
/// and `value` (the pixel's channels in the image's dtype: one, or a sub-array of 3 or 4),
/// packed, native byte order.
pub(crate) struct Records {
    bytes: Vec<u8>,
    format: Format,
    fields: (Dtype, Dtype, usize),
    size: usize,
}

/// The records' dtype of each format but RGBA8 (in the order of `Format::ALL`).
static FORMAT_DTYPES: [PyOnceLock<Py<PyAny>>; 7] = [const { PyOnceLock::new() }; 7];

impl Records {
    /// The records of `hits` (built on all cores).
    pub(crate) fn of<H: HitRecord>(hits: &[H]) -> Self {
        Records {
            bytes: H::records(hits),
            format: H::FORMAT,
            fields: H::FIELDS,
            size: H::BYTES,
        }
    }

    /// The 1-D structured array over the bytes (no copy).
    pub(crate) fn into_array(self, py: Python<'_>) -> PyResult<Bound<'_, PyAny>> {
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

/// A blur's or a compacted image's result: the channel values, rows packed.
pub(crate) enum Values {
    U8(Vec<u8>),
    U16(Vec<u16>),
    F32(Vec<f32>),
}

impl Values {
    /// The values as a NumPy array of `shape` (no copy).
    pub(crate) fn into_array<'py>(
        self,
        py: Python<'py>,
        shape: &[usize],
    ) -> PyResult<Bound<'py, PyAny>> {
        Ok(match self {
            Values::U8(v) => numpy::PyArray1::from_vec(py, v).reshape(shape)?.into_any(),
            Values::U16(v) => numpy::PyArray1::from_vec(py, v).reshape(shape)?.into_any(),
            Values::F32(v) => numpy::PyArray1::from_vec(py, v).reshape(shape)?.into_any(),
        })
    }
}

/// The channel types, whose values become [`Values`].
pub(crate) trait IntoValues: Sized {
    fn into_values(values: Vec<Self>) -> Values;
}

impl IntoValues for u8 {
    fn into_values(values: Vec<u8>) -> Values {
        Values::U8(values)
    }
}

impl IntoValues for u16 {
    fn into_values(values: Vec<u16>) -> Values {
        Values::U16(values)
    }
}

impl IntoValues for f32 {
    fn into_values(values: Vec<f32>) -> Values {
        Values::F32(values)
    }
}
