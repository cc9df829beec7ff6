//! The CPU path's fast sums: a strip's components summed in u64 where no sum of the strip can
//! pass 2^64 (integer keys, [`fits`]), one small record a component, and the short runs of mono8
//! summed without a loop over their pixels. The sums become [`Acc`]s, the same integers as
//! [`Acc::add_run`] sums, at the strip's end.

use super::Acc;

/// A component's sums in its strip (the strip's rows `first_row..`, `width` pixels each): `wx`
/// is Σ w·x, `wy` Σ w·(y − first_row), `peak` the greatest `key << 32 | (u32::MAX − p)`, `p`
/// the pixel's position in the strip's scan order (so the greatest key, the first among equals),
/// `first` the least `y << 32 | x` of its runs' first pixels.
#[derive(Debug, Clone, Copy)]
#[repr(align(64))]
pub(super) struct Sums {
    area: u64,
    wsum: u64,
    wx: u64,
    wy: u64,
    peak: u64,
    first: u64,
    min_x: u32,
    max_x: u32,
    max_y: u32,
}

impl Sums {
    pub(super) const EMPTY: Sums = Sums {
        area: 0,
        wsum: 0,
        wx: 0,
        wy: 0,
        peak: 0,
        first: u64::MAX,
        min_x: u32::MAX,
        max_x: 0,
        max_y: 0,
    };

    /// Adds the run `x0..x1` of row `y` (`y_rel` rows into a strip `width` wide): its weights'
    /// sum `sw`, Σ w·x `swx`, its first greatest key `best` at column `best_x`.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    pub(super) fn add(
        &mut self,
        (x0, x1): (u32, u32),
        y: u32,
        y_rel: u32,
        width: u32,
        (sw, swx): (u64, u64),
        (best, best_x): (u32, u32),
    ) {
        self.area += (x1 - x0) as u64;
        self.wsum += sw;
        self.wx += swx;
        self.wy += sw * y_rel as u64;
        // The position is below the strip's pixels, at most u32::MAX ([`fits`]).
        let at = y_rel * width + best_x;
        self.peak = self.peak.max((best as u64) << 32 | (u32::MAX - at) as u64);
        self.first = self.first.min((y as u64) << 32 | x0 as u64);
        self.min_x = self.min_x.min(x0);
        self.max_x = self.max_x.max(x1 - 1);
        self.max_y = y;
    }

    /// The component's [`Acc`], of a strip from row `first_row`, `width` pixels wide, whose
    /// weights are keys less `background`.
    pub(super) fn acc(&self, first_row: u32, width: u32, background: u32) -> Acc {
        let at = u32::MAX - self.peak as u32;
        Acc {
            area: self.area,
            min_x: self.min_x,
            min_y: (self.first >> 32) as u32,
            max_x: self.max_x,
            max_y: self.max_y,
            first_x: self.first as u32,
            // Each key is its weight plus the background: below 2^16 · 2^32 ([`fits`]).
            key_sum: self.wsum + background as u64 * self.area,
            weight_sum: self.wsum,
            wx: self.wx as u128,
            wy: self.wy as u128 + first_row as u128 * self.wsum as u128,
            peak_key: (self.peak >> 32) as u32,
            peak_x: at % width,
            peak_y: first_row + at / width,
        }
    }
}

/// Whether strips of at most `rows` rows `width` wide, weights at most `max_weight`, can be
/// summed in [`Sums`]: their pixels `P = width · rows` at most u32::MAX (positions in u32, areas
/// and key sums below 2^16 · 2^32), and `max_weight · max(width, rows) · P` below 2^64, which
/// bounds Σ w, Σ w·x (x below width) and Σ w·(y − first_row) (below rows) of any set of the
/// strip's pixels.
pub(super) fn fits(width: u32, rows: u32, max_weight: u32) -> bool {
    let pixels = width as u64 * rows as u64;
    pixels <= u32::MAX as u64
        && max_weight <= u16::MAX as u32
        && (max_weight as u128) * (width.max(rows) as u128) * (pixels as u128) < 1u128 << 64
}

