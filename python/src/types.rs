//! Small result records: a pixel hit (RGBA8, or of another format), luminance statistics
//! (integer or f32 keys), an OpenCL device.

use clpix::Format;
use pyo3::prelude::*;
use pyo3::types::PyTuple;
use pyo3::IntoPyObjectExt;
use std::hash::{Hash, Hasher};

/// One pixel: its column `x`, row `y`, luminance (0..=1023) and RGBA.
#[pyclass(module = "clpix", name = "Hit", frozen, eq, hash)]
#[derive(Clone, PartialEq, Eq, Hash)]
pub(crate) struct Hit {
    /// Column.
    #[pyo3(get)]
    x: u32,
    /// Row.
    #[pyo3(get)]
    y: u32,
    /// Luminance, 0..=1023.
    #[pyo3(get)]
    luminance: u16,
    rgba: [u8; 4],
}

impl From<clpix::PixelHit> for Hit {
    fn from(h: clpix::PixelHit) -> Self {
        Hit {
            x: h.x,
            y: h.y,
            luminance: h.luminance,
            rgba: h.rgba,
        }
    }
}

#[pymethods]
impl Hit {
    /// Makes a record (as the operations do).
    #[new]
    fn new(x: u32, y: u32, luminance: u16, rgba: [u8; 4]) -> Self {
        Hit {
            x,
            y,
            luminance,
            rgba,
        }
    }

    /// The pixel's (R, G, B, A).
    #[getter]
    fn rgba(&self) -> (u8, u8, u8, u8) {
        let [r, g, b, a] = self.rgba;
        (r, g, b, a)
    }

    /// `"rgba8"`: as `FormatHit.format`, for code that takes every format.
    #[getter]
    fn format(&self) -> &'static str {
        Format::Rgba8.name()
    }

    /// The key the pixel was ranked by: its luminance (as `FormatHit.key`).
    #[getter]
    fn key(&self) -> u16 {
        self.luminance
    }

    /// The pixel's channels: its (R, G, B, A) (as `FormatHit.value`).
    #[getter]
    fn value(&self) -> (u8, u8, u8, u8) {
        self.rgba()
    }

    fn __repr__(&self) -> String {
        let [r, g, b, a] = self.rgba;
        format!(
            "Hit(x={}, y={}, luminance={}, rgba=({r}, {g}, {b}, {a}))",
            self.x, self.y, self.luminance
        )
    }

    fn __getnewargs__(&self) -> (u32, u32, u16, [u8; 4]) {
        (self.x, self.y, self.luminance, self.rgba)
    }
}

/// Luminance statistics: `sum` (exact), `count`, `mean` (`sum / count`), `min`, `max`.
#[pyclass(module = "clpix", name = "LuminanceStats", frozen, eq)]
#[derive(Clone, PartialEq)]
pub(crate) struct LuminanceStats {
    /// Sum of the luminance of every pixel (exact).
    #[pyo3(get)]
    sum: u64,
    /// Number of pixels.
    #[pyo3(get)]
    count: u64,
    /// `sum / count`, as float64.
    #[pyo3(get)]
    mean: f64,
    /// Smallest luminance.
    #[pyo3(get)]
    min: u16,
    /// Largest luminance.
    #[pyo3(get)]
    max: u16,
}

impl From<clpix::LuminanceStats> for LuminanceStats {
    fn from(s: clpix::LuminanceStats) -> Self {
        LuminanceStats {
            sum: s.sum,
            count: s.count,
            mean: s.mean,
            min: s.min,
            max: s.max,
        }
    }
}

#[pymethods]
impl LuminanceStats {
    /// Makes a record; `mean` is computed as `sum / count` in float64, as clpix does.
    #[new]
    fn new(sum: u64, count: u64, min: u16, max: u16) -> Self {
        LuminanceStats {
            sum,
            count,
            mean: sum as f64 / count as f64,
            min,
            max,
        }
    }

    fn __repr__(&self) -> String {
        format!(
            "LuminanceStats(sum={}, count={}, mean={:?}, min={}, max={})",
            self.sum, self.count, self.mean, self.min, self.max
        )
    }

    fn __getnewargs__(&self) -> (u64, u64, u16, u16) {
        (self.sum, self.count, self.min, self.max)
    }
}

/// A key or a channel of a record: an integer (u8, u16 channels; integer keys) or an f32.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Num {
    Int(u32),
    Float(f32),
}

