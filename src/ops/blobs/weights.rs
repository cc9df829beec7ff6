//! A blob pixel's weight: its key minus the background, an integer. Of the integer formats the
//! key is one already; of an f32 image the weights are counted in one unit `2^-s` for the whole
//! call, `w = max(⌊k·2^s⌋ − ⌊b·2^s⌋, 1)`, each floor exact from the float's bits (no float
//! arithmetic: the same on every device, denormals or not), `s` the largest exponent whose
//! weights all fit 32 bits (docs/SPEC.md, "Blobs").

use crate::error::{Error, Result};
use crate::spec::{Format, f32_of_order, order_of_f32};

/// `⌊v·2^s⌋` of the f32 whose bits are `bits` (finite), exactly; `None` past ±2^100.
pub(crate) fn fixed(bits: u32, s: i32) -> Option<i128> {
    let (field, fraction) = ((bits >> 23) & 0xff, bits & 0x7f_ffff);
    if field == 0xff {
        return None;
    }
    if field == 0 && fraction == 0 {
        return Some(0);
    }
    // v = ±m · 2^(e − 150): the hidden bit of normal numbers, denormals' exponent 1.
    let (m, e) = match field {
        0 => (fraction as i128, 1),
        f => ((fraction | 0x80_0000) as i128, f as i32),
    };
    let sh = e - 150 + s.clamp(-1000, 1000);
    let negative = bits >> 31 == 1;
    if sh > 76 {
        return None;
    }
    Some(match (sh >= 0, negative) {
        (true, false) => m << sh,
        (true, true) => -(m << sh),
        // Below one unit: 0 for positives, −1 for negatives (⌊−x⌋ = −⌈x⌉).
        (false, false) if -sh >= 32 => 0,
        (false, true) if -sh >= 32 => -1,
        (false, false) => m >> -sh,
        (false, true) => -((m + (1 << -sh) - 1) >> -sh),
    })
}

/// The weights' span `⌊k·2^s⌋ − ⌊b·2^s⌋` at exponent `s`, `None` past what 64 bits hold.
fn span(largest: f32, background: f32, s: i32) -> Option<i128> {
    Some(fixed(largest.to_bits(), s)? - fixed(background.to_bits(), s)?)
}

/// The largest `s` whose weights fit 32 bits.
const WEIGHT_MAX: i128 = u32::MAX as i128;
/// The exponents a call may use (beyond them every weight is 1, or none fits).
const EXPONENTS: std::ops::RangeInclusive<i32> = -200..=200;

/// The weights' exponent `s` of the blobs of an f32 image whose largest key above the threshold
/// is `largest`, the background `background`: the largest `s` with `⌊largest·2^s⌋ −
/// ⌊background·2^s⌋ < 2^32` (weights in units of `2^-s`, at most 32 bits each). Fix it with
/// [`BlobOptions::weight_exponent`](crate::BlobOptions::weight_exponent) where parts of one
/// image are labelled apart (the Dask chunks), from the whole image's largest key. 0 where
/// `largest` is not above `background` (no pixel is a blob's).
///
/// Errors: a key or background that is not finite (an infinite key has no finite weight).
///
/// ```
/// // Keys up to 1.0 above 0.0: 2^32 − 1 units of 2^-32 each at most.
/// assert_eq!(clpix::blob_weight_exponent(1.0, 0.0)?, 31);
/// assert_eq!(clpix::blob_weight_exponent(1000.0, 0.0)?, 22);
/// assert!(clpix::blob_weight_exponent(f32::INFINITY, 0.0).is_err());
/// # Ok::<(), clpix::Error>(())
/// ```
pub fn blob_weight_exponent(largest: f32, background: f32) -> Result<i32> {
    for (name, v) in [("the largest key", largest), ("the background", background)] {
        if !v.is_finite() {
            return Err(Error::invalid(
                "blob weights",
                format!("{name} {v}"),
                "finite keys and background (an infinite or NaN key has no finite weight: \
                 threshold above it, or replace it)",
            ));
        }
    }
    if largest <= background {
        return Ok(0);
    }
    // The span at least doubles (less one) with each step of s: the largest s that fits, by
    // bisection over the exponents a call may use.
    let fits = |s: i32| span(largest, background, s).is_some_and(|d| d <= WEIGHT_MAX);
    let (mut lo, mut hi) = (*EXPONENTS.start(), *EXPONENTS.end());
    if fits(hi) {
        return Ok(hi);
    }
    while hi - lo > 1 {
        let mid = (lo + hi) / 2;
        if fits(mid) { lo = mid } else { hi = mid }
    }
    Ok(lo)
}

/// How a blob pixel's key becomes its weight.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Weigh {
    /// Integer keys: `key − background`.
    Int { background: u32 },
    /// f32 keys (order keys): `max(⌊k·2^exponent⌋ − base, 1)`, `base = ⌊b·2^exponent⌋`.
    F32 { exponent: i32, base: i64 },
}

