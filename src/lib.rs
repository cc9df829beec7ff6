#![doc = include_str!("../README.md")]
#![deny(missing_docs)]
#![forbid(unsafe_op_in_unsafe_fn)]

// Layers, bottom to top; each imports only from those above it in this list.
mod cl;
mod config;
mod cpu;
mod device;
mod engine;
mod error;
mod image;
mod ops;
mod pool;
mod spec;

pub use crate::cl::{devices, DeviceInfo, DeviceType, ProgramOrigin, ProgramRecord};
pub use crate::config::{
    BlurBand, BlurF32Kernel, BlurKernel, BlurTuning, CompactRelocation, EngineConfig, KernelLayout,
    ProgramCache, ProgramUnit, ScanKernel, Staging, Tuning,
};
pub use crate::device::{DeviceArray, DeviceImage, DeviceImageF32, ImageInput, PinnedImage};
pub use crate::engine::{BackendInfo, BackendKind, Engine};
pub use crate::error::{Error, Result};
pub use crate::image::ImageView;
pub use crate::ops::blur::{Border, GaussianBlur, MAX_RADIUS};
pub use crate::ops::compact::CompactOrder;
pub use crate::ops::histogram::{LuminanceHistogram, RgbaHistogram};
pub use crate::ops::reduce::{ArrayStats, LuminanceStats};
pub use crate::pool::{EnginePool, FrameResults, DEFAULT_IN_FLIGHT};
pub use crate::spec::{luminance, PixelHit, MAX_LUMINANCE};
