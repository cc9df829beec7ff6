//! A device image's buffers on an OpenCL engine, their upload and download, and the walk over
//! an input's parts that every OpenCL operation makes.

use crate::device::{DeviceImage, ImageInput, Storage};
use crate::error::{Error, Result};
use crate::image::ImageView;
use crate::opencl::{ClEngine, PartRange};
use crate::spec::Format;
use opencl3::memory::Buffer;
use std::fmt;
use std::sync::Arc;

/// Host pixels of any device image, whoever holds it.
pub(crate) fn host_copy(dev: &DeviceImage) -> Result<image::RgbaImage> {
    let bytes = match &dev.storage {
        Storage::Host(b) => b.clone(),
        Storage::OpenCl(parts) => parts.owner.download(parts, dev.width, dev.height)?,
    };
    image::RgbaImage::from_raw(dev.width, dev.height, bytes).ok_or(Error::ImageTooLarge {
        width: dev.width as u64,
        height: dev.height as u64,
        reason: "device image size does not match its pixels",
    })
}

/// One buffer of whole rows of a device image.
pub(crate) struct Part {
    pub buffer: Buffer<u32>,
    pub range: PartRange,
    /// The buffer's words (the range's pixels for RGBA8; whole chunks for the other formats).
    pub words: usize,
}

/// The buffers of a device image and the engine that owns them.
pub(crate) struct DeviceParts {
    pub owner: Arc<ClEngine>,
    pub parts: Vec<Part>,
}

impl Drop for DeviceParts {
    /// The buffers go back to their engine for the next image of their size.
    fn drop(&mut self) {
        for p in std::mem::take(&mut self.parts) {
            self.owner.give_image_buffer(p.words, p.buffer);
        }
    }
}

impl DeviceParts {
    /// The parts, taken out (the caller keeps or gives back their buffers).
    pub(crate) fn into_parts(mut self) -> Vec<Part> {
        std::mem::take(&mut self.parts)
    }
}

impl fmt::Debug for DeviceParts {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "DeviceParts({} part(s) on {})",
            self.parts.len(),
            self.owner.info.name
        )
    }
}
impl ClEngine {
    /// Uploads a host view into device parts.
    pub(crate) fn upload(self: &Arc<Self>, view: &ImageView<'_>) -> Result<DeviceParts> {
        let mut parts = Vec::new();
        for range in self.part_ranges(view.width(), view.height()) {
            // Padded to whole chunks of every format's kernels: the operations of every format
            // read the part where it is too (`Any::with_source`).
            let words = crate::device::raw::held_words(range.pixels() as u64, Format::Rgba8);
            let mut buffer = self.image_buffer(words, "an image part")?;
            self.write_range(&mut buffer, view, range)?;
            parts.push(Part {
                buffer,
                range,
                words,
            });
        }
        Ok(DeviceParts {
            owner: self.clone(),
            parts,
        })
    }

    /// Reads device parts back into packed RGBA8 bytes.
    pub(crate) fn download(&self, d: &DeviceParts, width: u32, height: u32) -> Result<Vec<u8>> {
        let mut bytes = crate::cpu::alloc_zeroed::<u8>(width as usize * height as usize * 4);
        self.download_into(d, width, &mut bytes)?;
        Ok(bytes)
    }

    /// Reads device parts back into `bytes` (packed RGBA8 of the whole image).
    pub(crate) fn download_into(
        &self,
        d: &DeviceParts,
        width: u32,
        bytes: &mut [u8],
    ) -> Result<()> {
        let parts: Vec<_> = d
            .parts
            .iter()
            .map(|p| {
                (
                    &p.buffer,
                    p.range.first_pixel(width) as usize,
                    p.range.pixels(),
                )
            })
            .collect();
        d.owner.read_rgba8_into(&parts, bytes)
    }
    /// Runs `f(buffer, range)` over the image in parts that fit one buffer each, in scan order.
    ///
    /// A host image is uploaded part by part into one reused buffer; a device image of this
    /// engine is used in place; any other device image is downloaded first.
    pub(crate) fn for_each_part(
        self: &Arc<Self>,
        input: ImageInput<'_>,
        mut f: impl FnMut(&Buffer<u32>, PartRange) -> Result<()>,
    ) -> Result<()> {
        let staged;
        let view = match input {
            ImageInput::Device(dev) => match &dev.storage {
                Storage::OpenCl(parts) if Arc::ptr_eq(&parts.owner, self) => {
                    for p in &parts.parts {
                        f(&p.buffer, p.range)?;
                    }
                    return Ok(());
                }
                _ => {
                    staged = host_copy(dev)?;
                    ImageView::from(&staged)
                }
            },
            ImageInput::Host(v) => v,
        };
        let ranges = self.part_ranges(view.width(), view.height());
        // Packed, 4-aligned pixels are read where they are.
        let words = view
            .packed_bytes()
            .and_then(|b| bytemuck::try_cast_slice::<u8, u32>(b).ok());
        if let Some(words) = words.filter(|_| self.uses_host_memory()) {
            // Dropped before this returns: no kernel reads the caller's pixels after that.
            let mut drain = self.queue_drain();
            drain.armed = true;
            for r in ranges {
                let start = r.first_pixel(view.width()) as usize;
                // SAFETY: the pixels are borrowed for this call, and `drain` waits for every
                // kernel before it returns.
                let buffer = unsafe {
                    self.buffer_over_host_read_only(
                        &words[start..start + r.pixels()],
                        "an image part",
                    )?
                };
                f(&buffer, r)?;
            }
            return Ok(());
        }
        let Some(largest) = ranges.iter().map(|r| r.pixels()).max() else {
            return Ok(());
        };
        // From the engine's idle image buffers, and given back to them: a buffer made and
        // freed per call synchronised the whole CUDA context at its free, so frames in flight on
        // several lanes waited on each other.
        let mut buffer = self.image_buffer::<u32>(largest, "an image part")?;
        for r in ranges {
            self.write_range(&mut buffer, &view, r)?;
            f(&buffer, r)?;
        }
        // Its kernels may still run: the next user is on the same in-order queue, or (several
        // lanes) the pool waits for this lane first.
        self.give_image_buffer(largest, buffer);
        Ok(())
    }
}
