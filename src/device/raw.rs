//! Images of the formats other than RGBA8 as the operations take them: host pixels, or an image
//! an engine holds ([`DeviceImage<P>`](super::DeviceImage)); their upload and download, the walk
//! over their parts, and the read of one pixel's value.

use super::{DeviceParts, Part, Storage};
use crate::error::{Error, Result};
use crate::image::RawView;
use crate::opencl::{ClEngine, PartRange, raw_part_words};
use crate::spec::Format;
use opencl3::memory::Buffer;
use std::sync::Arc;

/// Bytes a held image's parts are padded to: a whole chunk of every format's kernels (16 bytes,
/// 48 for RGB8; `formats.h`).
pub(super) const HELD_CHUNK: usize = 48;

/// The words of a held image's one part of `pixels` pixels of `format` (whole chunks).
pub(crate) fn held_words(pixels: u64, format: Format) -> usize {
    (pixels as usize * format.bytes_per_pixel()).div_ceil(HELD_CHUNK) * HELD_CHUNK / 4
}

/// An image of a format other than RGBA8: the caller's host pixels, or an image an engine holds.
#[derive(Debug, Clone, Copy)]
pub(crate) enum RawSource<'a> {
    Host(RawView<'a>),
    Held(RawHeld<'a>),
}

/// An image of a format other than RGBA8 that an engine holds.
#[derive(Debug, Clone, Copy)]
pub(crate) struct RawHeld<'a> {
    pub format: Format,
    pub width: u32,
    pub height: u32,
    pub storage: &'a Storage,
}

/// Host pixels of a [`RawSource`]: borrowed, or read back from a device.
pub(crate) enum HostRaw<'a> {
    Borrowed(RawView<'a>),
    Owned {
        bytes: Vec<u8>,
        format: Format,
        width: u32,
        height: u32,
    },
}

impl HostRaw<'_> {
    /// The pixels as a view.
    pub(crate) fn raw(&self) -> RawView<'_> {
        match self {
            HostRaw::Borrowed(v) => *v,
            HostRaw::Owned {
                bytes,
                format,
                width,
                height,
            } => packed_view(bytes, *format, *width, *height),
        }
    }
}

fn packed_view(bytes: &[u8], format: Format, width: u32, height: u32) -> RawView<'_> {
    RawView {
        data: bytes,
        width,
        height,
        stride: width as usize * format.bytes_per_pixel(),
        format,
    }
}

impl<'a> RawSource<'a> {
    pub(crate) fn format(&self) -> Format {
        match self {
            RawSource::Host(v) => v.format,
            RawSource::Held(d) => d.format,
        }
    }
    pub(crate) fn width(&self) -> u32 {
        match self {
            RawSource::Host(v) => v.width,
            RawSource::Held(d) => d.width,
        }
    }
    pub(crate) fn height(&self) -> u32 {
        match self {
            RawSource::Host(v) => v.height,
            RawSource::Held(d) => d.height,
        }
    }
    pub(crate) fn pixel_count(&self) -> u64 {
        self.width() as u64 * self.height() as u64
    }

