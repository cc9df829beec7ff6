//! Images larger than one buffer: how an image is cut into parts of whole rows (or row
//! segments), and the reads and writes of such parts.

use super::ClEngine;
use crate::error::{Error, Result};
use crate::image::{ImageView, RawView};
use opencl3::memory::Buffer;
use opencl3::types::CL_BLOCKING;

impl ClEngine {
    /// How an image of `width`×`height` is cut so that each part fits one buffer: runs of whole
    /// rows when a row fits, else segments of single rows. Parts are in scan order.
    pub(crate) fn part_ranges(&self, width: u32, height: u32) -> Vec<PartRange> {
        self.part_ranges_of(width, height, (self.max_buffer_bytes / 4).max(1))
    }

    /// [`part_ranges`](Self::part_ranges) with at most `cap_px` pixels a part.
    pub(crate) fn part_ranges_of(&self, width: u32, height: u32, cap_px: u64) -> Vec<PartRange> {
        let w = width as u64;
        if w == 0 || height == 0 {
            return Vec::new();
        }
        let mut out = Vec::new();
        if w <= cap_px {
            let per = (cap_px / w).min(height as u64) as u32;
            let mut y = 0;
            while y < height {
                let rows = per.min(height - y);
                out.push(PartRange {
                    first_row: y,
                    rows,
                    x0: 0,
                    cols: width,
                });
                y += rows;
            }
        } else {
            for y in 0..height {
                let mut x = 0u64;
                while x < w {
                    let cols = cap_px.min(w - x) as u32;
                    out.push(PartRange {
                        first_row: y,
                        rows: 1,
                        x0: x as u32,
                        cols,
                    });
                    x += cols as u64;
                }
            }
        }
        out
    }

    /// Writes the pixels of `r` from `view` into `buf`, packed.
    pub(crate) fn write_range(
        &self,
        buf: &mut Buffer<u32>,
        view: &ImageView<'_>,
        r: PartRange,
    ) -> Result<()> {
        let w = view.width() as usize;
        if let Some(bytes) = view.packed_bytes() {
            let start = (r.first_row as usize * w + r.x0 as usize) * 4;
            let part = &bytes[start..start + r.pixels() * 4];
            return self.write(buf, 0, as_u32_or_copy(part).as_ref());
        }
        if self.vendor == super::Vendor::Oclgrind {
            // Oclgrind (21.10) marks neither what clEnqueueWriteBufferRect writes nor a plain
            // write at an offset as initialised, so its uninitialised-value check flags every
            // kernel that reads them: there, the rows packed on the host and written at once.
            let (x0, cols) = (r.x0 as usize * 4, r.cols as usize * 4);
            let mut packed = Vec::with_capacity(r.pixels() * 4);
            for row in 0..r.rows {
                packed.extend_from_slice(&view.row(r.first_row + row)[x0..x0 + cols]);
            }
            return self.write(buf, 0, as_u32_or_copy(&packed).as_ref());
        }
        // Padded rows: one rectangular transfer, no host copy.
        let origin = [0usize; 3];
        let host_origin = [r.x0 as usize * 4, r.first_row as usize, 0];
        let region = [r.cols as usize * 4, r.rows as usize, 1];
        // SAFETY: blocking; the rectangle lies inside both the view (checked at construction)
        // and the buffer (rows * cols pixels).
        unsafe {
            self.queue().enqueue_write_buffer_rect(
                buf,
                CL_BLOCKING,
                origin.as_ptr(),
                host_origin.as_ptr(),
                region.as_ptr(),
                r.cols as usize * 4,
                0,
                view.stride(),
                0,
                view_ptr(view),
                &[],
            )
        }
        .map(|_| ())
        .map_err(|e| Error::cl("clEnqueueWriteBufferRect", e.0))
    }
    /// Packed RGBA8 bytes of `pixels` pixels from `parts` (a buffer, the first pixel it holds
    /// and how many), read straight into the result's memory, advised to use huge pages: one
    /// copy into few page faults rather than a copy into 4 KiB pages and a second copy into
    /// the bytes. The bytes are read as words where they are 4-aligned, as allocations this
    /// large are; otherwise through a word buffer.
    pub(crate) fn read_rgba8(
        &self,
        parts: &[(&Buffer<u32>, usize, usize)],
        pixels: usize,
    ) -> Result<Vec<u8>> {
        let mut bytes = crate::cpu::alloc_zeroed::<u8>(pixels * 4);
        self.read_rgba8_into(parts, &mut bytes)?;
        Ok(bytes)
    }

    /// [`read_rgba8`](Self::read_rgba8) into `bytes` (4 a pixel, the caller's size check).
    pub(crate) fn read_rgba8_into(
        &self,
        parts: &[(&Buffer<u32>, usize, usize)],
        bytes: &mut [u8],
    ) -> Result<()> {
        if let Ok(words) = bytemuck::try_cast_slice_mut::<u8, u32>(bytes) {
            for &(buf, start, count) in parts {
                self.read(buf, 0, &mut words[start..start + count])?;
            }
            return Ok(());
        }
        let mut words = vec![0u32; bytes.len() / 4];
        for &(buf, start, count) in parts {
            self.read(buf, 0, &mut words[start..start + count])?;
        }
        bytes.copy_from_slice(bytemuck::cast_slice(&words));
        Ok(())
    }
}

