//! Images an engine holds: their upload and download, and page-locked host images.

use super::{Backend, Engine};
use crate::device::{Any, DeviceImage, IntoImage, PinnedImage, Storage, download_raw};
use crate::error::{Error, Result};
use crate::image::check_pixel_count;
use crate::spec::Pixel;
use image::ImageBuffer;
use std::borrow::Cow;

impl Engine {
    /// Copies an image of any [`Pixel`] format to the engine (device memory on OpenCL, host
    /// memory on the CPU), for several operations without a copy each: a
    /// [`DeviceImage<P>`](DeviceImage) of the input's format. Strided views are packed on the
    /// way.
    ///
    /// ```
    /// let engine = clpix::Engine::new()?;
    /// let img = image::RgbaImage::from_pixel(5, 3, image::Rgba([200, 10, 10, 255]));
    /// let dev = engine.upload(&img)?;
    /// assert_eq!(engine.extreme(&dev, clpix::Extreme::Brightest)?, engine.extreme(&img, clpix::Extreme::Brightest)?);
    /// let gray = image::ImageBuffer::from_fn(5, 3, |x, y| image::Luma([x as f32 - y as f32]));
    /// let held = engine.upload(&gray)?; // a DeviceImage<Luma<f32>>
    /// assert_eq!(engine.luminance_stats(&held)?, engine.luminance_stats(&gray)?);
    /// # Ok::<(), clpix::Error>(())
    /// ```
    pub fn upload<'a, I: IntoImage<'a>>(&self, img: I) -> Result<DeviceImage<I::Pixel>> {
        let _one = self.one_call_at_a_time();
        let (width, height, storage) = match img.into_any().0 {
            Any::Rgba8(input) => {
                check_pixel_count(input.width(), input.height())?;
                let host = crate::device::HostPixels::of(input)?;
                let view = host.view();
                let storage = match &self.backend {
                    Backend::Cpu => Storage::Host(view.to_image().into_raw()),
                    Backend::OpenCl(cl) => Storage::OpenCl(cl.upload(&view)?),
                };
                (view.width(), view.height(), storage)
            }
            Any::Typed(src) => {
                check_pixel_count(src.width(), src.height())?;
                let host = src.host()?;
                let view = host.raw();
                let storage = match &self.backend {
                    Backend::Cpu => Storage::Host(packed_bytes(&view)),
                    Backend::OpenCl(cl) => Storage::OpenCl(cl.upload_raw(&view)?),
                };
                (view.width, view.height, storage)
            }
        };
        Ok(DeviceImage::new(width, height, storage))
    }

    /// Copies a device image of any format back into host memory.
    ///
    /// ```
    /// let engine = clpix::Engine::new()?;
    /// let img = image::RgbaImage::from_pixel(3, 3, image::Rgba([1, 2, 3, 4]));
    /// assert_eq!(engine.download(&engine.upload(&img)?)?, img);
    /// let gray16 = image::ImageBuffer::from_fn(7, 2, |x, _| image::Luma([x as u16 * 9000]));
    /// assert_eq!(engine.download(&engine.upload(&gray16)?)?, gray16);
    /// # Ok::<(), clpix::Error>(())
    /// ```
    pub fn download<P: Pixel>(
        &self,
        img: &DeviceImage<P>,
    ) -> Result<ImageBuffer<P, Vec<P::Subpixel>>> {
        let _one = self.one_call_at_a_time();
        let bytes = held_bytes(img)?.into_owned();
        let channels = match bytemuck::allocation::try_cast_vec::<u8, P::Subpixel>(bytes) {
            Ok(v) => v,
            Err((_, bytes)) => bytemuck::allocation::pod_collect_to_vec(&bytes),
        };
        ImageBuffer::from_raw(img.width, img.height, channels).ok_or(Error::ImageTooLarge {
            width: img.width as u64,
            height: img.height as u64,
            reason: "device image size does not match its pixels",
        })
    }

