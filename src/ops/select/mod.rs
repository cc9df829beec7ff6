//! The k brightest (or darkest) pixels, at least a minimum distance apart.
//!
//! # Specification
//! Candidates are all pixels in order of luminance — descending for
//! [`brightest_k`](crate::Engine::brightest_k), ascending for
//! [`darkest_k`](crate::Engine::darkest_k) — ties in scan order. Going through them in that order
//! (greedy), a candidate is taken when its Euclidean distance, in pixels, to every pixel already
//! taken is at least `min_distance`; selection stops after `k` pixels. With `min_distance = 0`
//! this is plainly the top k. When the image runs out, fewer than k pixels come back.
//! Distances are compared exactly (`dx² + dy² ≥ min_distance²` in f64, where both sides are
//! exact), so both backends give the same list.
//!
//! # Method
//! No full sort of all pixels. The [luminance histogram](crate::Engine::histogram_luminance)
//! tells which luminance the k-th candidate has; [compaction](crate::Engine::compact_sorted) at
//! that threshold with the stable sort by luminance gives the candidates in order; the greedy
//! selection checks each against the taken pixels in the neighbouring cells of a grid whose cells
//! are `min_distance` wide. When too few survive, the threshold is lowered (taking four times as
//! many candidates each round) and selection continues where it stopped. Every step runs on the
//! engine's backend, so on a GPU only the candidates cross to the host.

use crate::device::HostPixels;
use crate::device::{Any, IntoImage};
use crate::device::{DeviceImage, DeviceParts, ImageInput, Part, Storage};
use crate::engine::{Backend, Engine};
use crate::error::{Error, Result};
use crate::image::check_pixel_count;
use crate::opencl::{Arg, ScratchKind};
use crate::ops::common::same_type;
use crate::spec::luma_u32;
use crate::spec::{Pixel, PixelHit, RawHit};
use std::collections::HashMap;

mod family;
pub(crate) mod kernels;
mod typed;
use family::FAMILY;

use kernels::*;

use crate::spec::Extreme;

/// A found pixel's place.
trait At: Copy {
    fn at(&self) -> (u32, u32);
}

impl At for PixelHit {
    fn at(&self) -> (u32, u32) {
        (self.x, self.y)
    }
}

impl At for RawHit {
    fn at(&self) -> (u32, u32) {
        (self.x, self.y)
    }
}

/// Greedy selection with a grid of cells `cell` pixels wide: a pixel closer than `min_distance`
/// to a taken one lies in the same or a neighbouring cell.
struct Greedy<H> {
    k: usize,
    min_sq: f64,
    cell: u32,
    cells: HashMap<(u32, u32), Vec<(u32, u32)>>,
    taken: Vec<H>,
}

impl<H: At> Greedy<H> {
    fn new(k: usize, min_distance: f32) -> Greedy<H> {
        let d = min_distance as f64;
        Greedy {
            k,
            min_sq: d * d,
            // Cells at least min_distance wide (and at least 1); capped so that cell indices
            // stay small for huge distances (then every pixel shares one cell).
            cell: d.ceil().clamp(1.0, u32::MAX as f64) as u32,
            cells: HashMap::new(),
            taken: Vec::new(),
        }
    }

    fn full(&self) -> bool {
        self.taken.len() >= self.k
    }

    /// Takes `c` if it keeps the distance to every pixel taken so far.
    fn offer(&mut self, c: H) {
        if self.full() {
            return;
        }
        if self.min_sq > 0.0 {
            let (x, y) = c.at();
            let (cx, cy) = (x / self.cell, y / self.cell);
            for ny in cy.saturating_sub(1)..=cy.saturating_add(1) {
                for nx in cx.saturating_sub(1)..=cx.saturating_add(1) {
                    if let Some(list) = self.cells.get(&(nx, ny)) {
                        for &(tx, ty) in list {
                            let dx = tx.abs_diff(x) as f64;
                            let dy = ty.abs_diff(y) as f64;
                            if dx * dx + dy * dy < self.min_sq {
                                return;
                            }
                        }
                    }
                }
            }
            self.cells.entry((cx, cy)).or_default().push((x, y));
        }
        self.taken.push(c);
    }
}

