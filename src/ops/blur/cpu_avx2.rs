//! The RGBA8 blur's two passes on x86-64 CPUs with AVX2 but without AVX-512 VNNI (AMD Zen 1 to
//! 3, Intel Haswell to Comet Lake): the same integers as [`super::cpu`]'s `h_u8` and `v_u8`
//! and as [`super::cpu_vnni`], with 16-bit multiply-adds (`vpmaddwd`: two products of signed
//! 16-bit values summed into 32 bits) where the compiled portable passes widen every tap to 32
//! bits.
//!
//! The horizontal pass adds the two taps of each distance in 16 bits (`a + b ≤ 510`) and pairs
//! two such sums (or the centre, or the rounding term as a lane of ones) in each 32-bit lane:
//! one `vpmaddwd` adds four taps of 8 outputs. The vertical pass pairs the rows `−d` and `+d`
//! as the VNNI passes do (their values `t − 2^15`, see [`super::cpu_vnni::BIAS`]), adding each
//! `vpmaddwd` to the accumulators apart. Both unpack pairs of 16-bit vectors within their
//! 128-bit halves and pack the sums back with `vpackusdw`, which restores the order.

#[cfg(target_arch = "x86_64")]
use std::arch::x86_64::*;

/// The horizontal pass's terms outside the pairs of sides `(d, d + 1)`, d = 1, 3, 5, …: the
/// centre (alone where its weight is below 2^15, else in two halves), the side `w` where w is
/// odd, and the rounding term 128 as a lane of ones where the terms are odd in number. Each
/// variant holds its pairs' two 16-bit weights in one word; the accumulators start at
/// `HorizontalPairs::start`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Tail {
    /// `(centre, ones)`: w even, the centre below 2^15.
    Ones(u32),
    /// `(centre, centre)`: w even, the centre in two halves.
    Halves(u32),
    /// `(centre, side w)`: w odd, the centre below 2^15.
    Side(u32),
    /// `(centre, side w)` and `(centre, ones)`: w odd, the centre in two halves.
    SideAndOnes(u32, u32),
}

/// The horizontal pass's plan: the weights of the pairs of sides and the tail.
#[derive(Clone, Copy, Debug)]
pub(super) struct HorizontalPairs {
    /// `q_d | q_{d+1} << 16` for the pairs of sides (d = 1, 3, …, below w).
    sides: [u32; 32],
    tail: Tail,
    /// The accumulators' start: the rounding term where no lane of ones carries it.
    start: u32,
}

impl HorizontalPairs {
    /// The plan for the weights `q`, which [`super::cpu_simd::U8Passes::with_isa`] has checked:
    /// 2w + 1 of them, w at most 64, side weights below 2^15, the centre at most 65534.
    pub(super) fn new(q: &[u32]) -> HorizontalPairs {
        let w = q.len() / 2;
        debug_assert!(w <= 64 && q[w] <= 65534 && q[w + 1..].iter().all(|&s| s < 1 << 15));
        let mut sides = [0u32; 32];
        for (p, s) in sides.iter_mut().enumerate().take(w / 2) {
            *s = q[w + 2 * p + 1] | q[w + 2 * p + 2] << 16;
        }
        let (c, last) = (q[w], q[2 * w]);
        let halves = (c / 2) | (c - c / 2) << 16;
        let (tail, start) = match (w % 2 == 1, c < 1 << 15) {
            (false, true) => (Tail::Ones(c | 128 << 16), 0),
            (false, false) => (Tail::Halves(halves), 128),
            (true, true) => (Tail::Side(c | last << 16), 128),
            (true, false) => (
                Tail::SideAndOnes((c / 2) | (last << 16), (c - c / 2) | (128 << 16)),
                0,
            ),
        };
        HorizontalPairs { sides, tail, start }
    }
}

/// Whether this CPU runs the AVX2 passes.
pub(super) fn cpu_has_them() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::is_x86_feature_detected!("avx2")
    }
    #[cfg(not(target_arch = "x86_64"))]
    false
}

