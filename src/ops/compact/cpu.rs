//! The CPU path of the compaction: the executable specification.

use super::*;

pub(super) mod kernels {
    use super::wsum;

    crate::cpu::multiversion! {
        fn count_kept(px: &[u32], wmin: u32) -> usize {
            px.iter().map(|&p| (wsum(p) >= wmin) as usize).sum::<usize>()
        }
    }

    crate::cpu::multiversion! {
        fn bins_of(px: &[u32], wmin: u32, out: &mut [u16]) -> () {
            // bin = 1023 - L for a kept pixel, 1024 for a dropped one.
            for (o, &p) in out.iter_mut().zip(px) {
                let s = wsum(p);
                let bin = 1023 - (1023 * s) / 25500;
                *o = if s >= wmin { bin as u16 } else { 1024 };
            }
        }
    }
}

/// A run of contiguous pixels: the scan index of its first pixel, and its bytes.
pub(super) type Piece<'a> = (u64, &'a [u8]);

pub(super) fn pieces<'a>(view: &ImageView<'a>) -> Vec<Piece<'a>> {
    if let Some(bytes) = view.packed_bytes() {
        return bytes
            .chunks(PIECE * 4)
            .enumerate()
            .map(|(i, c)| ((i * PIECE) as u64, c))
            .collect();
    }
    let w = view.width() as u64;
    (0..view.height())
        .flat_map(|y| {
            view.row(y)
                .chunks(PIECE * 4)
                .enumerate()
                .map(move |(i, c)| (y as u64 * w + (i * PIECE) as u64, c))
        })
        .collect()
}

/// Pixels per block of the CPU loops (the positions of a block's kept pixels fit a u16).
pub(super) const BLOCK: usize = 1024;

/// Writes the positions of the kept pixels of `block` to `kept`, without a branch per pixel
/// (half the pixels kept at random would mispredict half the time); returns how many.
#[inline(always)]
pub(super) fn kept_positions(block: &[u32], wmin: u32, kept: &mut [u16; BLOCK]) -> usize {
    let mut k = 0;
    for (j, &p) in block.iter().enumerate() {
        kept[k] = j as u16;
        k += (wsum(p) >= wmin) as usize;
    }
    k
}

/// Calls `f(x, y, pixel, slot)` for each kept pixel of a piece, in scan order (x and y kept
/// running, without a division per pixel); `slot` is the pixel's bin `1023 - L` when `binned`,
/// else 0.
#[inline(always)]
pub(super) fn for_each_kept(
    (base, bytes): Piece<'_>,
    width: u32,
    wmin: u32,
    binned: bool,
    mut f: impl FnMut(u32, u32, u32, usize),
) {
    let w = width as u64;
    let mut y = (base / w) as u32;
    let mut row_start = y as u64 * w;
    let mut kept = [0u16; BLOCK];
    let mut bins = [0u16; BLOCK];
    with_u32_blocks(bytes, BLOCK, |offset, block| {
        let k = if binned {
            let bins = &mut bins[..block.len()];
            kernels::bins_of(block, wmin, bins);
            let mut k = 0;
            for (j, &b) in bins.iter().enumerate() {
                kept[k] = j as u16;
                k += (b < 1024) as usize;
            }
            k
        } else {
            kept_positions(block, wmin, &mut kept)
        };
        for &j in &kept[..k] {
            let p = block[j as usize];
            let i = base + (offset + j as usize) as u64;
            while i >= row_start + w {
                row_start += w;
                y += 1;
            }
            let slot = if binned { bins[j as usize] as usize } else { 0 };
            f((i - row_start) as u32, y, p, slot);
        }
    });
}

/// A pointer shared by the tasks that fill disjoint elements of one buffer.
pub(super) struct SharedOut<T>(*mut T);
impl<T> Clone for SharedOut<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for SharedOut<T> {}
// SAFETY: the tasks write disjoint elements (their offsets come from an exclusive scan of
// their counts) and the buffer outlives the parallel loop.
unsafe impl<T: Send> Send for SharedOut<T> {}
unsafe impl<T: Send> Sync for SharedOut<T> {}

impl<T> SharedOut<T> {
    /// # Safety
    /// `i` is inside the buffer and no other task writes element `i`.
    #[inline(always)]
    unsafe fn write(self, i: usize, v: T) {
        // SAFETY: guaranteed by the caller.
        unsafe { self.0.add(i).write(v) }
    }
}

/// Steps (1) and (2) of the CPU compaction: the pieces, and where each piece (each piece's
/// bin, for the sort) starts in the output; plus the number of kept pixels.
pub(super) struct Plan<'a> {
    pub(super) pieces: Vec<Piece<'a>>,
    pub(super) starts: Vec<Vec<usize>>,
    pub(super) total: usize,
    pub(super) wmin: u32,
    pub(super) width: u32,
    pub(super) sorted: bool,
}

