//! [`PinnedImage`]: an image of any format in page-locked host memory of an engine's device, which
//! uploads and downloads move by DMA at the link's full speed.

use crate::error::Result;
use crate::image::{ImageView, check_pixel_count};
use crate::opencl::{ClEngine, Pinned};
use crate::spec::Pixel;
use image::Rgba;
use std::fmt;
use std::marker::PhantomData;
use std::sync::Arc;

/// An image in host memory that the engine's device reads and writes at the link's full
/// speed: page-locked memory its driver allocated, which transfers move without a copy through
/// clpix's staging buffers (on the H100, pinned memory moved 54–55 GB/s each way, pageable
/// 8–15 GB/s, and a call from pageable memory through the staging 22–35 GB/s). On the CPU
/// engine and on CPU devices it is plain host memory.
///
/// Of any [`Pixel`] format (`PinnedImage` alone is RGBA8; made by
/// [`Engine::pinned_image`](crate::Engine::pinned_image), the other formats by
/// [`Engine::pinned_image_of`](crate::Engine::pinned_image_of)); fill it (a camera SDK
/// writing into [`as_bytes_mut`](Self::as_bytes_mut), or [`copy_from`](Self::copy_from)), pass
/// `&pinned` to any operation, or download a device image into it with
/// [`Engine::download_into`](crate::Engine::download_into). Page-locked memory is scarce:
/// make a few and reuse them (a ring of frames in flight), not one per frame.
///
/// ```
/// let engine = clpix::Engine::new()?;
/// let mut frame = engine.pinned_image(64, 48)?;
/// frame.as_bytes_mut().fill(7);
/// let hit = engine.extreme(&frame, clpix::Extreme::Brightest)?;
/// assert_eq!(hit.rgba, [7, 7, 7, 7]);
/// # Ok::<(), clpix::Error>(())
/// ```
pub struct PinnedImage<P: Pixel = Rgba<u8>> {
    width: u32,
    height: u32,
    memory: Memory,
    pixel: PhantomData<fn() -> P>,
}

enum Memory {
    Host(Vec<u8>),
    OpenCl {
        engine: Arc<ClEngine>,
        /// Always `Some` until dropped.
        pinned: Option<Pinned>,
    },
}

impl<P: Pixel> fmt::Debug for PinnedImage<P> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let on = match &self.memory {
            Memory::Host(_) => "host memory".to_string(),
            Memory::OpenCl { engine, .. } => format!("pinned for {}", engine.info.name),
        };
        write!(
            f,
            "PinnedImage<{:?}>({}×{}, {on})",
            P::FORMAT,
            self.width,
            self.height
        )
    }
}

impl<P: Pixel> Drop for PinnedImage<P> {
    fn drop(&mut self) {
        if let Memory::OpenCl { engine, pinned } = &mut self.memory
            && let Some(p) = pinned.take()
        {
            engine.unpin(p);
        }
    }
}

impl<P: Pixel> PinnedImage<P> {
    /// A zeroed image for `engine` (`None`: plain host memory).
    pub(crate) fn new(engine: Option<&Arc<ClEngine>>, width: u32, height: u32) -> Result<Self> {
        let len = check_pixel_count(width, height)? as usize * P::FORMAT.bytes_per_pixel();
        let memory = match engine {
            None => Memory::Host(crate::cpu::alloc_zeroed(len)),
            Some(cl) if cl.uses_host_memory() => Memory::Host(crate::cpu::alloc_zeroed(len)),
            Some(cl) => {
                let p = cl.pin(len)?;
                // SAFETY: the mapping holds `len` bytes, ours alone until unpinned.
                unsafe { std::slice::from_raw_parts_mut(p.ptr, len) }.fill(0);
                Memory::OpenCl {
                    engine: Arc::clone(cl),
                    pinned: Some(p),
                }
            }
        };
        Ok(PinnedImage {
            width,
            height,
            memory,
            pixel: PhantomData,
        })
    }

    /// The engine whose driver page-locked the memory; `None` for plain host memory.
    pub(crate) fn owner(&self) -> Option<&Arc<ClEngine>> {
        match &self.memory {
            Memory::OpenCl { engine, .. } => Some(engine),
            Memory::Host(_) => None,
        }
    }

    /// Width in pixels.
    ///
    /// ```
    /// let engine = clpix::Engine::cpu();
    /// assert_eq!(engine.pinned_image(5, 3)?.width(), 5);
    /// # Ok::<(), clpix::Error>(())
    /// ```
    pub fn width(&self) -> u32 {
        self.width
    }