/// `out[j] = ((Σ_i q[i] · pad[j + 4 i] + 128) >> 8) ^ BIAS` for the whole blocks of 32 values
/// of `out` (`pad`: at least `out.len() + 8w` bytes); returns how many values it wrote.
///
/// # Safety
/// The CPU has AVX2 and `pad.len() >= out.len() + 8w`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
pub(super) unsafe fn h(plan: &HorizontalPairs, w: usize, pad: &[u8], out: &mut [u16]) -> usize {
    // SAFETY: every load reads 16 bytes at j + 4i ≤ j + 8w with j + 16 ≤ out.len(), inside `pad`
    // (the caller's bound); every store writes 16 values below the block's end in `out`.
    unsafe {
        const LANES: usize = 16;
        const BLOCKS: usize = 2;
        let n = out.len();
        let p = pad.as_ptr();
        let ones = _mm256_set1_epi16(1);
        let bias = _mm256_set1_epi16(super::cpu_vnni::BIAS as i16);
        let start = _mm256_set1_epi32(plan.start as i32);
        macro_rules! bytes {
            ($at:expr) => {
                _mm256_cvtepu8_epi16(_mm_loadu_si128(p.add($at) as *const __m128i))
            };
        }
        macro_rules! side {
            ($d:expr, $j:expr) => {
                _mm256_add_epi16(bytes!($j + 4 * (w - $d)), bytes!($j + 4 * (w + $d)))
            };
        }
        let mut j0 = 0;
        while j0 + LANES * BLOCKS <= n {
            let mut acc = [[start; 2]; BLOCKS];
            macro_rules! pair {
                ($x:expr, $y:expr, $weights:expr, $a:expr) => {{
                    let (x, y, qp) = ($x, $y, _mm256_set1_epi32($weights as i32));
                    let a: &mut [__m256i; 2] = $a;
                    a[0] =
                        _mm256_add_epi32(a[0], _mm256_madd_epi16(_mm256_unpacklo_epi16(x, y), qp));
                    a[1] =
                        _mm256_add_epi32(a[1], _mm256_madd_epi16(_mm256_unpackhi_epi16(x, y), qp));
                }};
            }
            for (p, &weights) in plan.sides.iter().enumerate().take(w / 2) {
                let d = 2 * p + 1;
                for (b, a) in acc.iter_mut().enumerate() {
                    let j = j0 + b * LANES;
                    pair!(side!(d, j), side!(d + 1, j), weights, a);
                }
            }
            for (b, a) in acc.iter_mut().enumerate() {
                let j = j0 + b * LANES;
                let centre = bytes!(j + 4 * w);
                match plan.tail {
                    Tail::Ones(q) => pair!(centre, ones, q, a),
                    Tail::Halves(q) => pair!(centre, centre, q, a),
                    Tail::Side(q) => pair!(centre, side!(w, j), q, a),
                    Tail::SideAndOnes(q, r) => {
                        pair!(centre, side!(w, j), q, a);
                        pair!(centre, ones, r, a);
                    }
                }
            }
            for (b, a) in acc.iter().enumerate() {
                // Each sum is below 2^24: after the shift it fits 16 bits, and the unsigned
                // pack (within 128-bit halves) puts the values back in order.
                let t =
                    _mm256_packus_epi32(_mm256_srli_epi32::<8>(a[0]), _mm256_srli_epi32::<8>(a[1]));
                let dst = out.as_mut_ptr().add(j0 + b * LANES) as *mut __m256i;
                _mm256_storeu_si256(dst, _mm256_xor_si256(t, bias));
            }
            j0 += LANES * BLOCKS;
        }
        j0
    }
}

