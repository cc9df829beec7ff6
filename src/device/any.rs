//! The images the operations that take every [`Pixel`] format accept.

use super::raw::{HostRaw, RawHeld, RawSource};
use super::{DeviceImage, ImageInput};
use crate::image::ImageView;
use crate::spec::{Format, Pixel};
use image::{ImageBuffer, Rgba};

/// An image of any [`Pixel`] format that an operation accepts: `&ImageBuffer<P, Vec<_>>`,
/// [`ImageView<P>`](ImageView) (or a reference to one), a [`DeviceImage<P>`](DeviceImage), a
/// [`PinnedImage<P>`](super::PinnedImage), and for RGBA8 also an [`ImageInput`]. The operations that take every format (the
/// brightest and darkest pixel, the statistics) take `impl IntoImage`; their result type
/// follows the pixel type.
///
/// ```
/// use clpix::{Engine, Extreme};
/// let engine = Engine::cpu();
/// let gray16 = image::ImageBuffer::from_fn(64, 48, |x, y| image::Luma([(x * 1000 + y) as u16]));
/// let rgba = image::RgbaImage::from_pixel(4, 4, image::Rgba([9, 9, 9, 255]));
/// let hit = engine.extreme(&gray16, Extreme::Brightest)?; // a Hit<Luma<u16>>
/// assert_eq!((hit.x, hit.y, hit.key), (63, 47, 63_047));
/// let hit = engine.extreme(&rgba, Extreme::Brightest)?; // a PixelHit, as always
/// assert_eq!(hit.rgba, [9, 9, 9, 255]);
/// # Ok::<(), clpix::Error>(())
/// ```
pub trait IntoImage<'a>: Sized {
    /// The pixel type.
    type Pixel: Pixel;
    #[doc(hidden)]
    fn into_any(self) -> AnyImage<'a>;
}

/// An image of some format, as the operations take it.
#[doc(hidden)]
#[derive(Debug, Clone, Copy)]
pub struct AnyImage<'a>(pub(crate) Any<'a>);

#[derive(Debug, Clone, Copy)]
pub(crate) enum Any<'a> {
    /// RGBA8: the tuned paths, host or device.
    Rgba8(ImageInput<'a>),
    /// Every other format: host pixels, or an image an engine holds.
    Typed(RawSource<'a>),
}

/// An image of any format as host pixels: a view of the caller's, or an RGBA8 image an engine
/// held, read back.
pub(crate) enum HostAny<'a> {
    Typed(HostRaw<'a>),
    Rgba8(super::HostPixels<'a>),
}

impl<'a> Any<'a> {
    /// Width and height in pixels.
    pub(crate) fn size(&self) -> (u32, u32) {
        match self {
            Any::Typed(src) => (src.width(), src.height()),
            Any::Rgba8(input) => (input.width(), input.height()),
        }
    }

    /// `f` of the image as a [`RawSource`]: an image of another format as it is (held images
    /// where they are); an RGBA8 held image where it is too when its parts are padded to whole
    /// chunks of the other formats' kernels (`Engine::upload`'s are), else read back; an RGBA8
    /// host image as it is.
    pub(crate) fn with_source<R>(
        self,
        f: impl FnOnce(RawSource<'_>) -> crate::error::Result<R>,
    ) -> crate::error::Result<R> {
        match self {
            Any::Typed(src) => f(src),
            Any::Rgba8(ImageInput::Device(dev)) if in_chunks(dev) => f(RawSource::Held(RawHeld {
                format: Format::Rgba8,
                width: dev.width,
                height: dev.height,
                storage: &dev.storage,
            })),
            Any::Rgba8(_) => {
                let host = self.into_host()?;
                f(RawSource::Host(host.raw()))
            }
        }
    }

    /// The image's pixels on the host (an RGBA8 device image read back).
    pub(crate) fn into_host(self) -> crate::error::Result<HostAny<'a>> {
        Ok(match self {
            Any::Typed(src) => HostAny::Typed(src.host()?),
            Any::Rgba8(input) => HostAny::Rgba8(super::HostPixels::of(input)?),
        })
    }
}

/// Whether an RGBA8 device image's parts are padded to whole chunks of every format's kernels
/// (host memory is packed: always).
fn in_chunks(dev: &DeviceImage) -> bool {
    match &dev.storage {
        super::Storage::Host(_) => true,
        super::Storage::OpenCl(parts) => parts
            .parts
            .iter()
            .all(|p| p.words >= super::raw::held_words(p.range.pixels() as u64, Format::Rgba8)),
    }
}

impl HostAny<'_> {
    /// The pixels as bytes and a format.
    pub(crate) fn raw(&self) -> crate::image::RawView<'_> {
        match self {
            HostAny::Typed(raw) => raw.raw(),
            HostAny::Rgba8(host) => host.view().raw(),
        }
    }
}

fn of_view<'a, P: Pixel>(v: &ImageView<'a, P>) -> AnyImage<'a> {
    let raw = v.raw();
    AnyImage(match P::FORMAT {
        Format::Rgba8 => Any::Rgba8(ImageInput::Host(ImageView::of_raw(raw))),
        _ => Any::Typed(RawSource::Host(raw)),
    })
}

impl<'a, P: Pixel> IntoImage<'a> for ImageView<'a, P> {
    type Pixel = P;
    fn into_any(self) -> AnyImage<'a> {
        of_view(&self)
    }
}
impl<'a, P: Pixel> IntoImage<'a> for &ImageView<'a, P> {
    type Pixel = P;
    fn into_any(self) -> AnyImage<'a> {
        of_view(self)
    }
}
impl<'a, P: Pixel> IntoImage<'a> for &'a ImageBuffer<P, Vec<P::Subpixel>>
where
    P::Subpixel: bytemuck::Pod,
{
    type Pixel = P;
    fn into_any(self) -> AnyImage<'a> {
        of_view(&ImageView::from(self))
    }
}
impl<'a, P: Pixel> IntoImage<'a> for &'a super::PinnedImage<P> {
    type Pixel = P;
    fn into_any(self) -> AnyImage<'a> {
        of_view(&self.view())
    }
}

impl<'a, P: Pixel> IntoImage<'a> for &'a DeviceImage<P> {
    type Pixel = P;
    fn into_any(self) -> AnyImage<'a> {
        // RGBA8 to its tuned paths (`P` is `Rgba<u8>` exactly when this downcast succeeds).
        let held: &'a dyn std::any::Any = self;
        if let Some(rgba8) = held.downcast_ref::<DeviceImage<Rgba<u8>>>() {
            return AnyImage(Any::Rgba8(ImageInput::Device(rgba8)));
        }
        AnyImage(Any::Typed(RawSource::Held(RawHeld {
            format: P::FORMAT,
            width: self.width,
            height: self.height,
            storage: &self.storage,
        })))
    }
}
impl<'a> IntoImage<'a> for ImageInput<'a> {
    type Pixel = Rgba<u8>;
    fn into_any(self) -> AnyImage<'a> {
        AnyImage(Any::Rgba8(self))
    }
}