    /// The pixels on the host: the caller's, the CPU engine's, or read back from a device.
    pub(crate) fn host(&self) -> Result<HostRaw<'a>> {
        let d = match *self {
            RawSource::Host(v) => return Ok(HostRaw::Borrowed(v)),
            RawSource::Held(d) => d,
        };
        let (format, width, height) = (d.format, d.width, d.height);
        Ok(match d.storage {
            Storage::Host(bytes) => HostRaw::Borrowed(packed_view(bytes, format, width, height)),
            Storage::OpenCl(parts) => HostRaw::Owned {
                bytes: download_raw(parts, format, width, height)?,
                format,
                width,
                height,
            },
        })
    }

    /// The parts of an image `cl` holds (its buffers padded to whole chunks of every format).
    pub(crate) fn parts_on(&self, cl: &Arc<ClEngine>) -> Option<&'a [Part]> {
        match self {
            RawSource::Held(RawHeld {
                storage: Storage::OpenCl(parts),
                ..
            }) if Arc::ptr_eq(&parts.owner, cl) => Some(&parts.parts),
            _ => None,
        }
    }

    /// The bytes of the pixel at scan index `index` (the first `bytes_per_pixel`).
    pub(crate) fn pixel_bytes(&self, index: u64) -> Result<[u8; 16]> {
        let bpp = self.format().bytes_per_pixel();
        let mut out = [0u8; 16];
        if let RawSource::Held(RawHeld {
            storage: Storage::OpenCl(parts),
            ..
        }) = self
        {
            let (buffer, at) = part_holding(&parts.parts, self.width(), index)?;
            // The words that hold the pixel's bytes.
            let (first, last) = (at * bpp / 4, (at * bpp + bpp).div_ceil(4));
            let mut words = [0u32; 6];
            parts
                .owner
                .read(buffer, first, &mut words[..last - first])?;
            let bytes = bytemuck::cast_slice::<u32, u8>(&words);
            let skip = at * bpp - first * 4;
            out[..bpp].copy_from_slice(&bytes[skip..skip + bpp]);
            return Ok(out);
        }
        let host = self.host()?;
        let v = host.raw();
        let (x, y) = (
            (index % v.width as u64) as usize,
            (index / v.width as u64) as u32,
        );
        out[..bpp].copy_from_slice(&v.row(y)[x * bpp..(x + 1) * bpp]);
        Ok(out)
    }
}

/// The buffer of the part that holds scan index `index`, and the pixel's index in it.
pub(crate) fn part_holding(
    parts: &[Part],
    width: u32,
    index: u64,
) -> Result<(&Buffer<u32>, usize)> {
    parts
        .iter()
        .find(|p| {
            let first = p.range.first_pixel(width);
            (first..first + p.range.pixels() as u64).contains(&index)
        })
        .map(|p| (&p.buffer, (index - p.range.first_pixel(width)) as usize))
        .ok_or(Error::InvalidParameter {
            name: "index",
            value: index.to_string(),
            expected: "a pixel of the image",
        })
}

impl ClEngine {
    /// Calls `f` with each part of `src` (a format other than RGBA8) in a buffer of whole
    /// `chunk`s (zeros after the pixels): an image this engine holds in place, any other
    /// uploaded part by part (see [`for_each_raw_part`](Self::for_each_raw_part)).
    pub(crate) fn for_each_source_part(
        self: &Arc<Self>,
        src: &RawSource<'_>,
        chunk: usize,
        mut f: impl FnMut(&Buffer<u32>, PartRange) -> Result<()>,
    ) -> Result<()> {
        if let Some(parts) = src.parts_on(self) {
            debug_assert!(HELD_CHUNK.is_multiple_of(chunk));
            return parts.iter().try_for_each(|p| f(&p.buffer, p.range));
        }
        let host = src.host()?;
        self.for_each_raw_part(&host.raw(), chunk, f)
    }

    /// Uploads a view of a format other than RGBA8 into parts padded to whole chunks of every
    /// format.
    pub(crate) fn upload_raw(self: &Arc<Self>, view: &RawView<'_>) -> Result<DeviceParts> {
        let bpp = view.format.bytes_per_pixel();
        let mut parts = Vec::new();
        let mut packed = Vec::new();
        for range in self.raw_part_ranges(view.width, view.height, bpp, HELD_CHUNK) {
            let words = raw_part_words(&range, bpp, HELD_CHUNK);
            let mut buffer = self.image_buffer::<u32>(words, "an image part")?;
            self.write_raw_part(&mut buffer, view, range, HELD_CHUNK, &mut packed)?;
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
}

/// The packed pixels of a held image of a format other than RGBA8.
pub(crate) fn download_raw(
    parts: &DeviceParts,
    format: Format,
    width: u32,
    height: u32,
) -> Result<Vec<u8>> {
    let bpp = format.bytes_per_pixel();
    let mut bytes = crate::cpu::alloc_zeroed::<u8>(width as usize * height as usize * bpp);
    let mut words = Vec::new();
    for p in &parts.parts {
        let n = p.range.pixels() * bpp;
        words.clear();
        words.resize(n.div_ceil(4), 0u32);
        parts.owner.read(&p.buffer, 0, &mut words)?;
        let start = p.range.first_pixel(width) as usize * bpp;
        bytes[start..start + n].copy_from_slice(&bytemuck::cast_slice::<u32, u8>(&words)[..n]);
    }
    Ok(bytes)
}
