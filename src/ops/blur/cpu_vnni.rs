//! The RGBA8 blur's two passes on x86-64 CPUs with AVX-512 VBMI and VNNI (AMD Zen 4 on, Intel
//! Ice Lake on): the same integers as [`super::cpu`]'s `h_u8` and `v_u8`, with half the vector
//! instructions.
//!
//! Both passes pair the taps `−d` and `+d` (equal weights) in the two 16-bit halves of each
//! 32-bit lane, so that one `vpdpwssd` (16-bit products, summed in pairs into 32 bits)
//! adds `q_d · (a + b)` for 16 outputs; one byte or word permute builds those pairs from two
//! loads. The centre tap pairs with itself, its weight split in two halves below 2^15.
//! `vpdpwssd` multiplies signed 16-bit values, so the intermediate rows hold `t − 2^15`
//! (`t ^ 0x8000`, see [`BIAS`]); the vertical sum then lacks `2^15 · Σ q = 2^31`, added with
//! the rounding term to the accumulators' start (all sums wrap modulo 2^32, as the
//! specification's u32 sums do, and the true sum is below 2^32).
//!
//! [`U8Passes`] also runs the AVX2 form of these passes ([`super::cpu_avx2`]) on CPUs with
//! AVX2 but not these instructions, and the scalar tails of both.

#[cfg(target_arch = "x86_64")]
use std::arch::x86_64::*;

/// What the fast passes' intermediate rows hold: `t ^ BIAS` (`t − 2^15` as i16). A row
/// outside the image under [`crate::Border::Zero`] is `BIAS` (t = 0).
pub(super) const BIAS: u16 = 0x8000;

/// The instruction sets the fast passes come in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Isa {
    /// AVX-512 BW, VBMI and VNNI: 16 outputs a `vpdpwssd`.
    Vnni,
    /// AVX2: 8 outputs a `vpmaddwd` ([`super::cpu_avx2`]).
    Avx2,
}

impl Isa {
    /// Whether this CPU has the instructions.
    pub(super) fn on_this_cpu(self) -> bool {
        match self {
            Isa::Vnni => U8Passes::cpu_has_them(),
            Isa::Avx2 => super::cpu_avx2::cpu_has_them(),
        }
    }
}

/// The fast passes, where the CPU has them and the weights fit (`None` elsewhere: the portable
/// passes run).
#[derive(Clone, Copy, Debug)]
pub(super) struct U8Passes {
    /// `q_d · 0x10001` for d = 0..=w (d = 0: the centre's two halves).
    pairs: [u32; MAX_PAIRS],
    w: usize,
    /// The AVX2 horizontal pass's pairs of terms where these are the AVX2 passes (`None`: the
    /// VNNI passes).
    avx2: Option<super::cpu_avx2::HorizontalPairs>,
}

/// The horizontal pass's byte permute: dword k holds byte k of the first load and byte k of the
/// second (index 64 + k) in its two 16-bit halves (the odd bytes are zeroed by a mask).
const BYTE_PAIRS: [u8; 64] = {
    let mut t = [0u8; 64];
    let mut k = 0;
    while k < 16 {
        t[4 * k] = k as u8;
        t[4 * k + 2] = 64 + k as u8;
        k += 1;
    }
    t
};

/// The vertical pass's word permutes: words 2k and 2k + 1 are word k of the two rows (the
/// first table) or word 16 + k (the second).
const WORD_PAIRS: [[u16; 32]; 2] = {
    let mut t = [[0u16; 32]; 2];
    let mut k = 0;
    while k < 32 {
        t[k / 16][2 * (k % 16)] = k as u16;
        t[k / 16][2 * (k % 16) + 1] = 32 + k as u16;
        k += 1;
    }
    t
};

/// Radii the fast passes take (each pair's weight in a register).
const MAX_PAIRS: usize = 65;

impl U8Passes {
    /// The fast passes for the weights `q` (2w + 1 of them), where this CPU has AVX-512 BW,
    /// VBMI and VNNI, the radius is at most 64, every side weight is below 2^15 (always, see
    /// `weights_fixed`) and the centre one at most 65534 (so that it splits into two halves
    /// below 2^15).
    ///
    /// Where the CPU has AVX2 but not those, the AVX2 passes under the same conditions.
    pub(super) fn new(q: &[u32]) -> Option<U8Passes> {
        [Isa::Vnni, Isa::Avx2]
            .into_iter()
            .find(|isa| isa.on_this_cpu())
            .and_then(|isa| Self::with_isa(q, isa))
    }

