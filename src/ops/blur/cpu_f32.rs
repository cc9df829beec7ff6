//! The CPU f32 blur's row loops (multiversioned): the horizontal pass and the vertical pass
//! of one or two output rows, each a fixed order of fused multiply-adds.

// docs/SPEC.md writes the f32 sums as one fused multiply-add a tap, `acc = fma(w, x, acc)`,
// in tap order: a compiler may not change its rounding (a separate multiply and add, Intel's
// OpenCL compiler fused despite `FP_CONTRACT OFF`).
use crate::cpu::multiversion;

/// Sums over blocks of `K` values starting at `j0`.
pub(super) trait Blocks {
    fn block<const K: usize>(&mut self, j0: usize);
}

/// Runs `b` over blocks of `B` values covering `0..n`, or of one value where `n < B` (an edge
/// piece of w pixels): the last
/// block ends at `n` and overlaps the one before (its values written twice, the same)
/// instead of a scalar tail. (Plain loops and a trait, not closures: a closure is compiled
/// without its caller's target features.)
#[inline(always)]
fn each_block<const B: usize>(n: usize, b: &mut impl Blocks) {
    if n < B {
        for i in 0..n {
            b.block::<1>(i);
        }
    } else {
        for i in 0..n.div_ceil(B) {
            b.block::<B>((i * B).min(n - B));
        }
    }
}

/// `K` values at `j0` of a slice (zeros where it is too short, which no caller passes).
#[inline(always)]
fn at<const K: usize>(s: &[f32], j0: usize) -> &[f32; K] {
    s.get(j0..j0 + K)
        .and_then(|a| a.try_into().ok())
        .unwrap_or(&[0.0; K])
}

/// `acc[k] = fma(wi, a[k], acc[k])` for each value of a block.
#[inline(always)]
fn fma_into<const K: usize>(acc: &mut [f32; K], wi: f32, a: &[f32; K]) {
    for k in 0..K {
        acc[k] = wi.mul_add(a[k], acc[k]);
    }
}

/// The horizontal pass: `out[j] = Σ_i wt[i] · pad[j + c i]` (`c` channels a pixel), in tap
/// order.
struct Horizontal<'a> {
    pad: &'a [f32],
    wt: &'a [f32],
    c: usize,
    out: &'a mut [f32],
}

impl Blocks for Horizontal<'_> {
    #[inline(always)]
    fn block<const K: usize>(&mut self, j0: usize) {
        let mut acc = [0.0f32; K];
        for (i, &wi) in self.wt.iter().enumerate() {
            fma_into(&mut acc, wi, at(self.pad, j0 + self.c * i));
        }
        self.out[j0..j0 + K].copy_from_slice(&acc);
    }
}

/// The vertical pass for one output row: `out[j] = Σ_i wt[i] · rows[i][j]`, in tap order.
struct Vertical<'a> {
    rows: &'a [&'a [f32]],
    wt: &'a [f32],
    out: &'a mut [f32],
}

impl Blocks for Vertical<'_> {
    #[inline(always)]
    fn block<const K: usize>(&mut self, j0: usize) {
        let mut acc = [0.0f32; K];
        for (row, &wi) in self.rows.iter().zip(self.wt) {
            fma_into(&mut acc, wi, at(row, j0));
        }
        self.out[j0..j0 + K].copy_from_slice(&acc);
    }
}

/// The vertical pass for two output rows from `taps + 1` rows: `out0` from rows `0..taps`,
/// `out1` from rows `1..=taps`, each in tap order. Every row loaded serves both sums, which
/// halves the loads of one row at a time (they, not the multiply-adds, had set the pace).
struct VerticalPair<'a> {
    rows: &'a [&'a [f32]],
    wt: &'a [f32],
    out: (&'a mut [f32], &'a mut [f32]),
}

impl Blocks for VerticalPair<'_> {
    #[inline(always)]
    fn block<const K: usize>(&mut self, j0: usize) {
        let (wt, taps) = (self.wt, self.wt.len());
        let (mut a0, mut a1) = ([0.0f32; K], [0.0f32; K]);
        fma_into(&mut a0, wt[0], at(self.rows[0], j0));
        for r in 1..taps {
            let x = at(self.rows[r], j0);
            fma_into(&mut a0, wt[r], x);
            fma_into(&mut a1, wt[r - 1], x);
        }
        fma_into(&mut a1, wt[taps - 1], at(self.rows[taps], j0));
        self.out.0[j0..j0 + K].copy_from_slice(&a0);
        self.out.1[j0..j0 + K].copy_from_slice(&a1);
    }
}

multiversion! {
    const B: usize = [64, 64, 32];
    fn h_f32(pad: &[f32], wt: &[f32], c: usize, out: &mut [f32]) -> () {
        each_block::<B>(out.len(), &mut Horizontal { pad, wt, c, out });
    }
}

multiversion! {
    const B: usize = [64, 64, 32];
    fn v_f32(rows: &[&[f32]], wt: &[f32], out: &mut [f32]) -> () {
        // One output row (the last of an odd band, or a row of the path without bands).
        each_block::<B>(out.len(), &mut Vertical { rows, wt, out });
    }
}

multiversion! {
    const B: usize = [64, 32, 16];
    fn v2_f32(rows: &[&[f32]], wt: &[f32], out0: &mut [f32], out1: &mut [f32]) -> () {
        // rows.len() == wt.len() + 1; the shorter output's length.
        let n = out0.len().min(out1.len());
        each_block::<B>(n, &mut VerticalPair { rows, wt, out: (out0, out1) });
    }
}
