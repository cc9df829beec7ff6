//! Data held by an engine: images and arrays in device memory on an OpenCL engine, in host
//! memory on the CPU engine, and the inputs operations accept.
//!
//! This layer sits above the OpenCL layer (`crate::cl`): a device image owns its buffers.

mod array;
mod image;
mod image_f32;
mod parts;
mod pinned;

pub use array::DeviceArray;
pub(crate) use array::{check_array_len, download, ArrayStorage, PooledBuffer};
pub(crate) use image::Storage;
pub use image::{DeviceImage, ImageInput};
pub use image_f32::DeviceImageF32;
pub(crate) use image_f32::StorageF32;
pub(crate) use parts::{host_copy, DeviceParts, Part};
pub use pinned::PinnedImage;
