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
//! [`super::cpu_simd::U8Passes`] chooses between these, the AVX2 passes
//! ([`super::cpu_avx2`]) and the portable ones, and runs the scalar tails.

#[cfg(target_arch = "x86_64")]
use std::arch::x86_64::*;

/// What the fast passes' intermediate rows hold: `t ^ BIAS` (`t − 2^15` as i16). A row
/// outside the image under [`crate::Border::Zero`] is `BIAS` (t = 0).
pub(super) const BIAS: u16 = 0x8000;

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

/// Whether this CPU has AVX-512 F, BW, VBMI and VNNI.
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

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi,avx512vnni")]
#[allow(clippy::needless_range_loop)] // d also places the loads
pub(super) unsafe fn h(pairs: &[u32], w: usize, pad: &[u8], out: &mut [u16]) -> usize {
    // SAFETY: every load and store below lies inside `pad` and `out` (lengths checked by
    // `U8Passes::h`); the CPU features are enabled on this function.
    unsafe {
        const LANES: usize = 16;
        const BLOCKS: usize = 4;
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
                let qd = _mm512_set1_epi32(pairs[d] as i32);
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
pub(super) unsafe fn v(pairs: &[u32], w: usize, rows: &[&[u16]], out: &mut [u8]) -> usize {
    // SAFETY: every load and store below lies inside `rows` and `out` (lengths checked by
    // `U8Passes::v`); the CPU features are enabled on this function.
    unsafe {
        const LANES: usize = 32;
        const BLOCKS: usize = 2;
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
                let qd = _mm512_set1_epi32(pairs[d] as i32);
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