    /// Height in pixels.
    ///
    /// ```
    /// let engine = clpix::Engine::cpu();
    /// assert_eq!(engine.pinned_image(5, 3)?.height(), 3);
    /// # Ok::<(), clpix::Error>(())
    /// ```
    pub fn height(&self) -> u32 {
        self.height
    }

    /// The pixels, packed in scan order (RGBA8: 4 × width × height bytes; the channels
    /// native-endian).
    ///
    /// ```
    /// let engine = clpix::Engine::cpu();
    /// assert_eq!(engine.pinned_image(5, 3)?.as_bytes().len(), 60);
    /// # Ok::<(), clpix::Error>(())
    /// ```
    pub fn as_bytes(&self) -> &[u8] {
        let len = self.width as usize * self.height as usize * P::FORMAT.bytes_per_pixel();
        match &self.memory {
            Memory::Host(v) => v,
            // SAFETY: the mapping holds at least `len` bytes and lives as long as `self`;
            // `&self` excludes writers.
            Memory::OpenCl {
                pinned: Some(p), ..
            } => unsafe { std::slice::from_raw_parts(p.ptr, len) },
            Memory::OpenCl { pinned: None, .. } => &[],
        }
    }

    /// The pixels, to fill.
    ///
    /// ```
    /// let engine = clpix::Engine::cpu();
    /// let mut img = engine.pinned_image(2, 1)?;
    /// img.as_bytes_mut()[4..].copy_from_slice(&[1, 2, 3, 4]);
    /// assert_eq!(img.view().pixel(1, 0), [1, 2, 3, 4]);
    /// # Ok::<(), clpix::Error>(())
    /// ```
    pub fn as_bytes_mut(&mut self) -> &mut [u8] {
        let len = self.width as usize * self.height as usize * P::FORMAT.bytes_per_pixel();
        match &mut self.memory {
            Memory::Host(v) => v,
            // SAFETY: as in `as_bytes`; `&mut self` makes this the only access.
            Memory::OpenCl {
                pinned: Some(p), ..
            } => unsafe { std::slice::from_raw_parts_mut(p.ptr, len) },
            Memory::OpenCl { pinned: None, .. } => &mut [],
        }
    }

    /// The image as a view, for anything that takes one.
    ///
    /// ```
    /// let engine = clpix::Engine::cpu();
    /// let img = engine.pinned_image(4, 2)?;
    /// assert_eq!(img.view().width(), 4);
    /// # Ok::<(), clpix::Error>(())
    /// ```
    pub fn view(&self) -> ImageView<'_, P> {
        ImageView::packed_of(self.as_bytes(), self.width, self.height)
    }

    /// Copies `src` (of the same size) into the image, on all cores.
    ///
    /// ```
    /// let engine = clpix::Engine::cpu();
    /// let src = image::RgbaImage::from_pixel(3, 3, image::Rgba([9, 8, 7, 6]));
    /// let mut img = engine.pinned_image(3, 3)?;
    /// img.copy_from(&src)?;
    /// assert_eq!(img.as_bytes(), src.as_raw().as_slice());
    /// assert!(img.copy_from(&image::RgbaImage::new(2, 2)).is_err());
    /// # Ok::<(), clpix::Error>(())
    /// ```
    pub fn copy_from<'a>(&mut self, src: impl Into<ImageView<'a, P>>) -> Result<()> {
        let src = src.into();
        if (src.width(), src.height()) != (self.width, self.height) {
            return Err(crate::error::Error::InvalidParameter {
                name: "src",
                value: format!("{}×{}", src.width(), src.height()),
                expected: "an image of the pinned image's size",
            });
        }
        let row = self.width as usize * P::FORMAT.bytes_per_pixel();
        let dst = self.as_bytes_mut();
        match src.packed_bytes() {
            Some(bytes) => crate::cpu::parallel_copy(bytes, dst),
            None => {
                for (y, out) in dst.chunks_exact_mut(row.max(1)).enumerate() {
                    out.copy_from_slice(src.row(y as u32));
                }
            }
        }
        Ok(())
    }
}

impl<'a> From<&'a PinnedImage<Rgba<u8>>> for crate::device::ImageInput<'a> {
    fn from(img: &'a PinnedImage) -> Self {
        crate::device::ImageInput::Host(img.view())
    }
}
