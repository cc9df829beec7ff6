//! The CPU path of the histograms: the executable specification.

use super::*;

/// Distance between the two sub-tables of a partial histogram, in counters: 1024 plus 16, so
/// that the two copies are not a multiple of 4 KiB apart (the CPU's store-to-load forwarding
/// would take them for each other).
pub(super) const SUB: usize = BINS + 16;

/// A partial histogram: two sub-tables, even pixels counted into the first, odd into the second.
pub(super) type Tables = [[u32; SUB]; 2];

/// Pixels whose luminance is computed at once before they are counted.
pub(super) const LUMA_BLOCK: usize = 512;

#[inline(always)]
pub(super) fn bump_rgba(t: &mut [u32; SUB], p: u32) {
    t[(p & 0xff) as usize] += 1;
    t[256 + ((p >> 8) & 0xff) as usize] += 1;
    t[512 + ((p >> 16) & 0xff) as usize] += 1;
    t[768 + (p >> 24) as usize] += 1;
}

pub(super) mod kernels {
    use super::*;
    use crate::spec::luma_u32;

    crate::cpu::multiversion! {
        fn count_rgba(bytes: &[u8], t: &mut Tables) -> usize {
            let [t0, t1] = t;
            let mut pairs = bytes.chunks_exact(8);
            for c in &mut pairs {
                bump_rgba(t0, u32::from_le_bytes([c[0], c[1], c[2], c[3]]));
                bump_rgba(t1, u32::from_le_bytes([c[4], c[5], c[6], c[7]]));
            }
            for c in pairs.remainder().chunks_exact(4) {
                bump_rgba(t0, u32::from_le_bytes([c[0], c[1], c[2], c[3]]));
            }
            bytes.len() / 4
        }
    }

    crate::cpu::multiversion! {
        fn count_luma(px: &[u32], t: &mut Tables) -> usize {
            let [t0, t1] = t;
            let mut l = [0u16; LUMA_BLOCK];
            for block in px.chunks(LUMA_BLOCK) {
                let l = &mut l[..block.len()];
                for (d, &p) in l.iter_mut().zip(block) {
                    *d = luma_u32(p) as u16;
                }
                let mut pairs = l.chunks_exact(2);
                for c in &mut pairs {
                    t0[(c[0] & 1023) as usize] += 1;
                    t1[(c[1] & 1023) as usize] += 1;
                }
                for &v in pairs.remainder() {
                    t0[(v & 1023) as usize] += 1;
                }
            }
            px.len()
        }
    }
}

pub(super) fn new_tables() -> Box<Tables> {
    Box::new([[0; SUB]; 2])
}

pub(super) fn add_tables(mut a: Box<Tables>, b: Box<Tables>) -> Box<Tables> {
    for (x, y) in a.iter_mut().zip(b.iter()) {
        for (p, q) in x.iter_mut().zip(y.iter()) {
            *p += q;
        }
    }
    a
}

/// Counts the pixels of `bytes` (whole pixels, any alignment) into `t`.
pub(super) fn count_bytes(t: &mut Tables, bytes: &[u8], kind: Kind) {
    match kind {
        Kind::Rgba => {
            kernels::count_rgba(bytes, t);
        }
        Kind::Luminance => crate::cpu::with_u32_blocks(bytes, 1024, |_, px| {
            kernels::count_luma(px, t);
        }),
    }
}

/// Folds the image in parallel into per-task partial histograms and adds them up: packed
/// images in equal pieces whatever their shape, padded ones row by row.
pub(super) fn cpu_histogram(view: &ImageView<'_>, kind: Kind) -> [u32; BINS] {
    let fold = |mut t: Box<Tables>, bytes: &[u8]| {
        count_bytes(&mut t, bytes, kind);
        t
    };
    let total = if view.pixel_count() == 0 {
        None
    } else if let Some(bytes) = view.packed_bytes() {
        bytes
            .par_chunks(PIECE * 4)
            .fold(new_tables, fold)
            .reduce_with(add_tables)
    } else {
        (0..view.height())
            .into_par_iter()
            .fold(new_tables, |t, y| fold(t, view.row(y)))
            .reduce_with(add_tables)
    };
    let mut out = [0u32; BINS];
    if let Some(t) = total {
        for (b, o) in out.iter_mut().enumerate() {
            *o = t[0][b] + t[1][b];
        }
    }
    out
}

// ---------------------------------------------------------------------------------------------
// OpenCL path.
