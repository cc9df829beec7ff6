//! The choice of the RGBA8 blur's fast CPU passes: AVX-512 VBMI and VNNI ([`super::cpu_vnni`]),
//! else AVX2 ([`super::cpu_avx2`]), else none (the portable passes of [`super::cpu`] run), and
//! the scalar tails of both, which compute the same integers.

use super::cpu_vnni::BIAS;

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
            Isa::Vnni => super::cpu_vnni::cpu_has_them(),
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
                None => super::cpu_vnni::h(&self.pairs, self.w, pad, out),
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
                None => super::cpu_vnni::v(&self.pairs, self.w, rows, out),
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
            let q = super::super::GaussianBlur::new(w as u32).sigma(sigma).weights_fixed().unwrap();
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
        let q = super::super::GaussianBlur::new(2).weights_fixed().unwrap();
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
        let q65 = super::super::GaussianBlur::new(65).weights_fixed().unwrap();
        for isa in [Isa::Vnni, Isa::Avx2] {
            assert!(U8Passes::with_isa(&q65, isa).is_none());
        }
        for isa in [Isa::Vnni, Isa::Avx2] {
            assert_eq!(U8Passes::with_isa(&q, isa).is_some(), isa.on_this_cpu());
        }
    }
}