impl ClEngine {
    /// Calls `f` with each part of `view` (any format) packed into a buffer of u32 words, the
    /// part's bytes followed by zeros up to a whole number of `chunk` bytes (a multiple of 4):
    /// kernels that read whole chunks read no byte outside the buffer and no undefined one.
    pub(crate) fn for_each_raw_part(
        &self,
        view: &RawView<'_>,
        chunk: usize,
        mut f: impl FnMut(&Buffer<u32>, PartRange) -> Result<()>,
    ) -> Result<()> {
        let bpp = view.format.bytes_per_pixel();
        let ranges = self.raw_part_ranges(view.width, view.height, bpp, chunk);
        let Some(largest) = ranges.iter().map(|r| raw_part_words(r, bpp, chunk)).max() else {
            return Ok(());
        };
        let mut buffer = self.image_buffer::<u32>(largest, "an image part")?;
        let mut packed: Vec<u32> = Vec::new();
        let result = ranges.iter().try_for_each(|r| {
            self.write_raw_part(&mut buffer, view, *r, chunk, &mut packed)?;
            f(&buffer, *r)
        });
        self.give_image_buffer(largest, buffer);
        result
    }

    /// The parts of an image of `bpp` bytes a pixel, each of whole `chunk`s in one buffer.
    pub(crate) fn raw_part_ranges(
        &self,
        width: u32,
        height: u32,
        bpp: usize,
        chunk: usize,
    ) -> Vec<PartRange> {
        let cap = (self.max_buffer_bytes.saturating_sub(chunk as u64) / bpp as u64).max(1);
        self.part_ranges_of(width, height, cap)
    }

    /// Writes the pixels of `r` from `view` packed into `buffer`'s first
    /// [`raw_part_words`] words, the last chunk padded with zeros (`packed`: the caller's
    /// staging, reused).
    pub(crate) fn write_raw_part(
        &self,
        buffer: &mut Buffer<u32>,
        view: &RawView<'_>,
        r: PartRange,
        chunk: usize,
        packed: &mut Vec<u32>,
    ) -> Result<()> {
        let bpp = view.format.bytes_per_pixel();
        let (bytes, words) = (r.pixels() * bpp, raw_part_words(&r, bpp, chunk));
        let start = r.first_pixel(view.width) as usize * bpp;
        // The part's bytes where they lie, and its whole chunks as words.
        let direct = view
            .packed_bytes()
            .map(|b| &b[start..start + bytes])
            .filter(|_| self.vendor != super::Vendor::Oclgrind)
            .and_then(|part| {
                let whole = bytemuck::try_cast_slice::<u8, u32>(&part[..bytes - bytes % chunk]);
                whole.ok().map(|main| (part, main))
            });
        match direct {
            // The whole chunks where they are, the last one padded here.
            Some((part, main)) => {
                self.write(buffer, 0, main)?;
                if words > main.len() {
                    let mut tail = vec![0u32; words - main.len()];
                    let src = &part[main.len() * 4..];
                    bytemuck::cast_slice_mut::<u32, u8>(&mut tail)[..src.len()]
                        .copy_from_slice(src);
                    self.write(buffer, main.len(), &tail)?;
                }
                Ok(())
            }
            // Rows packed here (padded rows, a segment of a row, or Oclgrind: see
            // `write_range`).
            None => {
                packed.clear();
                packed.resize(words, 0);
                let out = bytemuck::cast_slice_mut::<u32, u8>(packed);
                let (x0, cols) = (r.x0 as usize * bpp, r.cols as usize * bpp);
                for (k, row) in (r.first_row..r.first_row + r.rows).enumerate() {
                    out[k * cols..(k + 1) * cols].copy_from_slice(&view.row(row)[x0..x0 + cols]);
                }
                self.write(buffer, 0, packed)
            }
        }
    }
}

/// The words of a part of `r.pixels()` pixels of `bpp` bytes in whole `chunk`s.
pub(crate) fn raw_part_words(r: &PartRange, bpp: usize, chunk: usize) -> usize {
    (r.pixels() * bpp).div_ceil(chunk) * chunk / 4
}

/// A rectangle of an image held in one buffer: `rows` whole rows, or a segment of one row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct PartRange {
    pub first_row: u32,
    pub rows: u32,
    pub x0: u32,
    pub cols: u32,
}

impl PartRange {
    pub(crate) fn pixels(&self) -> usize {
        self.rows as usize * self.cols as usize
    }
    /// Scan-order index of the first pixel; the part's pixels are consecutive in scan order.
    pub(crate) fn first_pixel(&self, width: u32) -> u64 {
        self.first_row as u64 * width as u64 + self.x0 as u64
    }
}

/// Packed bytes as u32 pixels: borrowed when aligned, copied otherwise.
fn as_u32_or_copy(bytes: &[u8]) -> std::borrow::Cow<'_, [u32]> {
    match bytemuck::try_cast_slice::<u8, u32>(bytes) {
        Ok(px) => std::borrow::Cow::Borrowed(px),
        Err(_) => std::borrow::Cow::Owned(
            bytes
                .chunks_exact(4)
                .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                .collect(),
        ),
    }
}

fn view_ptr(view: &ImageView<'_>) -> *mut std::ffi::c_void {
    if view.height() == 0 {
        return std::ptr::null_mut();
    }
    view.row(0).as_ptr() as *mut std::ffi::c_void
}