impl Num {
    /// The Python int or float.
    fn to_py(self, py: Python<'_>) -> PyResult<Bound<'_, PyAny>> {
        match self {
            Num::Int(v) => v.into_bound_py_any(py),
            Num::Float(v) => f64::from(v).into_bound_py_any(py),
        }
    }

    /// A Python number as a key or channel of `format`: an f32 for float formats, else an
    /// integer in `0..=max`.
    fn from_py(obj: &Bound<'_, PyAny>, format: Format, max: u32, what: &str) -> PyResult<Num> {
        if format.is_float() {
            return Ok(Num::Float(obj.extract::<f64>()? as f32));
        }
        obj.extract::<u32>()
            .ok()
            .filter(|&v| v <= max)
            .map(Num::Int)
            .ok_or_else(|| {
                crate::errors::value_error(format!(
                    "a {what} of a {} pixel is an integer in 0..={max}; got {obj}",
                    format.name()
                ))
            })
    }

    /// What equal numbers hash alike by (−0 as +0).
    fn hash_bits(self) -> u64 {
        match self {
            Num::Int(v) => v.into(),
            Num::Float(v) => match v == 0.0 {
                true => 1 << 32,
                false => (1 << 33) | u64::from(v.to_bits()),
            },
        }
    }
}

/// The formats whose records are `FormatHit` (RGBA8's are `Hit`).
const FORMAT_HIT_FORMATS: &str = "\"mono8\", \"mono16\", \"mono-f32\", \"rgb8\", \"rgba16\" or \
                                  \"rgba-f32\" (RGBA8 pixels are clpix.Hit)";

/// One pixel of an image of a format other than RGBA8: its `format`, column `x`, row `y`,
/// `key` (what it was ranked by: the value of a mono image, the luminance of colour) and
/// `value` (its channels).
#[pyclass(module = "clpix", name = "FormatHit", frozen, eq)]
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct FormatHit {
    format: Format,
    /// Column.
    #[pyo3(get)]
    x: u32,
    /// Row.
    #[pyo3(get)]
    y: u32,
    key: Num,
    value: Vec<Num>,
}

impl FormatHit {
    /// The record of a pixel found in an image of `format`.
    pub(crate) fn of(format: Format, x: u32, y: u32, key: Num, value: Vec<Num>) -> Self {
        FormatHit {
            format,
            x,
            y,
            key,
            value,
        }
    }
}

#[pymethods]
impl FormatHit {
    /// Makes a record (as the operations do): `format` is one of "mono8", "mono16",
    /// "mono-f32", "rgb8", "rgba16", "rgba-f32"; `value` holds its channels (1, 3 or 4).
    #[new]
    fn new(
        format: &str,
        x: u32,
        y: u32,
        key: &Bound<'_, PyAny>,
        value: Vec<Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let format = Format::ALL
            .into_iter()
            .find(|f| *f != Format::Rgba8 && f.name() == format)
            .ok_or_else(|| {
                crate::errors::value_error(format!(
                    "invalid format = {format:?}: {FORMAT_HIT_FORMATS}"
                ))
            })?;
        if value.len() != format.channels() {
            return Err(crate::errors::value_error(format!(
                "a {} pixel has {} channels; got {}",
                format.name(),
                format.channels(),
                value.len()
            )));
        }
        let channel_max = (1u32 << (8 * format.bytes_per_channel().min(2))) - 1;
        let key = Num::from_py(key, format, format.max_key().unwrap_or(0), "key")?;
        let value = value
            .iter()
            .map(|v| Num::from_py(v, format, channel_max, "channel"))
            .collect::<PyResult<Vec<Num>>>()?;
        Ok(FormatHit::of(format, x, y, key, value))
    }

    /// The image's format: "mono8", "mono16", "mono-f32", "rgb8", "rgba16" or "rgba-f32".
    #[getter]
    fn format(&self) -> &'static str {
        self.format.name()
    }

    /// The key: an int for integer formats (mono: the value; RGB8: the luminance 0..=1023;
    /// RGBA16: `(21 r + 72 g + 7 b) // 100`), a float (an f32's value) for f32 formats.
    #[getter]
    fn key<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.key.to_py(py)
    }

    /// The pixel's channels, a tuple of 1, 3 or 4 ints (floats for f32 formats).
    #[getter]
    fn value<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let items = self
            .value
            .iter()
            .map(|v| v.to_py(py))
            .collect::<PyResult<Vec<_>>>()?;
        PyTuple::new(py, items)
    }

    fn __hash__(&self) -> u64 {
        let mut h = std::collections::hash_map::DefaultHasher::new();
        (self.format.name(), self.x, self.y, self.key.hash_bits()).hash(&mut h);
        for v in &self.value {
            v.hash_bits().hash(&mut h);
        }
        h.finish()
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        Ok(format!(
            "FormatHit(format={:?}, x={}, y={}, key={}, value={})",
            self.format.name(),
            self.x,
            self.y,
            self.key.to_py(py)?.repr()?,
            self.value(py)?.repr()?
        ))
    }

    fn __getnewargs__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        (
            self.format.name(),
            self.x,
            self.y,
            self.key.to_py(py)?,
            self.value(py)?,
        )
            .into_pyobject(py)
    }
}