pub(super) fn cpu_plan<'a>(view: &ImageView<'a>, threshold: u16, sorted: bool) -> Plan<'a> {
    let wmin = wsum_min(threshold);
    let pieces = if wmin > 25500 {
        Vec::new()
    } else {
        pieces(view)
    };
    // (1) counts, per piece (per piece and bin for the sort);
    // (2) an exclusive scan of them: each piece's (and bin's) first output position.
    let (total, starts) = if sorted {
        let nbins = 1023 - threshold as usize;
        let hists: Vec<Vec<u32>> = pieces
            .par_iter()
            .map(|&(_, bytes)| {
                // Bins of a block first (a vectorised loop; 1024 for a dropped pixel), then
                // two histograms, so that runs of equal luminance do not wait on each other.
                let mut h = vec![0u32; 2 * 2048];
                let mut bins = [0u16; BLOCK];
                with_u32_blocks(bytes, BLOCK, |_, block| {
                    let bins = &mut bins[..block.len()];
                    kernels::bins_of(block, wmin, bins);
                    let (h0, h1) = h.split_at_mut(2048);
                    let mut pairs = bins.chunks_exact(2);
                    for q in &mut pairs {
                        h0[q[0] as usize & 2047] += 1;
                        h1[q[1] as usize & 2047] += 1;
                    }
                    for &b in pairs.remainder() {
                        h0[b as usize & 2047] += 1;
                    }
                });
                let (h0, h1) = h.split_at(2048);
                h0[..1024].iter().zip(h1).map(|(a, b)| a + b).collect()
            })
            .collect();
        let mut starts = vec![vec![0usize; nbins]; pieces.len()];
        let mut run = 0usize;
        for b in 0..nbins {
            for (s, h) in starts.iter_mut().zip(&hists) {
                s[b] = run;
                run += h[b] as usize;
            }
        }
        (run, starts)
    } else {
        let counts: Vec<usize> = pieces
            .par_iter()
            .map(|&(_, bytes)| {
                let mut c = 0;
                with_u32_blocks(bytes, BLOCK, |_, block| {
                    c += kernels::count_kept(block, wmin)
                });
                c
            })
            .collect();
        let mut run = 0usize;
        let starts = counts
            .iter()
            .map(|&c| {
                let s = run;
                run += c;
                vec![s]
            })
            .collect();
        (run, starts)
    };
    Plan {
        pieces,
        starts,
        total,
        wmin,
        width: view.width(),
        sorted,
    }
}

impl Plan<'_> {
    /// (3): each piece writes `make(x, y, pixel)` of its kept pixels from its offsets, in
    /// parallel, to elements `0..total` of `out`.
    ///
    /// # Safety
    /// `out` points to at least `total` writable elements of `T`.
    unsafe fn write<T: Send>(self, out: SharedOut<T>, make: impl Fn(u32, u32, u32) -> T + Sync) {
        let (width, wmin, sorted) = (self.width, self.wmin, self.sorted);
        self.pieces
            .par_iter()
            .zip(self.starts)
            .for_each(|(&piece, mut next)| {
                for_each_kept(piece, width, wmin, sorted, |x, y, p, bin| {
                    let slot = &mut next[bin];
                    // SAFETY: this piece owns positions [start, start + count) of each of its
                    // bins (or of the piece) and writes exactly `count` pixels there (the same
                    // test as the counts); all of them are below `total`.
                    unsafe { out.write(*slot, make(x, y, p)) };
                    *slot += 1;
                });
            });
    }
}

/// Kept pixels of `view` as `make(x, y, pixel)`, in scan order or sorted by luminance
/// descending (stable).
pub(super) fn cpu_compact<T: Send>(
    view: &ImageView<'_>,
    threshold: u16,
    sorted: bool,
    make: impl Fn(u32, u32, u32) -> T + Sync,
) -> Vec<T> {
    let plan = cpu_plan(view, threshold, sorted);
    let total = plan.total;
    let mut out: Vec<T> = big_vec(total);
    // SAFETY: the capacity is `total`.
    unsafe { plan.write(SharedOut(out.as_mut_ptr()), make) };
    // SAFETY: `write` wrote every position below `total` exactly once.
    unsafe { out.set_len(total) };
    out
}

/// The compacted image's bytes: kept pixels first, zeros after.
pub(super) fn cpu_compacted_bytes(view: &ImageView<'_>, threshold: u16, sorted: bool) -> Vec<u8> {
    let mut bytes = alloc_zeroed::<u8>(view.pixel_count() as usize * 4);
    let plan = cpu_plan(view, threshold, sorted);
    // SAFETY: `bytes` holds pixel_count >= total elements of [u8; 4] (alignment 1).
    unsafe {
        plan.write(SharedOut(bytes.as_mut_ptr() as *mut [u8; 4]), |_, _, p| {
            p.to_le_bytes()
        })
    };
    bytes
}