/// `min_distance` is a distance: 0 or more (infinity allowed), not NaN.
fn check_min_distance(min_distance: f32) -> Result<()> {
    if min_distance.is_nan() || min_distance < 0.0 {
        return Err(Error::invalid(
            "min_distance",
            min_distance,
            "a distance in pixels, 0 or more (infinity allowed)",
        ));
    }
    Ok(())
}

impl Engine {
    /// The `k` brightest (or darkest) pixels at least `min_distance` pixels apart: motion-capture
    /// marker finding, where one bright blob must not take all k places.
    ///
    /// Every [`Pixel`] format: its key in place of the luminance, its hits (`Hit<P>`; RGBA8's
    /// `PixelHit`); NaN keys are never candidates.
    ///
    /// Candidates are all pixels by luminance, descending for `Extreme::Brightest` and
    /// ascending for `Extreme::Darkest`, ties in scan order; in that order (greedy), a candidate is taken when its Euclidean distance in pixels to
    /// every pixel already taken is ≥ `min_distance`, until `k` are taken. `min_distance = 0`
    /// gives plainly the top k. Fewer than k pixels come back when the image runs out.
    /// Distances are compared exactly (`dx² + dy² ≥ min_distance²`, both sides exact in f64),
    /// so every backend gives the same list. An error when `min_distance` is negative or NaN.
    ///
    /// No full sort: the luminance histogram gives the k-th candidate's luminance, compaction
    /// above it gives the candidates, and the threshold is lowered only when too few survive the
    /// distance rule.
    ///
    /// ```
    /// use clpix::Extreme;
    /// let mut img = image::RgbaImage::new(100, 100);
    /// for (x, y) in [(10, 10), (11, 10), (80, 80)] {
    ///     img.put_pixel(x, y, image::Rgba([255, 255, 255, 255]));
    /// }
    /// let engine = clpix::Engine::new()?;
    /// let two = engine.extremes(&img, Extreme::Brightest, 2, 5.0)?;
    /// assert_eq!(two.iter().map(|h| (h.x, h.y)).collect::<Vec<_>>(), vec![(10, 10), (80, 80)]);
    /// let top = engine.extremes(&img, Extreme::Brightest, 2, 0.0)?;
    /// assert_eq!(top.iter().map(|h| (h.x, h.y)).collect::<Vec<_>>(), vec![(10, 10), (11, 10)]);
    /// let dark = engine.extremes(&img, Extreme::Darkest, 2, 3.0)?;
    /// assert_eq!(dark.iter().map(|h| (h.x, h.y)).collect::<Vec<_>>(), vec![(0, 0), (3, 0)]);
    /// // Every format: its key and its hits.
    /// let gray = image::ImageBuffer::from_fn(50, 1, |x, _| image::Luma([x as u16 * 1000]));
    /// let top = engine.extremes(&gray, Extreme::Brightest, 2, 10.0)?;
    /// assert_eq!(top.iter().map(|h| (h.x, h.key)).collect::<Vec<_>>(), vec![(49, 49000), (39, 39000)]);
    /// # Ok::<(), clpix::Error>(())
    /// ```
    pub fn extremes<'a, I: IntoImage<'a>>(
        &self,
        img: I,
        extreme: Extreme,
        k: usize,
        min_distance: f32,
    ) -> Result<Vec<<I::Pixel as Pixel>::Hit>> {
        match img.into_any().0 {
            Any::Rgba8(input) => same_type(self.select_k(input, k, min_distance, extreme)?),
            Any::Typed(raw) => Ok(self
                .raw_extremes(raw, extreme, k, min_distance)?
                .into_iter()
                .map(<I::Pixel as Pixel>::hit)
                .collect()),
        }
    }

