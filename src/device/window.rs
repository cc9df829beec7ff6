//! Windows of held images on an OpenCL engine: a new held image's parts, and a rectangle of one
//! held image copied into another by the device, part by part (`Engine::crop`,
//! `Engine::assemble`).

use super::raw::HELD_CHUNK;
use super::{DeviceParts, Part, held_words};
use crate::error::{Error, Result};
use crate::opencl::{ClEngine, Rect};
use crate::spec::Format;
use opencl3::event::Event;
use std::sync::Arc;

/// A rectangle of `size` (width, height) pixels from `from` (x, y) in a source image to `to`
/// in a destination image.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Window {
    pub from: (u32, u32),
    pub to: (u32, u32),
    pub size: (u32, u32),
}

/// Whether every part of a held image `width` pixels wide holds whole rows (none a segment of
/// one row, as in an image whose rows exceed one buffer).
pub(crate) fn whole_rows(parts: &DeviceParts, width: u32) -> bool {
    parts
        .parts
        .iter()
        .all(|p| p.range.x0 == 0 && p.range.cols == width)
}

/// The index of the part of whole-row `parts` that holds row `row`.
fn part_of(parts: &[Part], row: u32) -> Result<usize> {
    let i = parts.partition_point(|p| p.range.first_row + p.range.rows <= row);
    match parts.get(i) {
        Some(p) if p.range.first_row <= row => Ok(i),
        _ => Err(Error::ImageTooLarge {
            width: 0,
            height: row as u64,
            reason: "a window's row lies in no part of the held image",
        }),
    }
}

impl ClEngine {
    /// The parts of a new held image of `format`, cut as [`upload`](Self::upload) and
    /// [`upload_raw`](Self::upload_raw) cut one, with every byte after each part's pixels
    /// zeroed (enqueued: its events added to `events`); the pixels are the caller's to write.
    pub(crate) fn new_held(
        self: &Arc<Self>,
        format: Format,
        width: u32,
        height: u32,
        events: &mut Vec<Event>,
    ) -> Result<DeviceParts> {
        let bpp = format.bytes_per_pixel();
        let ranges = match format {
            Format::Rgba8 => self.part_ranges(width, height),
            _ => self.raw_part_ranges(width, height, bpp, HELD_CHUNK),
        };
        let mut held = DeviceParts {
            owner: self.clone(),
            parts: Vec::with_capacity(ranges.len()),
        };
        for range in ranges {
            let words = held_words(range.pixels() as u64, format);
            let mut buffer = self.image_buffer::<u32>(words, "an image part")?;
            // From the word that holds the last pixel's end (written again by the copies that
            // follow in queue order) to the end: no byte of the buffer is left undefined.
            let pixel_words = range.pixels() * bpp / 4;
            if pixel_words < words {
                events.push(self.fill_at(&mut buffer, 0u32, pixel_words, words - pixel_words)?);
            }
            held.parts.push(Part {
                buffer,
                range,
                words,
            });
        }
        Ok(held)
    }

    /// Copies the window `w` of `src` (a held image `src_width` pixels wide) into `dst`
    /// (`dst_width` wide), pixels of `bpp` bytes, both of whole-row parts (see
    /// [`whole_rows`]); one rectangle a run of rows that one part of each holds, enqueued (its
    /// events added to `events`). The window lies inside both images (the caller's checks).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn copy_window(
        &self,
        src: &DeviceParts,
        src_width: u32,
        dst: &mut DeviceParts,
        dst_width: u32,
        bpp: usize,
        w: Window,
        events: &mut Vec<Event>,
    ) -> Result<()> {
        let (cols, rows) = w.size;
        if cols == 0 {
            return Ok(());
        }
        let mut r = 0;
        while r < rows {
            let (sr, dr) = (w.from.1 + r, w.to.1 + r);
            let s = &src.parts[part_of(&src.parts, sr)?];
            let di = part_of(&dst.parts, dr)?;
            let d = dst.parts[di].range;
            let band = (s.range.first_row + s.range.rows - sr)
                .min(d.first_row + d.rows - dr)
                .min(rows - r);
            let rect = Rect {
                src_x: w.from.0 as usize * bpp,
                src_row: (sr - s.range.first_row) as usize,
                src_pitch: src_width as usize * bpp,
                dst_x: w.to.0 as usize * bpp,
                dst_row: (dr - d.first_row) as usize,
                dst_pitch: dst_width as usize * bpp,
                row_bytes: cols as usize * bpp,
                rows: band as usize,
            };
            events.push(self.copy_rect(&s.buffer, &mut dst.parts[di].buffer, &rect)?);
            r += band;
        }
        Ok(())
    }
}
