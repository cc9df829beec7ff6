//! Small result records: a pixel hit, luminance statistics, an OpenCL device.

use pyo3::prelude::*;

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
