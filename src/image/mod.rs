//! Host images: borrowed pixels of any [`Pixel`] format with an optional row stride, and the
//! size limits every operation shares.

use crate::error::{Error, Result};
use crate::spec::{Format, Pixel};
use image::{ImageBuffer, Rgba, RgbaImage};
use std::marker::PhantomData;

/// A borrowed image of pixels `P` (RGBA8 unless said otherwise): interleaved channels, rows top
/// to bottom, with an optional row stride in bytes.
///
/// Construction checks the buffer length and stride, so a view is always valid. RGBA8 views
/// are made from bytes ([`new`](Self::new), [`with_stride`](Self::with_stride)), views of the
/// other formats from their channels ([`from_channels`](Self::from_channels)); every image
/// buffer of the `image` crate converts with `From`.
///
/// ```
/// use clpix::ImageView;
/// // 3×2 pixels stored with 4 padding bytes after each row.
/// let bytes = vec![0u8; 16 * 2];
/// let view = ImageView::with_stride(&bytes, 3, 2, 16)?;
/// assert_eq!(view.pixel(2, 1), [0, 0, 0, 0]);
/// # Ok::<(), clpix::Error>(())
/// ```
#[derive(Debug, Clone, Copy)]
pub struct ImageView<'a, P = Rgba<u8>> {
    data: &'a [u8],
    width: u32,
    height: u32,
    stride: usize,
    pixel: PhantomData<P>,
}

impl<'a> ImageView<'a> {
    /// A view of tightly packed rows (`stride = 4 * width`).
    ///
    /// ```
    /// let px = [10u8, 20, 30, 255, 40, 50, 60, 255];
    /// let view = clpix::ImageView::new(&px, 2, 1)?;
    /// assert_eq!(view.pixel(1, 0), [40, 50, 60, 255]);
    /// # Ok::<(), clpix::Error>(())
    /// ```
    pub fn new(data: &'a [u8], width: u32, height: u32) -> Result<Self> {
        let stride = (width as usize)
            .checked_mul(4)
            .ok_or(Error::ImageTooLarge {
                width: width as u64,
                height: height as u64,
                reason: "a row does not fit in memory",
            })?;
        Self::with_stride(data, width, height, stride)
    }

    /// A view whose rows start `stride` bytes apart; padding bytes are never read.
    ///
    /// ```
    /// let bytes = vec![7u8; 12 * 3];
    /// let view = clpix::ImageView::with_stride(&bytes, 2, 3, 12)?;
    /// assert_eq!(view.stride(), 12);
    /// assert!(clpix::ImageView::with_stride(&bytes, 4, 3, 12).is_err()); // stride < 16
    /// # Ok::<(), clpix::Error>(())
    /// ```
    pub fn with_stride(data: &'a [u8], width: u32, height: u32, stride: usize) -> Result<Self> {
        Self::checked(data, width, height, stride)
    }

    /// The RGBA of pixel (x, y). Panics when out of bounds, like slice indexing.
    ///
    /// ```
    /// let img = image::RgbaImage::from_pixel(2, 2, image::Rgba([1, 2, 3, 4]));
    /// assert_eq!(clpix::ImageView::from(&img).pixel(1, 1), [1, 2, 3, 4]);
    /// ```
    pub fn pixel(&self, x: u32, y: u32) -> [u8; 4] {
        let row = self.row(y);
        let i = x as usize * 4;
        [row[i], row[i + 1], row[i + 2], row[i + 3]]
    }

    /// The view copied into an owned, packed [`RgbaImage`].
    ///
    /// ```
    /// let bytes = vec![9u8; 12 * 2];
    /// let view = clpix::ImageView::with_stride(&bytes, 2, 2, 12)?;
    /// assert_eq!(view.to_image().as_raw().len(), 16);
    /// # Ok::<(), clpix::Error>(())
    /// ```
    pub fn to_image(&self) -> RgbaImage {
        if self.pixel_count() == 0 {
            return RgbaImage::new(self.width, self.height);
        }
        let mut out = Vec::with_capacity(self.pixel_count() as usize * 4);
        for y in 0..self.height {
            out.extend_from_slice(self.row(y));
        }
        // The length is exactly width * height * 4, so this cannot fail.
        RgbaImage::from_raw(self.width, self.height, out).unwrap_or_default()
    }

