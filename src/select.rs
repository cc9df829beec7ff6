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

use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::image::{check_pixel_count, ImageInput};
use crate::reduce::PixelHit;
use std::collections::HashMap;

/// Which end of the luminance range is wanted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum End {
    Brightest,
    Darkest,
}

/// Greedy selection with a grid of cells `cell` pixels wide: a pixel closer than `min_distance`
/// to a taken one lies in the same or a neighbouring cell.
struct Greedy {
    k: usize,
    min_sq: f64,
    cell: u32,
    cells: HashMap<(u32, u32), Vec<(u32, u32)>>,
    taken: Vec<PixelHit>,
}

impl Greedy {
    fn new(k: usize, min_distance: f32) -> Greedy {
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
    fn offer(&mut self, c: PixelHit) {
        if self.full() {
            return;
        }
        if self.min_sq > 0.0 {
            let (cx, cy) = (c.x / self.cell, c.y / self.cell);
            for ny in cy.saturating_sub(1)..=cy.saturating_add(1) {
                for nx in cx.saturating_sub(1)..=cx.saturating_add(1) {
                    if let Some(list) = self.cells.get(&(nx, ny)) {
                        for &(x, y) in list {
                            let dx = x.abs_diff(c.x) as f64;
                            let dy = y.abs_diff(c.y) as f64;
                            if dx * dx + dy * dy < self.min_sq {
                                return;
                            }
                        }
                    }
                }
            }
            self.cells.entry((cx, cy)).or_default().push((c.x, c.y));
        }
        self.taken.push(c);
    }
}

impl Engine {
    /// The `k` brightest pixels at least `min_distance` pixels apart: motion-capture marker
    /// finding, where one bright blob must not take all k places.
    ///
    /// Candidates go by luminance descending, ties in scan order; each is taken when its
    /// Euclidean distance to every pixel already taken is ≥ `min_distance` (see the
    /// [module documentation](crate::Engine::brightest_k) for the exact rule). `min_distance = 0`
    /// gives plainly the top k. Fewer than k pixels come back when the image runs out.
    /// An error when `min_distance` is negative or NaN.
    ///
    /// ```
    /// let mut img = image::RgbaImage::new(100, 100);
    /// for (x, y) in [(10, 10), (11, 10), (80, 80)] {
    ///     img.put_pixel(x, y, image::Rgba([255, 255, 255, 255]));
    /// }
    /// let engine = clpix::Engine::new()?;
    /// let two = engine.brightest_k(&img, 2, 5.0)?;
    /// assert_eq!(two.iter().map(|h| (h.x, h.y)).collect::<Vec<_>>(), vec![(10, 10), (80, 80)]);
    /// let top = engine.brightest_k(&img, 2, 0.0)?;
    /// assert_eq!(top.iter().map(|h| (h.x, h.y)).collect::<Vec<_>>(), vec![(10, 10), (11, 10)]);
    /// # Ok::<(), clpix::Error>(())
    /// ```
    pub fn brightest_k<'a>(
        &self,
        img: impl Into<ImageInput<'a>>,
        k: usize,
        min_distance: f32,
    ) -> Result<Vec<PixelHit>> {
        self.select_k(img.into(), k, min_distance, End::Brightest)
    }

    /// The `k` darkest pixels at least `min_distance` pixels apart: as
    /// [`brightest_k`](Self::brightest_k), with candidates by luminance ascending.
    ///
    /// ```
    /// let mut img = image::RgbaImage::from_pixel(50, 50, image::Rgba([200, 200, 200, 255]));
    /// img.put_pixel(5, 5, image::Rgba([0, 0, 0, 255]));
    /// img.put_pixel(6, 5, image::Rgba([1, 1, 1, 255]));
    /// img.put_pixel(40, 40, image::Rgba([2, 2, 2, 255]));
    /// let dark = clpix::Engine::new()?.darkest_k(&img, 2, 3.0)?;
    /// assert_eq!(dark.iter().map(|h| (h.x, h.y)).collect::<Vec<_>>(), vec![(5, 5), (40, 40)]);
    /// # Ok::<(), clpix::Error>(())
    /// ```
    pub fn darkest_k<'a>(
        &self,
        img: impl Into<ImageInput<'a>>,
        k: usize,
        min_distance: f32,
    ) -> Result<Vec<PixelHit>> {
        self.select_k(img.into(), k, min_distance, End::Darkest)
    }

    fn select_k(&self, input: ImageInput<'_>, k: usize, min_distance: f32, end: End) -> Result<Vec<PixelHit>> {
        // NaN fails this comparison too.
        if !(min_distance >= 0.0) {
            return Err(Error::invalid(
                "min_distance",
                min_distance,
                "a distance in pixels, 0 or more (infinity allowed)",
            ));
        }
        let n = check_pixel_count(input.width(), input.height())? as usize;
        if k == 0 || n == 0 {
            return Ok(Vec::new());
        }
        let hist = self.histogram_luminance(input)?.counts;
        // Luminance levels from the best end: counts[level] pixels each.
        let levels: Vec<u16> = match end {
            End::Brightest => (0..=1023).rev().collect(),
            End::Darkest => (0..=1023).collect(),
        };
        let mut greedy = Greedy::new(k, min_distance);
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
            let candidates = self.candidates(input, end, bound)?;
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