    fn select_k(
        &self,
        input: ImageInput<'_>,
        k: usize,
        min_distance: f32,
        end: Extreme,
    ) -> Result<Vec<PixelHit>> {
        check_min_distance(min_distance)?;
        let n = check_pixel_count(input.width(), input.height())? as usize;
        if k == 0 || n == 0 {
            return Ok(Vec::new());
        }
        let hist = self.histogram_luminance(input)?.counts;
        // Luminance levels from the best end: counts[level] pixels each.
        let levels: Vec<u16> = match end {
            Extreme::Brightest => (0..=1023).rev().collect(),
            Extreme::Darkest => (0..=1023).collect(),
        };
        let mut greedy = Greedy::new(k, min_distance);
        // The darkest side's inverted image, made at its first round and kept for the rounds
        // after (each had inverted the image again: darkest_k 1.8-2.3 times brightest_k's
        // time at 8192² on the H200).
        let mut inverted = Inverted {
            engine: self,
            image: None,
        };
        let mut processed = 0usize; // candidates already offered (a prefix of every later list)
        let mut want = k;
        let mut cumulative = 0usize;
        let mut next_level = 0usize;
        loop {
            // Lower the bound until at least `processed + want` candidates are in.
            while next_level < levels.len() && cumulative < processed.saturating_add(want) {
                cumulative += hist[levels[next_level] as usize] as usize;
                next_level += 1;
            }
            let bound = levels[next_level - 1];
            let candidates = self.candidates(input, end, bound, &mut inverted.image)?;
            for &c in candidates.iter().skip(processed) {
                greedy.offer(c);
                if greedy.full() {
                    return Ok(greedy.taken);
                }
            }
            processed = candidates.len();
            if next_level >= levels.len() {
                return Ok(greedy.taken);
            }
            want = want.saturating_mul(4);
        }
    }
}

/// The pixels of `view` with luminance at most `bound`, in scan order, on all cores.
fn darkest_on_cpu(view: &crate::image::ImageView<'_>, bound: u16) -> Vec<PixelHit> {
    use rayon::prelude::*;
    // L <= bound exactly when the weighted sum is below the smallest sum above the bound.
    let s_max = wsum_above(bound as u32) - 1;
    (0..view.height())
        .into_par_iter()
        .flat_map_iter(|y| {
            view.row(y)
                .chunks_exact(4)
                .enumerate()
                .filter(move |(_, c)| {
                    21 * c[0] as u32 + 72 * c[1] as u32 + 7 * c[2] as u32 <= s_max
                })
                .map(move |(x, c)| {
                    let rgba = [c[0], c[1], c[2], c[3]];
                    PixelHit {
                        x: x as u32,
                        y,
                        luminance: luma_u32(u32::from_le_bytes(rgba)) as u16,
                        rgba,
                    }
                })
        })
        .collect()
}

/// The smallest weighted sum `21 r + 72 g + 7 b` whose luminance is above `t` (above 25500
/// for 1023).
fn wsum_above(t: u32) -> u32 {
    (25500 * (t + 1)).div_ceil(1023)
}

impl Engine {
    /// All pixels with luminance at least `bound` (brightest) or at most `bound` (darkest), by
    /// luminance from the wanted end, ties in scan order.
    ///
    /// `inverted` holds the darkest side's inverted image between rounds (made here at the
    /// first).
    fn candidates(
        &self,
        input: ImageInput<'_>,
        end: Extreme,
        bound: u16,
        inverted: &mut Option<DeviceImage>,
    ) -> Result<Vec<PixelHit>> {
        let mut hits = match end {
            Extreme::Brightest if bound >= 1 => self.compact(
                input,
                bound - 1,
                crate::ops::compact::CompactOrder::ScanOrder,
            )?,
            // On the CPU one parallel pass keeps the pixels at or below the bound (inverting
            // the image first cost 3.8 times brightest_k's whole call at 4096² on 2 cores).
            Extreme::Darkest if matches!(self.backend, Backend::Cpu) => {
                darkest_on_cpu(&HostPixels::of(input)?.view(), bound)
            }
            Extreme::Darkest => {
                // Inverting r, g, b turns the weighted sum s into 25500 - s exactly. Pixels with
                // L <= bound have s <= s_max, i.e. inverted sums >= 25500 - s_max; compaction
                // above the largest threshold t whose cut lies at or below that keeps a superset,
                // filtered exactly below.
                let s_max = wsum_above(bound as u32) - 1;
                let cut = 25500 - s_max.min(25500);
                let l_cut = (1023 * cut) / 25500;
                if l_cut == 0 {
                    self.all_pixels(input)?
                } else {
                    let inverted = match inverted {
                        Some(image) => image,
                        None => inverted.insert(self.inverted(input)?),
                    };
                    let mut hits = self.compact(
                        &*inverted,
                        (l_cut - 1) as u16,
                        crate::ops::compact::CompactOrder::ScanOrder,
                    )?;
                    for h in &mut hits {
                        let p = u32::from_le_bytes(h.rgba) ^ 0x00ff_ffff;
                        h.rgba = p.to_le_bytes();
                        h.luminance = luma_u32(p) as u16;
                    }
                    hits.retain(|h| h.luminance <= bound);
                    hits
                }
            }
            Extreme::Brightest => self.all_pixels(input)?,
        };
        // Stable: equal luminance stays in scan order.
        match end {
            Extreme::Brightest => hits.sort_by_key(|h| std::cmp::Reverse(h.luminance)),
            Extreme::Darkest => hits.sort_by_key(|h| h.luminance),
        }
        Ok(hits)
    }

