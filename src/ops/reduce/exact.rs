//! The exact sum of f32 keys (docs/SPEC.md, "Pixel formats"): signed mantissas summed by biased
//! exponent in integers (no rounding at all, so any order and any device give the same bins),
//! then the whole rounded once to f64.

/// Exponents a sum may hold: f32's 255, and the kernels' pieces of wider sums above them.
pub(super) const BINS: usize = 384;

/// Sums of signed mantissas by biased exponent, and the infinities seen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct ExactSum {
    /// `bins[k]`: sums of signed integers worth 2^(max(k, 1) − 150) each: the 24-bit mantissas
    /// of the finite keys of biased exponent `k` (subnormals at 0), and from the kernels also
    /// 12-bit pieces of wider sums at k up to 383. At most 2^32 keys: |bins[k]| < 2^57.
    pub bins: [i64; BINS],
    pub pos_inf: u64,
    pub neg_inf: u64,
}

impl Default for ExactSum {
    fn default() -> Self {
        ExactSum {
            bins: [0; BINS],
            pos_inf: 0,
            neg_inf: 0,
        }
    }
}

impl ExactSum {
    /// Adds the f32 whose bits are `b` (not a NaN).
    #[inline(always)]
    pub fn add_bits(&mut self, b: u32) {
        let e = ((b >> 23) & 0xff) as usize;
        let neg = b >> 31 == 1;
        if e == 0xff {
            match neg {
                true => self.neg_inf += 1,
                false => self.pos_inf += 1,
            }
            return;
        }
        let m = ((b & 0x7f_ffff) | if e != 0 { 0x80_0000 } else { 0 }) as i64;
        self.bins[e] += if neg { -m } else { m };
    }

    pub fn merge(&mut self, other: &ExactSum) {
        for (a, b) in self.bins.iter_mut().zip(other.bins.iter()) {
            *a += b;
        }
        self.pos_inf += other.pos_inf;
        self.neg_inf += other.neg_inf;
    }

    /// The sum, rounded once (to nearest, ties to even) to f64.
    pub fn to_f64(&self) -> f64 {
        match (self.pos_inf > 0, self.neg_inf > 0) {
            (true, true) => return f64::NAN,
            (true, false) => return f64::INFINITY,
            (false, true) => return f64::NEG_INFINITY,
            (false, false) => {}
        }
        // Fixed point with its unit at 2^-149: bin e is worth 2^(max(e, 1) − 1) units.
        let mut acc = Wide::default();
        for (e, &v) in self.bins.iter().enumerate() {
            if v != 0 {
                acc.add_shifted(v, e.max(1) as u32 - 1);
            }
        }
        acc.to_f64_scaled(-149)
    }
}

/// A 512-bit two's complement integer, little-endian words.
#[derive(Debug, Default, Clone, Copy)]
struct Wide([u64; LIMBS]);

const LIMBS: usize = 8;

impl Wide {
    /// Adds `v · 2^shift` (|v| < 2^58, shift < 400).
    fn add_shifted(&mut self, v: i64, shift: u32) {
        let x = (v as i128) << (shift % 64); // |x| < 2^120: no overflow
        let fill = if x < 0 { u64::MAX } else { 0 };
        let mut addend = [fill; LIMBS];
        let at = (shift / 64) as usize;
        for w in addend.iter_mut().take(at) {
            *w = 0;
        }
        addend[at] = x as u64;
        if at + 1 < LIMBS {
            addend[at + 1] = (x >> 64) as u64;
        }
        let mut carry = false;
        for (a, b) in self.0.iter_mut().zip(addend) {
            let (s, c1) = a.overflowing_add(b);
            let (s, c2) = s.overflowing_add(carry as u64);
            *a = s;
            carry = c1 || c2;
        }
    }

    /// The value times 2^scale, rounded to nearest (ties to even) f64.
    fn to_f64_scaled(mut self, scale: i32) -> f64 {
        let negative = self.0[LIMBS - 1] >> 63 == 1;
        if negative {
            let mut carry = true;
            for w in self.0.iter_mut() {
                let (s, c) = (!*w).overflowing_add(carry as u64);
                *w = s;
                carry = c;
            }
        }
        let Some(top) = (0..LIMBS).rev().find(|&i| self.0[i] != 0) else {
            return 0.0;
        };
        let h = top as i32 * 64 + 63 - self.0[top].leading_zeros() as i32; // highest set bit
        let bit = |i: i32| i >= 0 && (self.0[(i / 64) as usize] >> (i % 64)) & 1 == 1;
        // The 53 bits from h down, the rounding bit below them, and whether any bit is below.
        let low = h - 52;
        let mut m: u64 = 0;
        for i in (low.max(0)..=h).rev() {
            m = (m << 1) | bit(i) as u64;
        }
        let mut exp = low.max(0) + scale;
        if low > 0 {
            let round = bit(low - 1);
            let sticky = (0..low - 1).any(bit);
            if round && (sticky || m & 1 == 1) {
                m += 1;
                if m == 1 << 53 {
                    m >>= 1;
                    exp += 1;
                }
            }
        }
        // m < 2^53 is exact in f64, and 2^exp is a normal f64 (exp in −149..=300).
        let v = m as f64 * f64::from_bits(((1023 + exp) as u64) << 52);
        if negative { -v } else { v }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exact(vals: &[f32]) -> f64 {
        let mut s = ExactSum::default();
        for v in vals {
            s.add_bits(v.to_bits());
        }
        s.to_f64()
    }

    #[test]
    fn sums_are_exact_then_rounded_once() {
        assert_eq!(exact(&[1.5, -0.25]), 1.25);
        assert_eq!(exact(&[]), 0.0);
        assert_eq!(exact(&[1e30, 1.0, -1e30]), 1.0);
        assert_eq!(exact(&[f32::MAX, f32::MAX]), 2.0 * f32::MAX as f64);
        let tiny = f32::from_bits(1);
        assert_eq!(exact(&[tiny, tiny, tiny]), 3.0 * tiny as f64);
        assert_eq!(exact(&[f32::INFINITY, 1.0]), f64::INFINITY);
        assert!(exact(&[f32::INFINITY, f32::NEG_INFINITY]).is_nan());
        // f64's unit at 2^60 is 256: 2^60 + 128 is a tie (to even: down), a bit more goes up.
        let big = (1u64 << 60) as f32;
        assert_eq!(exact(&[big, 128.0]), (1u64 << 60) as f64);
        assert_eq!(
            exact(&[big, 128.0, 2f32.powi(-20)]),
            ((1u64 << 60) as f64) + 256.0
        );
        assert_eq!(
            exact(&[-big, -128.0, -2f32.powi(-20)]),
            -((1u64 << 60) as f64) - 256.0
        );
        // The kernels' pieces of wide sums, above f32's exponents.
        let mut wide = ExactSum::default();
        wide.bins[300] = 3;
        wide.bins[12] = -1;
        assert_eq!(wide.to_f64(), 3.0 * 2f64.powi(150) - 2f64.powi(12 - 150));
        // Against f64 where f64 is exact: eighths below 2^20.
        let v: Vec<f32> = (0..1000)
            .map(|i| ((i * 37) % 1000 - 500) as f32 / 8.0)
            .collect();
        let f: f64 = v.iter().map(|&x| x as f64).sum();
        assert_eq!(exact(&v), f);
    }
}
