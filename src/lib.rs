#![doc = include_str!("../README.md")]
#![deny(missing_docs)]
#![forbid(unsafe_op_in_unsafe_fn)]

mod blur;
mod compact;
mod cpu;
mod engine;
mod error;
mod histogram;
mod image;
mod luminance;
mod opencl;
mod reduce;
mod select;

pub use crate::blur::{Border, GaussianBlur, MAX_RADIUS};
pub use crate::compact::{CompactOrder, DeviceArray};
pub use crate::engine::{BackendInfo, BackendKind, Engine, EngineConfig};
pub use crate::error::{Error, Result};
pub use crate::histogram::{LuminanceHistogram, RgbaHistogram};
pub use crate::image::{DeviceImage, ImageInput, ImageView};
pub use crate::luminance::{luminance, MAX_LUMINANCE};
pub use crate::opencl::{devices, DeviceInfo, DeviceType, KernelLayout};
pub use crate::reduce::{ArrayStats, LuminanceStats, PixelHit};