/// The sums of a run of keys `key(x)` for `x` in `x0..x1`, weights `key − background` (every key
/// above the background): `(Σ w, Σ w·x)` in u64 (within [`fits`]' bound) and the first greatest
/// key with its column.
#[inline(always)]
pub(super) fn run_sums(
    key: impl Fn(usize) -> u32,
    background: u32,
    (x0, x1): (u32, u32),
) -> ((u64, u64), (u32, u32)) {
    let (mut sw, mut swx, mut best, mut best_x) = (0u64, 0u64, 0u32, x0);
    for x in x0..x1 {
        let k = key(x as usize);
        let w = (k - background) as u64;
        sw += w;
        swx += w * x as u64;
        if k > best {
            best = k;
            best_x = x;
        }
    }
    ((sw, swx), (best, best_x))
}

/// [`run_sums`] of a run of at most 8 bytes of mono8 whose 8 bytes from `x0` lie in `row`: the
/// weights of the run's bytes in one u64 (the bytes past the run 0), summed in 16-bit lanes.
#[inline(always)]
pub(super) fn short_u8(
    row: &[u8],
    background: u32,
    (x0, x1): (u32, u32),
) -> ((u64, u64), (u32, u32)) {
    let len = x1 - x0;
    debug_assert!((1..=8).contains(&len) && x0 as usize + 8 <= row.len());
    let mut bytes = [0u8; 8];
    bytes.copy_from_slice(&row[x0 as usize..x0 as usize + 8]);
    let v = u64::from_le_bytes(bytes);
    // Byte i < len is a key above the background (below 256): no borrow crosses those bytes,
    // so they are the weights (1..=255); the bytes past the run are masked to 0.
    let w =
        v.wrapping_sub(background as u64 * 0x0101_0101_0101_0101) & (u64::MAX >> (64 - 8 * len));
    const LO: u64 = 0x00ff_00ff_00ff_00ff;
    const ONES: u64 = 0x0001_0001_0001_0001;
    // Four 16-bit lanes each: the even bytes, the odd bytes.
    let (even, odd) = (w & LO, (w >> 8) & LO);
    // The top lane of a product by ONES is the sum of the lanes, by RAMP (lane j: 3 − j) the
    // sum of lane j times j; every lane's partial sum is at most 2 · 255 · 4 (no carry between
    // lanes, none past 16 bits).
    const RAMP: u64 = 0x0000_0001_0002_0003;
    let lanes = |v: u64, m: u64| v.wrapping_mul(m) >> 48;
    let sw = lanes(even + odd, ONES);
    // Σ w_i·i = Σ w_2j·2j + Σ w_2j+1·(2j + 1).
    let swx_rel = 2 * (lanes(even, RAMP) + lanes(odd, RAMP)) + lanes(odd, ONES);
    let (best_w, best_i) = first_max8(w);
    (
        (sw, swx_rel + x0 as u64 * sw),
        (best_w + background, x0 + best_i),
    )
}

/// The greatest byte of `w` and the first place it is at: the greatest `byte_i · 8 + (7 − i)`.
#[inline(always)]
fn first_max8(w: u64) -> (u32, u32) {
    #[cfg(target_arch = "x86_64")]
    let e = {
        use std::arch::x86_64::*;
        // SAFETY: SSE2 is part of x86_64; register operations only.
        unsafe {
            let x = _mm_unpacklo_epi8(_mm_cvtsi64_si128(w as i64), _mm_setzero_si128());
            let x = _mm_or_si128(_mm_slli_epi16(x, 3), _mm_set_epi16(0, 1, 2, 3, 4, 5, 6, 7));
            // Below 2^11: the signed maximum of 16-bit lanes is the unsigned one.
            let x = _mm_max_epi16(x, _mm_shuffle_epi32(x, 0b01_00_11_10));
            let x = _mm_max_epi16(x, _mm_shuffle_epi32(x, 0b10_11_00_01));
            let x = _mm_max_epi16(x, _mm_shufflelo_epi16(x, 0b10_11_00_01));
            (_mm_cvtsi128_si32(x) as u32) & 0xffff
        }
    };
    #[cfg(not(target_arch = "x86_64"))]
    let e = (0..8)
        .map(|i| ((w >> (8 * i)) as u32 & 0xff) << 3 | (7 - i))
        .max()
        .unwrap_or(0);
    (e >> 3, 7 - (e & 7))
}