    /// The fast passes in `isa` for the weights `q` (`None` where this CPU lacks its
    /// instructions or the weights do not fit, as in [`U8Passes::new`]).
    pub(super) fn with_isa(q: &[u32], isa: Isa) -> Option<U8Passes> {
        let w = q.len() / 2;
        if q.len() != 2 * w + 1 || w + 1 > MAX_PAIRS || !isa.on_this_cpu() {
            return None;
        }
        let c = q[w];
        if c > 65534 || q[w + 1..].iter().any(|&s| s >= 1 << 15) {
            return None;
        }
        let mut pairs = [0u32; MAX_PAIRS];
        pairs[0] = (c / 2) | ((c - c / 2) << 16);
        for d in 1..=w {
            pairs[d] = q[w + d] * 0x10001;
        }
        let avx2 = (isa == Isa::Avx2).then(|| super::cpu_avx2::HorizontalPairs::new(q));
        Some(U8Passes { pairs, w, avx2 })
    }

    /// The instruction set these passes run in.
    #[cfg(test)]
    fn isa(&self) -> Isa {
        match self.avx2 {
            Some(_) => Isa::Avx2,
            None => Isa::Vnni,
        }
    }

    /// Whether this CPU runs the fast passes.
    pub(super) fn cpu_has_them() -> bool {
        #[cfg(target_arch = "x86_64")]
        {
            std::is_x86_feature_detected!("avx512f")
                && std::is_x86_feature_detected!("avx512bw")
                && std::is_x86_feature_detected!("avx512vbmi")
                && std::is_x86_feature_detected!("avx512vnni")
        }
        #[cfg(not(target_arch = "x86_64"))]
        false
    }

    /// `out[j] = ((Σ_i q[i] · pad[j + 4 i] + 128) >> 8) ^ BIAS` (`pad`: `out.len() + 8w` bytes).
    pub(super) fn h(&self, pad: &[u8], out: &mut [u16]) {
        assert!(
            pad.len() >= out.len() + 8 * self.w,
            "a padded row too short"
        );
        #[cfg(target_arch = "x86_64")]
        // SAFETY: `with_isa` checked the CPU's features; the lengths are checked above.
        let done = unsafe {
            match &self.avx2 {
                Some(plan) => super::cpu_avx2::h(plan, self.w, pad, out),
                None => self.h_vnni(pad, out),
            }
        };
        #[cfg(not(target_arch = "x86_64"))]
        let done = 0;
        for (j, o) in out.iter_mut().enumerate().skip(done) {
            *o = self.h_one(pad, j);
        }
    }

    /// `out[j] = (Σ_i q[i] · (rows[i][j] ^ BIAS) + 2^23) >> 24` (`rows`: 2w + 1 rows as `h`
    /// writes them, each at least `out.len()` long).
    pub(super) fn v(&self, rows: &[&[u16]], out: &mut [u8]) {
        assert!(
            rows.len() == 2 * self.w + 1 && rows.iter().all(|r| r.len() >= out.len()),
            "the vertical pass needs 2w + 1 rows as long as its output"
        );
        #[cfg(target_arch = "x86_64")]
        // SAFETY: `with_isa` checked the CPU's features; the lengths are checked above.
        let done = unsafe {
            match self.avx2 {
                Some(_) => super::cpu_avx2::v(&self.pairs, self.w, rows, out),
                None => self.v_vnni(rows, out),
            }
        };
        #[cfg(not(target_arch = "x86_64"))]
        let done = 0;
        for (j, o) in out.iter_mut().enumerate().skip(done) {
            *o = self.v_one(rows, j);
        }
    }

    /// The scalar form of `h` for one output (the tails).
    fn h_one(&self, pad: &[u8], j: usize) -> u16 {
        let w = self.w;
        let centre = (self.pairs[0] & 0xffff) + (self.pairs[0] >> 16);
        let mut acc = centre * pad[j + 4 * w] as u32 + 128;
        for d in 1..=w {
            acc += (self.pairs[d] & 0xffff)
                * (pad[j + 4 * (w - d)] as u32 + pad[j + 4 * (w + d)] as u32);
        }
        (acc >> 8) as u16 ^ BIAS
    }