/// `out[j] = (Σ_i q[i] · (rows[i][j] ^ BIAS) + 2^23) >> 24` for the whole blocks of 32 values
/// of `out`, with `pairs` as [`super::cpu_vnni`] keeps them (`q_d · 0x10001`, the centre's two
/// halves at d = 0); returns how many values it wrote.
///
/// # Safety
/// The CPU has AVX2, `rows` holds 2w + 1 rows and each is at least `out.len()` long.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
pub(super) unsafe fn v(pairs: &[u32], w: usize, rows: &[&[u16]], out: &mut [u8]) -> usize {
    // SAFETY: every load reads 16 values at j with j + 16 ≤ out.len() of a row at least as long
    // (the caller's bound); every store writes 32 bytes at j0 with j0 + 32 ≤ out.len().
    unsafe {
        const LANES: usize = 16;
        let n = out.len();
        // The rounding term and 2^15 · Σ q = 2^31 (the rows hold t − 2^15), modulo 2^32.
        let start = _mm256_set1_epi32((0x8000_0000u32 + (1 << 23)) as i32);
        macro_rules! load {
            ($i:expr, $j:expr) => {
                _mm256_loadu_si256(rows[$i].as_ptr().add($j) as *const __m256i)
            };
        }
        let mut j0 = 0;
        while j0 + 2 * LANES <= n {
            let mut acc = [[start; 2]; 2];
            for (d, &pd) in pairs.iter().enumerate().take(w + 1) {
                let qd = _mm256_set1_epi32(pd as i32);
                for (b, a) in acc.iter_mut().enumerate() {
                    let j = j0 + b * LANES;
                    let x = load!(w - d, j);
                    let y = if d == 0 { x } else { load!(w + d, j) };
                    a[0] =
                        _mm256_add_epi32(a[0], _mm256_madd_epi16(_mm256_unpacklo_epi16(x, y), qd));
                    a[1] =
                        _mm256_add_epi32(a[1], _mm256_madd_epi16(_mm256_unpackhi_epi16(x, y), qd));
                }
            }
            // Each value is below 256 after the shift: two unsigned packs (within 128-bit
            // halves) and a permute of the 64-bit quarters put the 32 bytes in order.
            let words: [__m256i; 2] = [0, 1].map(|b| {
                _mm256_packus_epi32(
                    _mm256_srli_epi32::<24>(acc[b][0]),
                    _mm256_srli_epi32::<24>(acc[b][1]),
                )
            });
            let bytes = _mm256_permute4x64_epi64::<0xd8>(_mm256_packus_epi16(words[0], words[1]));
            _mm256_storeu_si256(out.as_mut_ptr().add(j0) as *mut __m256i, bytes);
            j0 += 2 * LANES;
        }
        j0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn horizontal_plans_pair_every_term_once_with_its_weight() {
        let plan = |w: u32, sigma: f64| {
            let q = super::super::GaussianBlur::new(w)
                .sigma(sigma)
                .weights_fixed()
                .unwrap();
            (HorizontalPairs::new(&q), q)
        };
        // w = 2, sigma 1: the sides paired, the centre below 2^15 with the lane of ones.
        let (p, q) = plan(2, 1.0);
        assert!(q[2] < 1 << 15);
        assert_eq!(p.sides[0], q[3] | q[4] << 16);
        assert_eq!((p.tail, p.start), (Tail::Ones(q[2] | 128 << 16), 0));
        // w = 4, sigma 0.3: the centre of 2^15 or more in two halves.
        let (p, q) = plan(4, 0.3);
        assert!(q[4] >= 1 << 15);
        assert_eq!(&p.sides[..2], &[q[5] | q[6] << 16, q[7] | q[8] << 16]);
        assert_eq!(p.tail, Tail::Halves((q[4] / 2) | ((q[4] - q[4] / 2) << 16)));
        assert_eq!(p.start, 128);
        // w = 3, sigma 2: the last side with the centre.
        let (p, q) = plan(3, 2.0);
        assert_eq!((p.tail, p.start), (Tail::Side(q[3] | q[6] << 16), 128));
        // w = 1, sigma 0.3: the side with half the centre, the other half with the ones.
        let (p, q) = plan(1, 0.3);
        let (h0, h1) = (q[1] / 2, q[1] - q[1] / 2);
        let tail = Tail::SideAndOnes(h0 | q[2] << 16, h1 | 128 << 16);
        assert_eq!((p.tail, p.start), (tail, 0));
    }
}
