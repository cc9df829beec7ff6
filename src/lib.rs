#![doc = include_str!("../README.md")]
#![deny(missing_docs)]
#![forbid(unsafe_op_in_unsafe_fn)]

// Layers, bottom to top; each imports only from those above it in this list.
mod config;
mod cpu;
mod device;
mod engine;
mod error;
mod image;
mod open;
mod opencl;
mod ops;
mod pool;
mod spec;

pub use crate::config::{EngineConfig, KernelLayout};
pub use crate::device::{
    AnyImage, ArrayInput, DeviceArray, DeviceImage, DeviceImageF32, ImageInput, IntoImage,
    PinnedImage,
};
pub use crate::engine::{BackendInfo, BackendKind, DriverVerdict, Engine};
pub use crate::error::{Error, Result};
pub use crate::image::ImageView;
pub use crate::opencl::{DeviceInfo, DeviceType, ProgramOrigin, ProgramRecord, devices};
pub use crate::ops::blobs::{
    Blob, BlobOptions, Blobs, Centroid, Connectivity, LabelImage, blob_weight_exponent,
};
pub use crate::ops::blur::{Border, GaussianBlur, MAX_RADIUS};
pub use crate::ops::compact::CompactOrder;
pub use crate::ops::histogram::bins::{Bins, MAX_BINS};
pub use crate::ops::histogram::{LuminanceHistogram, RgbaHistogram};
pub use crate::ops::reduce::ArrayStats;
pub use crate::pool::{DEFAULT_IN_FLIGHT, EnginePool, FrameResults, Resident};
pub use crate::spec::{
    Extreme, FloatStats, Format, Hit, LuminanceStats, MAX_LUMINANCE, Pixel, PixelHit, luminance,
};

/// Kernel variants, transfers and diagnostics of an OpenCL engine, set in code and given through
/// [`EngineConfig::tuning`]: every setting by name ([`tuning::SETTINGS`],
/// [`tuning::Tuning::set`]), the few a user sets by environment variable
/// ([`tuning::Tuning::from_env`]), and the types of the forced variants. Nothing here changes a
/// result: every variant gives the same bits.
///
/// ```
/// let mut t = clpix::tuning::Tuning::default();
/// t.set("scan", "three-pass")?;
/// let config = clpix::EngineConfig { tuning: Some(t), ..Default::default() };
/// for d in clpix::devices().unwrap_or_default() {
///     println!("{}", clpix::Engine::with_device_config(&d, &config)?.backend());
/// }
/// # Ok::<(), clpix::Error>(())
/// ```
pub mod tuning {
    pub use crate::config::{
        BlurBand, BlurF32Kernel, BlurKernel, BlurTuning, CompactRelocation, ProgramCache,
        ProgramUnit, SETTINGS, ScanKernel, Staging, Tuning,
    };
}