    /// The scalar form of `v` for one output (the tails).
    fn v_one(&self, rows: &[&[u16]], j: usize) -> u8 {
        let w = self.w;
        let t = |i: usize| (rows[i][j] ^ BIAS) as u32;
        let centre = (self.pairs[0] & 0xffff) + (self.pairs[0] >> 16);
        let mut acc = centre.wrapping_mul(t(w)).wrapping_add(1 << 23);
        for d in 1..=w {
            acc = acc.wrapping_add((self.pairs[d] & 0xffff).wrapping_mul(t(w - d) + t(w + d)));
        }
        (acc >> 24) as u8
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f,avx512bw,avx512vbmi,avx512vnni")]
    unsafe fn h_vnni(&self, pad: &[u8], out: &mut [u16]) -> usize {
        // SAFETY: every load and store below lies inside `pad` and `out` (lengths checked by
        // `h`); the CPU features are enabled on this function.
        unsafe {
            const LANES: usize = 16;
            const BLOCKS: usize = 4;
            let w = self.w;
            let n = out.len();
            let idx = _mm512_loadu_si512(BYTE_PAIRS.as_ptr() as *const _);
            let keep: __mmask64 = 0x5555_5555_5555_5555;
            let round = _mm512_set1_epi32(128);
            let bias = _mm512_set1_epi32(BIAS as i32);
            let p = pad.as_ptr();
            macro_rules! load {
                ($at:expr) => {
                    _mm512_castsi128_si512(_mm_loadu_si128(p.add($at) as *const __m128i))
                };
            }
            let mut j0 = 0;
            while j0 + LANES * BLOCKS <= n {
                let mut acc = [round; BLOCKS];
                for d in 0..=w {
                    let qd = _mm512_set1_epi32(self.pairs[d] as i32);
                    for (b, a) in acc.iter_mut().enumerate() {
                        let j = j0 + b * LANES;
                        let x = _mm512_maskz_permutex2var_epi8(
                            keep,
                            load!(j + 4 * (w - d)),
                            idx,
                            load!(j + 4 * (w + d)),
                        );
                        *a = _mm512_dpwssd_epi32(*a, x, qd);
                    }
                }
                for (b, a) in acc.iter().enumerate() {
                    let t = _mm512_xor_si512(_mm512_srli_epi32::<8>(*a), bias);
                    let dst = out.as_mut_ptr().add(j0 + b * LANES) as *mut __m256i;
                    _mm256_storeu_si256(dst, _mm512_cvtepi32_epi16(t));
                }
                j0 += LANES * BLOCKS;
            }
            j0
        }
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f,avx512bw,avx512vbmi,avx512vnni")]
    unsafe fn v_vnni(&self, rows: &[&[u16]], out: &mut [u8]) -> usize {
        // SAFETY: every load and store below lies inside `rows` and `out` (lengths checked by
        // `v`); the CPU features are enabled on this function.
        unsafe {
            const LANES: usize = 32;
            const BLOCKS: usize = 2;
            let w = self.w;
            let n = out.len();
            let lo = _mm512_loadu_si512(WORD_PAIRS[0].as_ptr() as *const _);
            let hi = _mm512_loadu_si512(WORD_PAIRS[1].as_ptr() as *const _);
            // The rounding term and 2^15 · Σ q = 2^31 (the rows hold t − 2^15), modulo 2^32.
            let start = _mm512_set1_epi32((0x8000_0000u32 + (1 << 23)) as i32);
            macro_rules! load {
                ($i:expr, $j:expr) => {
                    _mm512_loadu_si512(rows[$i].as_ptr().add($j) as *const _)
                };
            }
            let mut j0 = 0;
            while j0 + LANES * BLOCKS <= n {
                let mut acc = [[start; 2]; BLOCKS];
                for d in 0..=w {
                    let qd = _mm512_set1_epi32(self.pairs[d] as i32);
                    for (b, a) in acc.iter_mut().enumerate() {
                        let j = j0 + b * LANES;
                        let (x, y) = (load!(w - d, j), load!(w + d, j));
                        a[0] = _mm512_dpwssd_epi32(a[0], _mm512_permutex2var_epi16(x, lo, y), qd);
                        a[1] = _mm512_dpwssd_epi32(a[1], _mm512_permutex2var_epi16(x, hi, y), qd);
                    }
                }
                for (b, a) in acc.iter().enumerate() {
                    for (h, v) in a.iter().enumerate() {
                        let dst = out.as_mut_ptr().add(j0 + b * LANES + h * 16) as *mut __m128i;
                        _mm_storeu_si128(dst, _mm512_cvtepi32_epi8(_mm512_srli_epi32::<24>(*v)));
                    }
                }
                j0 += LANES * BLOCKS;
            }
            j0
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The specification's sums, written out.
    fn h_spec(pad: &[u8], q: &[u32], n: usize) -> Vec<u16> {
        (0..n)
            .map(|j| {
                let h: u32 = q
                    .iter()
                    .enumerate()
                    .map(|(i, &qi)| qi * pad[j + 4 * i] as u32)
                    .sum();
                ((h + 128) >> 8) as u16
            })
            .collect()
    }

    fn v_spec(rows: &[Vec<u16>], q: &[u32], n: usize) -> Vec<u8> {
        (0..n)
            .map(|j| {
                let v = q
                    .iter()
                    .zip(rows)
                    .fold(0u32, |a, (&qi, r)| a.wrapping_add(qi * r[j] as u32));
                (v.wrapping_add(1 << 23) >> 24) as u8
            })
            .collect()
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        /// Both passes against the specification's sums: random radii and sigmas, lengths
        /// around the blocks' multiples, bytes from the extremes and random.
        #[test]
        fn passes_equal_the_specification(
            w in 1usize..=20,
            sigma in 0.3f64..12.0,
            n in 1usize..400,
            seed in any::<u64>(),
            extreme in any::<bool>(),
        ) {
            let q = crate::GaussianBlur::new(w as u32).sigma(sigma).weights_fixed().unwrap();
            for isa in [Isa::Vnni, Isa::Avx2] {
                let Some(fast) = U8Passes::with_isa(&q, isa) else {
                    // Not on this CPU (or a centre weight of 65535 or more): nothing to compare.
                    prop_assert!(!isa.on_this_cpu() || q[w] > 65534);
                    continue;
                };
                let mut s = seed | 1;
                let mut next = move || {
                    s ^= s << 13;
                    s ^= s >> 7;
                    s ^= s << 17;
                    s
                };
                let pad: Vec<u8> = (0..n + 8 * w)
                    .map(|_| if extreme { [0u8, 255][(next() & 1) as usize] } else { next() as u8 })
                    .collect();
                let mut t = vec![0u16; n];
                fast.h(&pad, &mut t);
                let spec = h_spec(&pad, &q, n);
                prop_assert_eq!(t.iter().map(|&v| v ^ BIAS).collect::<Vec<_>>(), spec, "{:?}", isa);
                let rows: Vec<Vec<u16>> = (0..2 * w + 1)
                    .map(|_| {
                        (0..n)
                            .map(|_| if extreme { [0u16, 65280][(next() & 1) as usize] } else { (next() % 65281) as u16 })
                            .collect()
                    })
                    .collect();
                let biased: Vec<Vec<u16>> = rows.iter().map(|r| r.iter().map(|&v| v ^ BIAS).collect()).collect();
                let refs: Vec<&[u16]> = biased.iter().map(|r| r.as_slice()).collect();
                let mut out = vec![0u8; n];
                fast.v(&refs, &mut out);
                prop_assert_eq!(out, v_spec(&rows, &q, n), "{:?}", isa);
            }
        }
    }

    #[test]
    fn this_cpu_runs_them_where_it_has_the_features() {
        let q = crate::GaussianBlur::new(2).weights_fixed().unwrap();
        let chosen = U8Passes::new(&q).map(|p| p.isa());
        let expected = if Isa::Vnni.on_this_cpu() {
            Some(Isa::Vnni)
        } else if Isa::Avx2.on_this_cpu() {
            Some(Isa::Avx2)
        } else {
            None
        };
        assert_eq!(chosen, expected);
        // Radii above 64 are refused in every instruction set.
        let q65 = crate::GaussianBlur::new(65).weights_fixed().unwrap();
        for isa in [Isa::Vnni, Isa::Avx2] {
            assert!(U8Passes::with_isa(&q65, isa).is_none());
        }
        for isa in [Isa::Vnni, Isa::Avx2] {
            assert_eq!(U8Passes::with_isa(&q, isa).is_some(), isa.on_this_cpu());
        }
    }
}