impl Weigh {
    /// The weights of an image of `format` under `opts` (its background already checked), the
    /// largest key above the threshold being `largest` (an order key, `None` without any).
    pub(crate) fn of(
        format: Format,
        opts: &super::BlobOptions,
        largest: Option<u32>,
    ) -> Result<Weigh> {
        if !format.is_float() {
            return Ok(Weigh::Int {
                background: opts.background,
            });
        }
        let background = f32::from_bits(opts.background);
        let largest = largest.map(f32_of_order);
        let exponent = match (opts.weight_exponent, largest) {
            (Some(s), _) => s,
            (None, Some(k)) => blob_weight_exponent(k, background)?,
            (None, None) => 0,
        };
        let wrong = |why: String| {
            Error::invalid(
                "weight exponent",
                why,
                "one whose weights fit 32 bits: at most blob_weight_exponent(the largest key, \
                 the background), -200 to 200",
            )
        };
        if !EXPONENTS.contains(&exponent) {
            return Err(wrong(format!("{exponent}")));
        }
        if let Some(k) = largest {
            if !k.is_finite() {
                // The only key above a threshold that is not finite: +inf.
                blob_weight_exponent(k, background)?;
            }
            if span(k, background, exponent).is_none_or(|d| d > WEIGHT_MAX) {
                return Err(wrong(format!(
                    "{exponent} (largest key {k}, background {background})"
                )));
            }
        }
        let base = fixed(opts.background, exponent).and_then(|b| i64::try_from(b).ok());
        let base = match (base, largest) {
            (Some(b), _) => b,
            // No key above the threshold: nothing is weighed.
            (None, None) => 0,
            (None, Some(_)) => return Err(wrong(format!("{exponent} (background {background})"))),
        };
        Ok(Weigh::F32 { exponent, base })
    }

    /// The weight of a blob pixel of key `key` (an order key of f32 images).
    #[inline(always)]
    pub(crate) fn weight(self, key: u32) -> u64 {
        match self {
            Weigh::Int { background } => (key - background) as u64,
            Weigh::F32 { exponent, base } => {
                let k = fixed(f32_of_order(key).to_bits(), exponent).unwrap_or(0) as i64;
                (k - base).max(1) as u64
            }
        }
    }

    /// The exponent of the weights' unit (0 for integer keys).
    pub(crate) fn exponent(self) -> i32 {
        match self {
            Weigh::Int { .. } => 0,
            Weigh::F32 { exponent, .. } => exponent,
        }
    }
}

/// Checks the background of an f32 image: finite, and at most the threshold `t` (an order key).
pub(crate) fn check_f32_background(bits: u32, t: u32) -> Result<()> {
    let b = f32::from_bits(bits);
    match order_of_f32(b) {
        Some(k) if b.is_finite() && k <= t => Ok(()),
        _ => Err(Error::invalid(
            "background",
            format!("{b} (threshold {})", f32_of_order(t)),
            "a finite f32 at most the threshold (BlobOptions::background_f32)",
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `⌊v·2^s⌋` in f64 where it is exact (|v·2^s| below 2^53).
    fn by_float(v: f32, s: i32) -> i128 {
        (v as f64 * 2f64.powi(s)).floor() as i128
    }

    #[test]
    fn fixed_is_the_floor() {
        let values = [
            0.0f32,
            -0.0,
            1.0,
            -1.0,
            0.75,
            -0.75,
            3.5,
            -3.5,
            1e-3,
            -1e-3,
            1e-40,
            -1e-40,
            f32::MIN_POSITIVE,
            123456.78,
            -98765.43,
            f32::MAX,
            f32::MIN,
        ];
        for v in values {
            for s in -160..=180 {
                let exact = v as f64 * 2f64.powi(s);
                if exact.abs() < 2f64.powi(52) && exact.is_finite() && 2f64.powi(s).is_normal() {
                    assert_eq!(fixed(v.to_bits(), s), Some(by_float(v, s)), "{v} · 2^{s}");
                }
            }
        }
        assert_eq!(fixed(f32::INFINITY.to_bits(), 0), None);
        assert_eq!(fixed(f32::MAX.to_bits(), 0), None);
    }

    #[test]
    fn the_exponent_is_the_largest_that_fits() {
        for (k, b) in [
            (1.0f32, 0.0f32),
            (1000.0, 0.0),
            (1e-40, 0.0),
            (1e30, -1e30),
            (5.0, 4.999),
            (0.5, -3e38),
        ] {
            let s = blob_weight_exponent(k, b).unwrap();
            assert!(span(k, b, s).unwrap() <= WEIGHT_MAX, "{k} {b} {s}");
            assert!(
                s == 200 || span(k, b, s + 1).is_none_or(|d| d > WEIGHT_MAX),
                "{k} {b} {s}"
            );
        }
        assert_eq!(blob_weight_exponent(1.0, 2.0).unwrap(), 0);
        assert!(blob_weight_exponent(f32::NAN, 0.0).is_err());
        assert!(blob_weight_exponent(1.0, f32::NEG_INFINITY).is_err());
    }

    #[test]
    fn weights_are_at_least_one_and_fit() {
        let opts = super::super::BlobOptions::new().background_f32(2.0);
        let largest = order_of_f32(10.0);
        let w = Weigh::of(Format::LumaF32, &opts, largest).unwrap();
        let key = |v: f32| order_of_f32(v).unwrap();
        assert_eq!(w.weight(key(2.0)), 1);
        assert_eq!(w.weight(key(10.0)), 8u64 << w.exponent());
        assert!(w.weight(key(10.0)) <= u32::MAX as u64);
        let fixed = super::super::BlobOptions::new().weight_exponent(40);
        assert!(Weigh::of(Format::LumaF32, &fixed, largest).is_err());
        assert!(Weigh::of(Format::LumaF32, &opts, order_of_f32(f32::INFINITY)).is_err());
    }
}
