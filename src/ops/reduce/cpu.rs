//! The CPU path of the reductions: the executable specification.

use super::*;

/// Pixels per block: the block's maximum is a vectorised loop; the index search runs only when
/// a block beats the best so far.
pub(super) const BLOCK: usize = 512;

#[inline(always)]
pub(super) fn wsum(p: u32) -> u32 {
    21 * (p & 0xff) + 72 * ((p >> 8) & 0xff) + 7 * ((p >> 16) & 0xff)
}

#[inline(always)]
pub(super) fn luma_of_wsum(s: u32) -> u32 {
    (1023 * s) / 25500
}

/// Score of a pixel: its weighted sum, or 25500 minus it for the darkest; L' grows with it.
#[inline(always)]
pub(super) fn score(p: u32, flip: bool) -> u32 {
    if flip { 25500 - wsum(p) } else { wsum(p) }
}

/// L' (L, or 1023 - L for the darkest) of a score.
#[inline(always)]
pub(super) fn l_of_score(s: u32, flip: bool) -> u32 {
    if flip {
        1023 - luma_of_wsum(25500 - s)
    } else {
        luma_of_wsum(s)
    }
}

pub(super) mod kernels {
    use super::*;
    crate::cpu::multiversion! {
        fn block_max_score(px: &[u32], flip: bool) -> u32 {
            px.iter().fold(0, |m, &p| m.max(score(p, flip)))
        }
    }

    crate::cpu::multiversion! {
        fn pixel_stats(px: &[u32]) -> (u32, u32, u32) {
            let (mut s, mut lo, mut hi) = (0u32, u32::MAX, 0u32);
            for &p in px {
                let w = wsum(p);
                s += luma_of_wsum(w);
                lo = lo.min(w);
                hi = hi.max(w);
            }
            (s, lo, hi)
        }
    }

    crate::cpu::multiversion! {
        fn array_stats(a: &[u32]) -> (u64, u32, u32) {
            let (mut s, mut lo, mut hi) = (0u64, u32::MAX, 0u32);
            for &v in a {
                s += v as u64;
                lo = lo.min(v);
                hi = hi.max(v);
            }
            (s, lo, hi)
        }
    }
}

/// Stats of the elements of `a`, the first at index `base`.
pub(super) fn cpu_array_piece(base: u64, a: &[u32]) -> ArrayPartial {
    let mut p = ArrayPartial::NONE;
    for (k, block) in a.chunks(BLOCK).enumerate() {
        let (s, lo, hi) = kernels::array_stats(block);
        p.sum += s;
        let first = base + (k * BLOCK) as u64;
        // Blocks come in index order: only a strictly better value moves an extreme.
        if lo < p.min || p.argmin == u64::MAX {
            let j = block.iter().position(|&v| v == lo).unwrap_or(0);
            (p.min, p.argmin) = (lo, first + j as u64);
        }
        if hi > p.max || p.argmax == u64::MAX {
            let j = block.iter().position(|&v| v == hi).unwrap_or(0);
            (p.max, p.argmax) = (hi, first + j as u64);
        }
    }
    p
}

pub(super) fn cpu_array_stats(data: &[u32]) -> ArrayPartial {
    data.par_chunks(PIECE)
        .enumerate()
        .map(|(i, c)| cpu_array_piece((i * PIECE) as u64, c))
        .reduce(|| ArrayPartial::NONE, ArrayPartial::combine)
}

pub(super) fn cpu_argbest(view: &crate::image::ImageView<'_>, extreme: Extreme) -> Option<Best> {
    let flip = super::flip(extreme) == 1;
    map_pieces(
        view,
        |base, bytes| {
            let mut best: Option<Best> = None;
            with_u32_blocks(bytes, BLOCK, |offset, block| {
                let l = l_of_score(kernels::block_max_score(block, flip), flip);
                if best.is_none_or(|x| l > x.l)
                    && let Some(j) = block
                        .iter()
                        .position(|&p| l_of_score(score(p, flip), flip) == l)
                {
                    best = Some(Best::new(l, base + (offset + j) as u64, block[j]));
                }
            });
            best
        },
        |a, b| match (a, b) {
            (Some(a), Some(b)) => Some(Best::max(a, b)),
            (a, b) => a.or(b),
        },
    )
    .flatten()
}

pub(super) fn cpu_stats(view: &crate::image::ImageView<'_>) -> (u64, u32, u32) {
    map_pieces(
        view,
        |_, bytes| {
            let (mut sum, mut lo, mut hi) = (0u64, u32::MAX, 0u32);
            // Blocks of 512 keep the u32 block sum below 512 * 1023.
            with_u32_blocks(bytes, BLOCK, |_, block| {
                let (s, l, h) = kernels::pixel_stats(block);
                sum += s as u64;
                lo = lo.min(l);
                hi = hi.max(h);
            });
            (sum, lo, hi)
        },
        |a, b| (a.0 + b.0, a.1.min(b.1), a.2.max(b.2)),
    )
    .map(|(s, lo, hi)| (s, luma_of_wsum(lo), luma_of_wsum(hi)))
    .unwrap_or((0, 0, 0))
}

// ---------------------------------------------------------------------------------------------
// OpenCL path.