/// Statistics of the f32 keys of an image (mono f32: the values; RGBA f32: the luminance),
/// NaN keys left out: `sum` (exact, rounded once to float64), `count` (keys that are numbers),
/// `mean` (`sum / count`), `min`, `max`.
#[pyclass(module = "clpix", name = "FloatStats", frozen, eq)]
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct FloatStats {
    /// The exact sum of the keys, rounded once to float64 (±inf where infinite keys of one
    /// sign are present, NaN where both).
    #[pyo3(get)]
    sum: f64,
    /// Number of keys that are not NaN.
    #[pyo3(get)]
    count: u64,
    /// `sum / count`, as float64.
    #[pyo3(get)]
    mean: f64,
    min: f32,
    max: f32,
}

impl From<clpix::FloatStats> for FloatStats {
    fn from(s: clpix::FloatStats) -> Self {
        FloatStats {
            sum: s.sum,
            count: s.count,
            mean: s.mean,
            min: s.min,
            max: s.max,
        }
    }
}

#[pymethods]
impl FloatStats {
    /// Makes a record; `mean` is computed as `sum / count` in float64, as clpix does; `min`
    /// and `max` are f32 values.
    #[new]
    fn new(sum: f64, count: u64, min: f64, max: f64) -> Self {
        FloatStats {
            sum,
            count,
            mean: sum / count as f64,
            min: min as f32,
            max: max as f32,
        }
    }

    /// Smallest key (an f32's value).
    #[getter]
    fn min(&self) -> f64 {
        self.min.into()
    }

    /// Largest key (an f32's value).
    #[getter]
    fn max(&self) -> f64 {
        self.max.into()
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        let r = |v: f64| -> PyResult<String> { Ok(v.into_bound_py_any(py)?.repr()?.to_string()) };
        Ok(format!(
            "FloatStats(sum={}, count={}, mean={}, min={}, max={})",
            r(self.sum)?,
            self.count,
            r(self.mean)?,
            r(self.min.into())?,
            r(self.max.into())?
        ))
    }

    fn __getnewargs__(&self) -> (f64, u64, f64, f64) {
        (self.sum, self.count, self.min.into(), self.max.into())
    }
}

/// One OpenCL device, as `clpix.devices()` lists it.
#[pyclass(module = "clpix", name = "Device", frozen, get_all)]
#[derive(Clone)]
pub(crate) struct Device {
    /// Position in `devices()`; `Engine(device=index)` takes it.
    pub(crate) index: usize,
    /// Device name.
    pub(crate) name: String,
    /// Platform (driver) name.
    pub(crate) platform: String,
    /// Vendor.
    pub(crate) vendor: String,
    /// "GPU", "CPU", "accelerator" or "other".
    pub(crate) device_type: String,
    /// Compute units.
    pub(crate) compute_units: u32,
    /// Global memory in bytes.
    pub(crate) global_mem_bytes: u64,
    /// Largest single buffer in bytes.
    pub(crate) max_alloc_bytes: u64,
    /// Local memory in bytes.
    pub(crate) local_mem_bytes: u64,
    /// Largest work-group.
    pub(crate) max_work_group_size: usize,
    /// `OpenCL C x.y …` as reported.
    pub(crate) opencl_c_version: String,
    /// Driver version.
    pub(crate) driver_version: String,
}

impl Device {
    /// The record of a device clpix found.
    pub(crate) fn of(d: &clpix::DeviceInfo) -> Self {
        Device {
            index: d.index,
            name: d.name.clone(),
            platform: d.platform.clone(),
            vendor: d.vendor.clone(),
            device_type: d.device_type.to_string(),
            compute_units: d.compute_units,
            global_mem_bytes: d.global_mem_bytes,
            max_alloc_bytes: d.max_alloc_bytes,
            local_mem_bytes: d.local_mem_bytes,
            max_work_group_size: d.max_work_group_size,
            opencl_c_version: d.opencl_c_version.clone(),
            driver_version: d.driver_version.clone(),
        }
    }
}

#[pymethods]
impl Device {
    fn __repr__(&self) -> String {
        format!(
            "Device(index={}, name={:?}, platform={:?}, device_type={:?}, compute_units={})",
            self.index, self.name, self.platform, self.device_type, self.compute_units
        )
    }
}
