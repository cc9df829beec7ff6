//! RGBA f32 images held by an engine (scientific data): one device buffer on OpenCL, host
//! memory on the CPU engine.

use crate::error::{Error, Result};
use crate::opencl::ClEngine;
use image::Rgba32FImage;
use opencl3::memory::Buffer;
use std::fmt;
use std::sync::Arc;

/// An RGBA f32 image held by an [`Engine`](crate::Engine): in one device buffer on an OpenCL
/// engine (16 bytes a pixel; an image larger than one buffer is an error at upload: blur such
/// images from the host with [`Engine::gaussian_blur_f32`](crate::Engine::gaussian_blur_f32),
/// which works in bands), in host memory on the CPU engine. Made by
/// [`Engine::upload_f32`](crate::Engine::upload_f32), blurred on the device (the result stays
/// there) by [`Engine::gaussian_blur_f32_device`](crate::Engine::gaussian_blur_f32_device),
/// read back with [`Engine::download_f32`](crate::Engine::download_f32). Given to another
/// engine, it is read back and processed there (the same bits).
///
/// ```
/// use clpix::{Engine, GaussianBlur};
/// let engine = Engine::new()?;
/// let img = image::Rgba32FImage::from_pixel(8, 5, image::Rgba([0.5, 0.25, 1.0, 1.0]));
/// let dev = engine.upload_f32(&img)?;
/// assert_eq!((dev.width(), dev.height()), (8, 5));
/// let blurred = engine.gaussian_blur_f32_device(&dev, &GaussianBlur::new(2))?;
/// assert_eq!(engine.download_f32(&blurred)?, engine.gaussian_blur_f32(&img, &GaussianBlur::new(2))?);
/// # Ok::<(), clpix::Error>(())
/// ```
pub struct DeviceImageF32 {
    pub(crate) width: u32,
    pub(crate) height: u32,
    pub(crate) storage: StorageF32,
}

pub(crate) enum StorageF32 {
    Host(Rgba32FImage),
    OpenCl {
        owner: Arc<ClEngine>,
        /// 4 × width × height values (one, unused, for an empty image).
        buffer: Buffer<f32>,
    },
}

impl DeviceImageF32 {
    /// Width in pixels.
    ///
    /// ```
    /// let img = image::Rgba32FImage::new(4, 3);
    /// assert_eq!(clpix::Engine::cpu().upload_f32(&img)?.width(), 4);
    /// # Ok::<(), clpix::Error>(())
    /// ```
    pub fn width(&self) -> u32 {
        self.width
    }

    /// Height in pixels.
    ///
    /// ```
    /// let img = image::Rgba32FImage::new(4, 3);
    /// assert_eq!(clpix::Engine::cpu().upload_f32(&img)?.height(), 3);
    /// # Ok::<(), clpix::Error>(())
    /// ```
    pub fn height(&self) -> u32 {
        self.height
    }

    /// The device buffer, when the image lives on `cl`'s device.
    pub(crate) fn buffer_on(&self, cl: &Arc<ClEngine>) -> Option<&Buffer<f32>> {
        match &self.storage {
            StorageF32::OpenCl { owner, buffer } if Arc::ptr_eq(owner, cl) => Some(buffer),
            _ => None,
        }
    }
}

impl Drop for DeviceImageF32 {
    /// The buffer goes back to its engine for the next f32 image of its size.
    fn drop(&mut self) {
        let host = StorageF32::Host(Rgba32FImage::new(0, 0));
        if let StorageF32::OpenCl { owner, buffer } = std::mem::replace(&mut self.storage, host) {
            let values = 4 * self.width as usize * self.height as usize;
            owner.give_image_buffer(values, buffer);
        }
    }
}

impl fmt::Debug for DeviceImageF32 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (w, h) = (self.width, self.height);
        match &self.storage {
            StorageF32::Host(_) => write!(f, "DeviceImageF32({w}×{h}, host)"),
            StorageF32::OpenCl { owner, .. } => {
                write!(f, "DeviceImageF32({w}×{h} on {})", owner.info.name)
            }
        }
    }
}

/// An f32 image's values in host memory.
pub(crate) fn download_f32(img: &DeviceImageF32) -> Result<image::Rgba32FImage> {
    let values = 4 * img.width as usize * img.height as usize;
    let raw = match &img.storage {
        StorageF32::Host(host) => return Ok(host.clone()),
        StorageF32::OpenCl { owner, buffer } => {
            let mut out = vec![0f32; values];
            if values > 0 {
                owner.read(buffer, 0, &mut out)?;
            }
            out
        }
    };
    image::Rgba32FImage::from_raw(img.width, img.height, raw).ok_or(Error::ImageTooLarge {
        width: img.width as u64,
        height: img.height as u64,
        reason: "the f32 image does not match its size",
    })
}