    /// The RGBA8 view of a raw view of RGBA8 pixels (checked when it was made).
    pub(crate) fn of_raw(raw: RawView<'a>) -> Self {
        debug_assert_eq!(raw.format, Format::Rgba8);
        ImageView {
            data: raw.data,
            width: raw.width,
            height: raw.height,
            stride: raw.stride,
            pixel: PhantomData,
        }
    }
}

impl<'a, P: Pixel> ImageView<'a, P>
where
    P::Subpixel: bytemuck::Pod,
{
    /// A view of pixels `P` given as their channels (`P::Subpixel`: `u8`, `u16` or `f32`),
    /// rows starting `stride` **bytes** apart (a multiple of the channel size; padding is
    /// never read). For RGBA8 bytes [`with_stride`](ImageView::with_stride) says the same.
    ///
    /// ```
    /// use image::Luma;
    /// // 3×2 mono16 pixels, rows 8 bytes apart (one u16 of padding).
    /// let px = [1u16, 2, 3, 0, 4, 5, 6, 0];
    /// let view = clpix::ImageView::<Luma<u16>>::from_channels(&px, 3, 2, 8)?;
    /// assert_eq!(view.get(2, 1), Luma([6]));
    /// assert!(clpix::ImageView::<Luma<u16>>::from_channels(&px, 3, 2, 5).is_err());
    /// # Ok::<(), clpix::Error>(())
    /// ```
    pub fn from_channels(
        data: &'a [P::Subpixel],
        width: u32,
        height: u32,
        stride: usize,
    ) -> Result<Self> {
        let size = std::mem::size_of::<P::Subpixel>();
        if !stride.is_multiple_of(size) {
            return Err(Error::invalid(
                "row stride",
                stride,
                "a multiple of the channel size in bytes (2 for u16, 4 for f32)",
            ));
        }
        Self::checked(bytemuck::cast_slice(data), width, height, stride)
    }

    /// Pixel (x, y). Panics when out of bounds, like slice indexing.
    ///
    /// ```
    /// let img = image::ImageBuffer::from_pixel(2, 2, image::Luma([0.5f32]));
    /// assert_eq!(clpix::ImageView::from(&img).get(1, 1), image::Luma([0.5]));
    /// ```
    pub fn get(&self, x: u32, y: u32) -> P {
        let b = P::FORMAT.bytes_per_pixel();
        let row = self.row(y);
        crate::spec::pixel_of_bytes(&row[x as usize * b..(x as usize + 1) * b])
    }
}

impl<'a, P: Pixel> ImageView<'a, P> {
    /// A view of packed pixels whose size the caller has checked (`data` holds exactly
    /// `bytes_per_pixel * width * height` bytes).
    pub(crate) fn packed_of(data: &'a [u8], width: u32, height: u32) -> Self {
        let bpp = P::FORMAT.bytes_per_pixel();
        debug_assert_eq!(data.len(), bpp * width as usize * height as usize);
        ImageView {
            data,
            width,
            height,
            stride: width as usize * bpp,
            pixel: PhantomData,
        }
    }

    fn checked(data: &'a [u8], width: u32, height: u32, stride: usize) -> Result<Self> {
        let bpp = P::FORMAT.bytes_per_pixel();
        let too_large = |reason| Error::ImageTooLarge {
            width: width as u64,
            height: height as u64,
            reason,
        };
        let min = (width as usize)
            .checked_mul(bpp)
            .ok_or(too_large("a row does not fit in memory"))?;
        if stride < min {
            return Err(Error::StrideTooSmall { stride, min });
        }
        let needed = if width == 0 || height == 0 {
            0
        } else {
            (height as usize - 1)
                .checked_mul(stride)
                .and_then(|b| b.checked_add(min))
                .ok_or(too_large("the buffer would not fit in memory"))?
        };
        if data.len() < needed {
            return Err(Error::BufferTooShort {
                width,
                height,
                stride,
                needed,
                actual: data.len(),
            });
        }
        Ok(ImageView {
            data,
            width,
            height,
            stride,
            pixel: PhantomData,
        })
    }

    /// Width in pixels.
    ///
    /// ```
    /// let img = image::RgbaImage::new(5, 3);
    /// assert_eq!(clpix::ImageView::from(&img).width(), 5);
    /// ```
    pub fn width(&self) -> u32 {
        self.width
    }

