//! What operations take: host pixels or an image held by an engine.

use super::host_copy;
use crate::error::Result;
use crate::image::ImageView;
use crate::spec::Pixel;
use image::{Rgba, RgbaImage};
use std::marker::PhantomData;

/// Anything an operation accepts as its image: a host image, a view, or a [`DeviceImage`].
///
/// You rarely name this type: every operation takes `impl Into<ImageInput>`, so you pass
/// `&RgbaImage`, `ImageView`, `&ImageView` or `&DeviceImage` directly.
///
/// ```
/// use clpix::{Engine, ImageView};
/// let engine = Engine::cpu();
/// let img = image::RgbaImage::from_pixel(4, 4, image::Rgba([9, 9, 9, 255]));
/// let a = engine.extreme(&img, clpix::Extreme::Brightest)?;
/// let b = engine.extreme(ImageView::from(&img), clpix::Extreme::Brightest)?;
/// let dev = engine.upload(&img)?;
/// let c = engine.extreme(&dev, clpix::Extreme::Brightest)?;
/// assert!(a == b && b == c);
/// # Ok::<(), clpix::Error>(())
/// ```
#[derive(Debug, Clone, Copy)]
pub enum ImageInput<'a> {
    /// Pixels in host memory.
    Host(ImageView<'a>),
    /// Pixels already uploaded with [`Engine::upload`](crate::Engine::upload).
    Device(&'a DeviceImage),
}

impl ImageInput<'_> {
    /// Width in pixels.
    ///
    /// ```
    /// let img = image::RgbaImage::new(3, 2);
    /// assert_eq!(clpix::ImageInput::from(&img).width(), 3);
    /// ```
    pub fn width(&self) -> u32 {
        match self {
            ImageInput::Host(v) => v.width(),
            ImageInput::Device(d) => d.width(),
        }
    }

    /// Height in pixels.
    ///
    /// ```
    /// let img = image::RgbaImage::new(3, 2);
    /// assert_eq!(clpix::ImageInput::from(&img).height(), 2);
    /// ```
    pub fn height(&self) -> u32 {
        match self {
            ImageInput::Host(v) => v.height(),
            ImageInput::Device(d) => d.height(),
        }
    }

    /// Number of pixels.
    ///
    /// ```
    /// let img = image::RgbaImage::new(3, 2);
    /// assert_eq!(clpix::ImageInput::from(&img).pixel_count(), 6);
    /// ```
    pub fn pixel_count(&self) -> u64 {
        self.width() as u64 * self.height() as u64
    }
}

impl<'a> From<&'a RgbaImage> for ImageInput<'a> {
    fn from(img: &'a RgbaImage) -> Self {
        ImageInput::Host(img.into())
    }
}
impl<'a> From<ImageView<'a>> for ImageInput<'a> {
    fn from(v: ImageView<'a>) -> Self {
        ImageInput::Host(v)
    }
}
impl<'a> From<&ImageView<'a>> for ImageInput<'a> {
    fn from(v: &ImageView<'a>) -> Self {
        ImageInput::Host(*v)
    }
}
impl<'a> From<&'a DeviceImage> for ImageInput<'a> {
    fn from(d: &'a DeviceImage) -> Self {
        ImageInput::Device(d)
    }
}

/// An image held by an [`Engine`](crate::Engine): in device memory on an OpenCL engine, in host
/// memory on the CPU engine. Several operations can run on it without copying it again.
///
/// Of any [`Pixel`] format (`DeviceImage` alone is RGBA8): made by
/// [`Engine::upload`](crate::Engine::upload) from a host image of that format, read back with
/// [`Engine::download`](crate::Engine::download). It belongs to the engine that made it: given
/// to another engine, it is read back and processed there (the same bits).
///
/// ```
/// use clpix::{Engine, Extreme};
/// let engine = Engine::new()?;
/// let img = image::RgbaImage::from_pixel(8, 8, image::Rgba([1, 2, 3, 4]));
/// let dev = engine.upload(&img)?;
/// assert_eq!((dev.width(), dev.height()), (8, 8));
/// assert_eq!(engine.download(&dev)?, img);
/// // A uint16 frame held on the device: every operation takes it.
/// let gray16 = image::ImageBuffer::from_fn(64, 48, |x, y| image::Luma([(x * 1000 + y) as u16]));
/// let dev16 = engine.upload(&gray16)?; // a DeviceImage<Luma<u16>>
/// assert_eq!(engine.extreme(&dev16, Extreme::Brightest)?, engine.extreme(&gray16, Extreme::Brightest)?);
/// assert_eq!(engine.download(&dev16)?, gray16);
/// # Ok::<(), clpix::Error>(())
/// ```
pub struct DeviceImage<P: Pixel = Rgba<u8>> {
    pub(crate) width: u32,
    pub(crate) height: u32,
    pub(crate) storage: Storage,
    pub(crate) pixel: PhantomData<fn() -> P>,
}

impl<P: Pixel> std::fmt::Debug for DeviceImage<P> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeviceImage")
            .field("format", &P::FORMAT)
            .field("width", &self.width)
            .field("height", &self.height)
            .field("storage", &self.storage)
            .finish()
    }
}

#[derive(Debug)]
pub(crate) enum Storage {
    /// Packed pixels of the image's format in host memory (CPU engine).
    Host(Vec<u8>),
    /// Packed pixels in OpenCL buffers, one per part (images above the allocation cap are split
    /// into parts of whole rows); the other formats' parts padded with zeros to whole chunks of
    /// their kernels (`formats.h`).
    OpenCl(crate::device::DeviceParts),
}

impl<P: Pixel> DeviceImage<P> {
    pub(crate) fn new(width: u32, height: u32, storage: Storage) -> Self {
        DeviceImage {
            width,
            height,
            storage,
            pixel: PhantomData,
        }
    }

    /// Width in pixels.
    ///
    /// ```
    /// let engine = clpix::Engine::cpu();
    /// let dev = engine.upload(&image::RgbaImage::new(3, 2))?;
    /// assert_eq!(dev.width(), 3);
    /// # Ok::<(), clpix::Error>(())
    /// ```
    pub fn width(&self) -> u32 {
        self.width
    }

    /// Height in pixels.
    ///
    /// ```
    /// let engine = clpix::Engine::cpu();
    /// let dev = engine.upload(&image::RgbaImage::new(3, 2))?;
    /// assert_eq!(dev.height(), 2);
    /// # Ok::<(), clpix::Error>(())
    /// ```
    pub fn height(&self) -> u32 {
        self.height
    }
}

/// Host pixels for the CPU path: borrowed for host inputs, downloaded for device images.
pub(crate) enum HostPixels<'a> {
    Borrowed(ImageView<'a>),
    Owned(image::RgbaImage),
}

impl<'a> HostPixels<'a> {
    pub(crate) fn of(input: ImageInput<'a>) -> Result<HostPixels<'a>> {
        Ok(match input {
            ImageInput::Host(v) => HostPixels::Borrowed(v),
            ImageInput::Device(d) => match &d.storage {
                Storage::Host(bytes) => {
                    HostPixels::Borrowed(ImageView::new(bytes, d.width, d.height)?)
                }
                Storage::OpenCl(_) => HostPixels::Owned(host_copy(d)?),
            },
        })
    }

    pub(crate) fn view(&self) -> ImageView<'_> {
        match self {
            HostPixels::Borrowed(v) => *v,
            HostPixels::Owned(img) => ImageView::from(img),
        }
    }
}
