//! The k brightest (or darkest) pixels of every format other than RGBA8 (whose tuned path is
//! `mod.rs`): the same greedy selection over the same candidates in key order, the candidates
//! found by the compaction of every format above a cut that a histogram of the keys chooses.
//!
//! The darkest side complements the keys (`flip`), so that "above a cut" keeps the pixels
//! below one; NaN keys are never candidates. For integer keys the histogram has a bin for each
//! key, or for 16 keys of mono16 and RGBA16 (its counts are exact); for f32 keys it has [`F32_BINS`] bins between the smallest and the
//! largest key, and a bin's edge is taken to the f32 on the side that keeps a superset, so a cut
//! never keeps fewer pixels than the counts say. Either way the counts only choose the cut: a
//! round that finds too few candidates lowers it again, so the result is the greedy selection
//! over all pixels in key order whatever the counts.

use super::Greedy;
use crate::device::RawSource;
use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::ops::compact::typed::flip_for_darkest;
use crate::ops::histogram::bins::{Bins, Of};
use crate::spec::{Extreme, RawHit, f32_of_order, order_of_f32};

/// Bins of the f32 keys' histogram.
const F32_BINS: u32 = 65536;

/// The most bins of an integer key's histogram: 65,536 bins cost PoCL 9.8 ms at 2048² (a
/// table in local memory), 4,096 bins of 16 keys a shift.
const INT_BINS: u32 = 4096;

/// A cut from the wanted end and how many pixels it keeps at least: the order keys (after the
/// flip) above `cut`, or every pixel with a key for `None`.
struct Level {
    cut: Option<u32>,
    at_least: u64,
}

impl Engine {
    /// The greedy selection of [`Engine::extremes`] on a view of any format but RGBA8.
    pub(crate) fn raw_extremes(
        &self,
        view: RawSource<'_>,
        end: Extreme,
        k: usize,
        min_distance: f32,
    ) -> Result<Vec<RawHit>> {
        super::check_min_distance(min_distance)?;
        crate::image::check_pixel_count(view.width(), view.height())?;
        if k == 0 || view.pixel_count() == 0 {
            return Ok(Vec::new());
        }
        let flip = match end {
            Extreme::Brightest => 0,
            Extreme::Darkest => flip_for_darkest(view.format()),
        };
        let levels = self.levels(view, flip)?;
        let mut greedy = Greedy::new(k, min_distance);
        let (mut processed, mut want, mut i) = (0usize, k, 0usize);
        while i < levels.len() {
            while i + 1 < levels.len() && levels[i].at_least < processed.saturating_add(want) as u64
            {
                i += 1;
            }
            let candidates = self.raw_compact(view, levels[i].cut, flip, true)?;
            for &c in candidates.iter().skip(processed) {
                greedy.offer(c);
                if greedy.full() {
                    return Ok(greedy.taken);
                }
            }
            processed = candidates.len();
            want = want.saturating_mul(4);
            i += 1;
        }
        Ok(greedy.taken)
    }

    /// The cuts from the wanted end, the last keeping every pixel with a key; none when no pixel
    /// has one.
    fn levels(&self, view: RawSource<'_>, flip: u32) -> Result<Vec<Level>> {
        if let Some(max) = view.format().max_key() {
            // Bins of `width` keys (a power of two: every largest key is one below one), exact:
            // bin b holds the keys b·width.. (b + 1)·width, and the flipped keys of bin b are in
            // bin bins − 1 − b.
            let bins = (max + 1).min(INT_BINS);
            let width = (max + 1) / bins;
            let counts = self.raw_histogram(view, Of::Key, Bins::new(bins, 0.0, max as f64)?)?;
            let mut levels = Vec::new();
            let mut at_least = 0u64;
            for fb in (0..bins).rev() {
                let b = if flip == 0 { fb } else { bins - 1 - fb };
                let count = counts[b as usize] as u64;
                if count == 0 && fb > 0 {
                    continue;
                }
                at_least += count;
                levels.push(Level {
                    cut: (fb * width).checked_sub(1),
                    at_least,
                });
            }
            return Ok(levels);
        }
        let stats = match self.typed_stats(view) {
            Ok(s) => s,
            // Every key is NaN: no candidates.
            Err(Error::EmptyImage { .. }) => return Ok(Vec::new()),
            Err(e) => return Err(e),
        };
        let finite =
            |order: u32| (f32_of_order(order) as f64).clamp(f32::MIN as f64, f32::MAX as f64);
        let (lo, hi) = (finite(stats.min), finite(stats.max));
        let mut levels = Vec::new();
        if lo < hi {
            let counts = self.raw_histogram(view, Of::Key, Bins::new(F32_BINS, lo, hi)?)?;
            let step = (hi - lo) / F32_BINS as f64;
            let edge = |b: u32| {
                if b == F32_BINS {
                    hi
                } else {
                    b as f64 * step + lo
                }
            };
            let mut at_least = 0u64;
            for j in 0..F32_BINS - 1 {
                // The j-th bin from the wanted end, and the cut that keeps it and all beyond.
                let (b, cut) = if flip == 0 {
                    let b = F32_BINS - 1 - j;
                    (b, order_of(at_or_above(edge(b))) - 1)
                } else {
                    // Pixels at or below the bin's upper edge: complemented keys above
                    // !(order + 1).
                    (j, !(order_of(at_or_below(edge(j + 1))) + 1))
                };
                at_least += counts[b as usize] as u64;
                if counts[b as usize] > 0 {
                    levels.push(Level {
                        cut: Some(cut),
                        at_least,
                    });
                }
            }
        }
        levels.push(Level {
            cut: None,
            at_least: stats.count,
        });
        Ok(levels)
    }
}

/// The order key of a number (never NaN here).
fn order_of(v: f32) -> u32 {
    order_of_f32(v).unwrap_or(0)
}

/// The smallest f32 at or above `e` (a finite f64 within f32's range).
fn at_or_above(e: f64) -> f32 {
    let g = e as f32;
    if (g as f64) < e {
        f32_of_order(order_of(g) + 1)
    } else {
        g
    }
}

/// The largest f32 at or below `e`.
fn at_or_below(e: f64) -> f32 {
    let g = e as f32;
    if (g as f64) > e {
        f32_of_order(order_of(g) - 1)
    } else {
        g
    }
}