    /// Reads a device image back into `out`: its packed pixels, exactly bytes a pixel × width ×
    /// height bytes (4 a pixel for RGBA8; an error otherwise). Into a
    /// [`PinnedImage`]'s bytes the device writes at the link's full speed; into memory the
    /// caller reuses, no page is touched for the first time.
    ///
    /// ```
    /// let engine = clpix::Engine::new()?;
    /// let img = image::RgbaImage::from_pixel(3, 2, image::Rgba([1, 2, 3, 4]));
    /// let dev = engine.upload(&img)?;
    /// let mut out = engine.pinned_image(3, 2)?;
    /// engine.download_into(&dev, out.as_bytes_mut())?;
    /// assert_eq!(out.as_bytes(), img.as_raw().as_slice());
    /// assert!(engine.download_into(&dev, &mut [0u8; 5]).is_err());
    /// # Ok::<(), clpix::Error>(())
    /// ```
    pub fn download_into<P: Pixel>(&self, img: &DeviceImage<P>, out: &mut [u8]) -> Result<()> {
        let _one = self.one_call_at_a_time();
        let bpp = P::FORMAT.bytes_per_pixel();
        let len = img.width as usize * img.height as usize * bpp;
        if out.len() != len {
            return Err(Error::InvalidParameter {
                name: "out",
                value: format!("{} bytes", out.len()),
                expected: "exactly bytes a pixel × width × height bytes of the device image",
            });
        }
        match &img.storage {
            Storage::Host(bytes) => {
                crate::cpu::parallel_copy(bytes, out);
                Ok(())
            }
            Storage::OpenCl(parts) if bpp == 4 && P::FORMAT == crate::spec::Format::Rgba8 => {
                parts.owner.download_into(parts, img.width, out)
            }
            Storage::OpenCl(_) => {
                crate::cpu::parallel_copy(&held_bytes(img)?, out);
                Ok(())
            }
        }
    }

    /// A zeroed RGBA8 image in host memory that this engine's device moves at the link's full
    /// speed (page-locked; plain memory on the CPU engine and CPU devices): see
    /// [`PinnedImage`]. [`pinned_image_of`](Self::pinned_image_of) makes one of another
    /// format.
    ///
    /// ```
    /// let engine = clpix::Engine::new()?;
    /// let img = engine.pinned_image(640, 480)?;
    /// assert_eq!(img.as_bytes().len(), 640 * 480 * 4);
    /// # Ok::<(), clpix::Error>(())
    /// ```
    pub fn pinned_image(&self, width: u32, height: u32) -> Result<PinnedImage> {
        self.pinned_image_of(width, height)
    }

    /// A zeroed page-locked image of the pixel format `P` (see [`PinnedImage`]): a camera's
    /// mono16 frames, say, written into its bytes and given to any operation.
    ///
    /// ```
    /// use image::Luma;
    /// let engine = clpix::Engine::new()?;
    /// let mut frame = engine.pinned_image_of::<Luma<u16>>(640, 480)?;
    /// assert_eq!(frame.as_bytes().len(), 640 * 480 * 2);
    /// frame.as_bytes_mut()[2..4].copy_from_slice(&4095u16.to_ne_bytes());
    /// let hit = engine.extreme(&frame, clpix::Extreme::Brightest)?;
    /// assert_eq!((hit.x, hit.y, hit.key), (1, 0, 4095));
    /// # Ok::<(), clpix::Error>(())
    /// ```
    pub fn pinned_image_of<P: Pixel>(&self, width: u32, height: u32) -> Result<PinnedImage<P>> {
        let cl = match &self.backend {
            Backend::OpenCl(cl) => Some(cl),
            Backend::Cpu => None,
        };
        PinnedImage::new(cl, width, height)
    }
}

/// The packed pixels of a view.
fn packed_bytes(view: &crate::image::RawView<'_>) -> Vec<u8> {
    match view.packed_bytes() {
        Some(b) => b.to_vec(),
        None => (0..view.height)
            .flat_map(|y| view.row(y))
            .copied()
            .collect(),
    }
}

/// The packed pixels of a held image of any format, on the host: borrowed where the image is
/// host memory (the CPU engine), read back otherwise.
pub(super) fn held_bytes<P: Pixel>(img: &DeviceImage<P>) -> Result<Cow<'_, [u8]>> {
    match &img.storage {
        Storage::Host(bytes) => Ok(Cow::Borrowed(bytes)),
        Storage::OpenCl(parts) if P::FORMAT == crate::spec::Format::Rgba8 => Ok(Cow::Owned(
            parts.owner.download(parts, img.width, img.height)?,
        )),
        Storage::OpenCl(parts) => Ok(Cow::Owned(download_raw(
            parts,
            P::FORMAT,
            img.width,
            img.height,
        )?)),
    }
}