    /// Height in pixels.
    ///
    /// ```
    /// let img = image::RgbaImage::new(5, 3);
    /// assert_eq!(clpix::ImageView::from(&img).height(), 3);
    /// ```
    pub fn height(&self) -> u32 {
        self.height
    }

    /// Bytes between row starts.
    ///
    /// ```
    /// let img = image::RgbaImage::new(5, 3);
    /// assert_eq!(clpix::ImageView::from(&img).stride(), 20);
    /// ```
    pub fn stride(&self) -> usize {
        self.stride
    }

    /// Number of pixels, `width * height`.
    ///
    /// ```
    /// let img = image::RgbaImage::new(5, 3);
    /// assert_eq!(clpix::ImageView::from(&img).pixel_count(), 15);
    /// ```
    pub fn pixel_count(&self) -> u64 {
        self.width as u64 * self.height as u64
    }

    /// Whether rows follow each other with no padding (one contiguous run of pixels).
    ///
    /// ```
    /// let img = image::RgbaImage::new(5, 3);
    /// assert!(clpix::ImageView::from(&img).is_packed());
    /// ```
    pub fn is_packed(&self) -> bool {
        self.raw().packed_bytes().is_some()
    }

    /// The bytes of row `y` (exactly `width` pixels' worth, padding excluded).
    ///
    /// Panics if `y >= height`, like slice indexing.
    ///
    /// ```
    /// let img = image::RgbaImage::new(5, 3);
    /// assert_eq!(clpix::ImageView::from(&img).row(2).len(), 20);
    /// ```
    pub fn row(&self, y: u32) -> &'a [u8] {
        self.raw().row(y)
    }

    /// All pixels as one slice when the view is packed (`None` when rows are padded).
    pub(crate) fn packed_bytes(&self) -> Option<&'a [u8]> {
        self.raw().packed_bytes()
    }

    /// The format's byte layout, without its type: what the typed operations run on.
    pub(crate) fn raw(&self) -> RawView<'a> {
        RawView {
            data: self.data,
            width: self.width,
            height: self.height,
            stride: self.stride,
            format: P::FORMAT,
        }
    }
}

impl<'a, P: Pixel> From<&'a ImageBuffer<P, Vec<P::Subpixel>>> for ImageView<'a, P>
where
    P::Subpixel: bytemuck::Pod,
{
    fn from(img: &'a ImageBuffer<P, Vec<P::Subpixel>>) -> Self {
        ImageView {
            data: bytemuck::cast_slice(img.as_raw()),
            width: img.width(),
            height: img.height(),
            stride: img.width() as usize * P::FORMAT.bytes_per_pixel(),
            pixel: PhantomData,
        }
    }
}

/// A view's bytes and layout with its format as a value: rows of `width * bytes_per_pixel`
/// bytes, `stride` apart, channels native-endian and aligned to their size.
#[derive(Debug, Clone, Copy)]
pub(crate) struct RawView<'a> {
    pub data: &'a [u8],
    pub width: u32,
    pub height: u32,
    pub stride: usize,
    pub format: Format,
}

impl<'a> RawView<'a> {
    pub(crate) fn pixel_count(&self) -> u64 {
        self.width as u64 * self.height as u64
    }
    pub(crate) fn row_bytes(&self) -> usize {
        self.width as usize * self.format.bytes_per_pixel()
    }
    /// The bytes of row `y`.
    pub(crate) fn row(&self, y: u32) -> &'a [u8] {
        if self.width == 0 {
            // A view without columns may have far more rows than bytes.
            return &[];
        }
        let start = y as usize * self.stride;
        &self.data[start..start + self.row_bytes()]
    }
    /// All pixels as one slice when rows follow each other without padding.
    pub(crate) fn packed_bytes(&self) -> Option<&'a [u8]> {
        (self.stride == self.row_bytes() || self.height <= 1)
            .then(|| &self.data[..self.pixel_count() as usize * self.format.bytes_per_pixel()])
    }
}

/// Checks that an image's pixel count fits the u32 indices and counters of the spec.
pub(crate) fn check_pixel_count(width: u32, height: u32) -> Result<u64> {
    let n = width as u64 * height as u64;
    if n > u32::MAX as u64 {
        return Err(Error::ImageTooLarge {
            width: width as u64,
            height: height as u64,
            reason: "more than u32::MAX pixels (indices and counters are u32)",
        });
    }
    Ok(n)
}
