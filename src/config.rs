//! Engine settings and tuning: the only place that reads clpix's environment variables.

/// Settings of an OpenCL engine made with [`Engine::with_device_config`].
///
/// ```
/// let config = clpix::EngineConfig::default();
/// assert!(config.max_buffer_bytes.is_none());
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EngineConfig {
    /// Cap on single device buffers holding pixels or array elements, below the device's own
    /// limit: larger images are processed in parts (and bands, for blur), with the same
    /// results; a [`DeviceArray`](crate::DeviceArray) larger than the cap is an error. Small
    /// fixed-size bookkeeping buffers (per-group partials, weights) only need to fit the
    /// device. `None`: the device's limit.
    pub max_buffer_bytes: Option<u64>,
    /// Which kernel variant to build (see [`KernelLayout`]).
    pub layout: KernelLayout,
}

/// How the kernels walk memory. `Auto` (the default) picks from the device type; the others
/// force a variant, for testing both variants on one device or for devices that report a
/// misleading type.
///
/// ```
/// use clpix::{Engine, EngineConfig, KernelLayout};
/// for d in clpix::devices().unwrap_or_default() {
///     // The GPU-style kernels, even on a CPU device.
///     let config = EngineConfig { layout: KernelLayout::Coalesced, ..EngineConfig::default() };
///     let engine = Engine::with_device_config(&d, &config)?;
///     println!("{}", engine.backend());
/// }
/// # Ok::<(), clpix::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum KernelLayout {
    /// GPUs and accelerators: coalesced; CPU devices: contiguous.
    #[default]
    Auto,
    /// Work-items of a group read neighbouring elements, work-groups of up to 256 (GPUs).
    Coalesced,
    /// Work-groups of one, each work-item walking a contiguous range (CPU devices, PoCL).
    Contiguous,
}