    /// Every pixel in scan order (only when the k-th candidate lies at the far end of the
    /// luminance range, so that every pixel is a candidate anyway).
    fn all_pixels(&self, input: ImageInput<'_>) -> Result<Vec<PixelHit>> {
        let host = HostPixels::of(input)?;
        let view = host.view();
        let mut out = Vec::with_capacity(view.pixel_count() as usize);
        for y in 0..view.height() {
            for (x, c) in view.row(y).chunks_exact(4).enumerate() {
                let p = u32::from_le_bytes([c[0], c[1], c[2], c[3]]);
                out.push(PixelHit {
                    x: x as u32,
                    y,
                    luminance: luma_u32(p) as u16,
                    rgba: [c[0], c[1], c[2], c[3]],
                });
            }
        }
        Ok(out)
    }

    /// The image with r, g, b inverted, held by this engine (on the device for OpenCL).
    fn inverted(&self, input: ImageInput<'_>) -> Result<DeviceImage> {
        let (width, height) = (input.width(), input.height());
        self.dispatch(
            &FAMILY,
            &(),
            "darkest",
            input.pixel_count(),
            || {
                let host = HostPixels::of(input)?;
                let mut img = host.view().to_image();
                for p in img.as_mut().chunks_exact_mut(4) {
                    p[0] = !p[0];
                    p[1] = !p[1];
                    p[2] = !p[2];
                }
                Ok(DeviceImage::new(
                    width,
                    height,
                    Storage::Host(img.into_raw()),
                ))
            },
            |cl| {
                // Each part (this engine's device image in place, a packed host image read
                // where it is on a CPU device, else uploaded) inverted into a buffer from the
                // scratch pool, given back when the call ends (`Inverted`): a fresh
                // buffer on a CPU device faults in every page at its first write, and a copy
                // of a host image before inverting it had cost as much again (darkest_k 2.7-3.8
                // times brightest_k's time on PoCL).
                let mut parts = Vec::new();
                cl.for_each_part(input, |src, range| {
                    let n = range.pixels();
                    let (_, buffer) = cl.take_scratch(ScratchKind::InvertedImage, n)?;
                    let event = invert(cl, src, &buffer, n)?;
                    // `src` may be reused for the next part or the caller's memory: done with it.
                    cl.finish(std::slice::from_ref(&event))?;
                    parts.push(Part {
                        buffer,
                        range,
                        words: n,
                    });
                    Ok(())
                })?;
                Ok(DeviceImage::new(
                    width,
                    height,
                    Storage::OpenCl(DeviceParts {
                        owner: cl.clone(),
                        parts,
                    }),
                ))
            },
        )
    }
}

/// The darkest side's inverted image during one call (see [`Engine::inverted`]): when the
/// call ends, its buffers go back to the scratch pool they came from, for the next call (the
/// commands using them are complete: each round waits for its compaction).
struct Inverted<'a> {
    engine: &'a Engine,
    image: Option<DeviceImage>,
}

impl Drop for Inverted<'_> {
    fn drop(&mut self) {
        let Some(image) = self.image.take() else {
            return;
        };
        if let (Backend::OpenCl(cl), Storage::OpenCl(parts)) = (&self.engine.backend, image.storage)
        {
            for p in parts.into_parts() {
                cl.give_scratch(ScratchKind::InvertedImage, p.range.pixels(), p.buffer);
            }
        }
    }
}

fn invert(
    cl: &crate::opencl::ClEngine,
    src: &opencl3::memory::Buffer<u32>,
    dst: &opencl3::memory::Buffer<u32>,
    n: usize,
) -> Result<opencl3::event::Event> {
    const WG: usize = 64;
    // Four pixels a work-item (see select.cl).
    cl.launch(
        INVERT_RGB,
        &[Arg::buf(src), Arg::buf(dst), Arg::U32(n as u32)],
        n.div_ceil(4 * WG).max(1) * WG,
        WG,
    )
}
