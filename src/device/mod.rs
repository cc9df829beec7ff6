//! Data held by an engine: images and arrays in device memory on an OpenCL engine, in host
//! memory on the CPU engine, and the inputs operations accept.
//!
//! This layer sits above the OpenCL layer (`crate::opencl`): a device image owns its buffers.

mod any;
mod array;
mod image;
mod image_f32;
mod parts;
mod pinned;
mod raw;
mod window;

pub(crate) use any::Any;
pub use any::{AnyImage, IntoImage};
pub use array::{ArrayInput, DeviceArray};
pub(crate) use array::{ArrayStorage, PooledBuffer, check_array_len, download};
pub use image::{DeviceImage, ImageInput};
pub(crate) use image::{HostPixels, Storage};
pub use image_f32::DeviceImageF32;
pub(crate) use image_f32::{StorageF32, download_f32};
pub(crate) use parts::{DeviceParts, Part, host_copy};
pub use pinned::PinnedImage;
pub(crate) use raw::{RawSource, download_raw, held_words};
pub(crate) use window::{Window, whole_rows};
