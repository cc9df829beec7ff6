//! The CPU path of the blobs (the executable specification): runs of foreground pixels, strips
//! of rows labelled in parallel by union-find over their runs, strips joined at their seams,
//! then the canonical numbering and the statistics.
//!
//! A strip's runs are numbered in scan order and joined by union with the smaller index as root,
//! so a component's root is its first run, and components numbered in order of their roots are
//! in the scan order of their first pixels; strips in order keep that order across the image,
//! and the seams join components with the smaller number as root again. The statistics are
//! integer sums, the same whatever the order of their additions.

use super::{Acc, Blob, BlobOptions, Weigh};
use crate::error::Result;
use crate::image::RawView;
use crate::spec::Format;
use rayon::prelude::*;

/// The keys of one row (the format's key of each pixel).
pub(super) fn row_keys(format: Format, row: &[u8], out: &mut [u32]) {
    match format {
        Format::Luma8 => {
            for (o, &v) in out.iter_mut().zip(row) {
                *o = v as u32;
            }
        }
        Format::Luma16 => {
            for (o, b) in out.iter_mut().zip(row.chunks_exact(2)) {
                *o = u16::from_ne_bytes([b[0], b[1]]) as u32;
            }
        }
        format => {
            let bpp = format.bytes_per_pixel();
            for (o, px) in out.iter_mut().zip(row.chunks_exact(bpp)) {
                *o = format.order_key(px).unwrap_or(0);
            }
        }
    }
}

/// One strip: its runs (`x0..x1` of row `first_row + r` for runs `row_start[r]..row_start[r +
/// 1]`) and each run's component (numbered in the strip from 0, in scan order).
struct Strip {
    first_row: u32,
    runs: Vec<(u32, u32)>,
    row_start: Vec<u32>,
    comp: Vec<u32>,
    accs: Vec<Acc>,
}

impl Strip {
    fn rows(&self) -> u32 {
        self.row_start.len() as u32 - 1
    }
    fn runs_of_row(&self, r: u32) -> std::ops::Range<usize> {
        self.row_start[r as usize] as usize..self.row_start[r as usize + 1] as usize
    }
}

fn find(parent: &mut [u32], mut a: u32) -> u32 {
    while parent[a as usize] != a {
        let up = parent[parent[a as usize] as usize];
        parent[a as usize] = up;
        a = up;
    }
    a
}

/// Joins the sets of `a` and `b`, the smaller root the root.
fn union(parent: &mut [u32], a: u32, b: u32) {
    let (ra, rb) = (find(parent, a), find(parent, b));
    if ra < rb {
        parent[rb as usize] = ra;
    } else if rb < ra {
        parent[ra as usize] = rb;
    }
}

/// Calls `join(i, j)` for every run `i` of `upper` touching a run `j` of `lower` (adjacent rows;
/// `slack` 1 for 8-connectivity, 0 for 4).
fn touching(
    upper: &[(u32, u32)],
    lower: &[(u32, u32)],
    slack: u32,
    mut join: impl FnMut(usize, usize),
) {
    let (mut i, mut j) = (0, 0);
    while i < upper.len() && j < lower.len() {
        let ((a0, a1), (b0, b1)) = (upper[i], lower[j]);
        // Overlapping columns, or (8-connected) diagonal neighbours at the ends.
        if (a0 as u64) < b1 as u64 + slack as u64 && (b0 as u64) < a1 as u64 + slack as u64 {
            join(i, j);
        }
        // The run that ends first touches no later run of the other row.
        if a1 <= b1 { i += 1 } else { j += 1 }
    }
}

/// Pushes the runs of foreground pixels (keys above `t`) of one row, `x0..x1`, finding them in
/// a bit mask of 64 pixels a word (so that no branch depends on a single pixel).
fn row_runs(
    format: Format,
    row: &[u8],
    t: u32,
    keys: &mut [u32],
    mask: &mut [u64],
    out: &mut Vec<(u32, u32)>,
) {
    fn bits(mut values: impl Iterator<Item = u32>, t: u32, mask: &mut [u64]) {
        for word in mask.iter_mut() {
            let mut m = 0u64;
            for (i, v) in values.by_ref().take(64).enumerate() {
                m |= ((v > t) as u64) << i;
            }
            *word = m;
        }
    }
    let w = keys.len();
    match format {
        Format::Luma8 => mask_u8(&row[..w], t, mask),
        Format::Luma16 => {
            for (word, chunk) in mask.iter_mut().zip(row[..2 * w].chunks(128)) {
                let mut m = 0u64;
                for (i, b) in chunk.chunks_exact(2).enumerate() {
                    m |= ((u16::from_ne_bytes([b[0], b[1]]) as u32 > t) as u64) << i;
                }
                *word = m;
            }
        }
        format => {
            row_keys(format, row, keys);
            bits(keys.iter().copied(), t, mask);
        }
    }
    // Runs from the bits: a run open at a word's end continues into the next.
    let mut open: Option<u32> = None;
    for (k, &word) in mask.iter().enumerate() {
        let base = 64 * k as u32;
        let mut m = word;
        if let Some(x0) = open {
            let ones = (!m).trailing_zeros();
            if ones == 64 {
                continue;
            }
            out.push((x0, base + ones));
            open = None;
            m &= !((1u64 << ones) - 1);
        }
        while m != 0 {
            let s = m.trailing_zeros();
            let ones = (!(m >> s)).trailing_zeros();
            if s + ones >= 64 {
                open = Some(base + s);
                break;
            }
            out.push((base + s, base + s + ones));
            m &= !(((1u64 << ones) - 1) << s);
        }
    }
    if let Some(x0) = open {
        out.push((x0, w as u32));
    }
}

/// The foreground bits of a row of bytes (`v > t`, `t` below 256): 64 a word.
fn mask_u8(row: &[u8], t: u32, mask: &mut [u64]) {
    let whole = row.len() / 64;
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::*;
        // SSE2 (every x86_64): bytes above t as the sign-flipped signed comparison, 16 a
        // movemask.
        let bias = (t as u8 ^ 0x80) as i8;
        for (k, word) in mask[..whole].iter_mut().enumerate() {
            let mut m = 0u64;
            for q in 0..4 {
                let at = 64 * k + 16 * q;
                // SAFETY: at + 16 <= 64 * whole <= row.len(); unaligned loads; SSE2 is part of
                // x86_64.
                let bits = unsafe {
                    let v = _mm_loadu_si128(row.as_ptr().add(at) as *const __m128i);
                    let v = _mm_xor_si128(v, _mm_set1_epi8(-128));
                    _mm_movemask_epi8(_mm_cmpgt_epi8(v, _mm_set1_epi8(bias))) as u16
                };
                m |= (bits as u64) << (16 * q);
            }
            *word = m;
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    for (word, chunk) in mask[..whole].iter_mut().zip(row.chunks_exact(64)) {
        let mut m = 0u64;
        for (i, &v) in chunk.iter().enumerate() {
            m |= ((v as u32 > t) as u64) << i;
        }
        *word = m;
    }
    if whole < mask.len() {
        let mut m = 0u64;
        for (i, &v) in row[64 * whole..].iter().enumerate() {
            m |= ((v as u32 > t) as u64) << i;
        }
        mask[whole] = m;
    }
}

/// Adds the runs `runs` of row `y` (their components `comp`) to the components' sums.
#[allow(clippy::too_many_arguments)]
fn add_row(
    format: Format,
    row: &[u8],
    keys: &mut [u32],
    runs: &[(u32, u32)],
    comp: &[u32],
    accs: &mut [Acc],
    y: u32,
    weigh: Weigh,
) {
    match weigh {
        Weigh::Int { background } => {
            let weight = |k: u32| (k - background) as u64;
            match format {
                Format::Luma8 => {
                    for (&run, &c) in runs.iter().zip(comp) {
                        accs[c as usize].add_run(|x| row[x] as u32, weight, run, y);
                    }
                }
                Format::Luma16 => {
                    for (&run, &c) in runs.iter().zip(comp) {
                        let key =
                            |x: usize| u16::from_ne_bytes([row[2 * x], row[2 * x + 1]]) as u32;
                        accs[c as usize].add_run(key, weight, run, y);
                    }
                }
                format => {
                    row_keys(format, row, keys);
                    for (&run, &c) in runs.iter().zip(comp) {
                        accs[c as usize].add_run(|x| keys[x], weight, run, y);
                    }
                }
            }
        }
        Weigh::F32 { .. } => {
            row_keys(format, row, keys);
            for (&run, &c) in runs.iter().zip(comp) {
                accs[c as usize].add_run(|x| keys[x], |k| weigh.weight(k), run, y);
            }
        }
    }
}

/// Labels rows `first_row..first_row + rows` of `view`: runs, their components and the
/// components' sums.
fn label_strip(
    view: &RawView<'_>,
    t: u32,
    opts: &BlobOptions,
    weigh: Weigh,
    (first_row, rows): (u32, u32),
) -> Strip {
    let w = view.width as usize;
    let mut keys = vec![0u32; w];
    let mut mask = vec![0u64; w.div_ceil(64)];
    let mut runs: Vec<(u32, u32)> = Vec::new();
    let mut row_start = Vec::with_capacity(rows as usize + 1);
    let slack = opts.connectivity.slack();
    let mut parent: Vec<u32> = Vec::new();
    for y in first_row..first_row + rows {
        let start = runs.len();
        row_start.push(start as u32);
        row_runs(view.format, view.row(y), t, &mut keys, &mut mask, &mut runs);
        parent.extend(start as u32..runs.len() as u32);
        if y > first_row {
            let prev = row_start[row_start.len() - 2] as usize;
            let (before, now) = runs.split_at(start);
            touching(&before[prev..], now, slack, |i, j| {
                union(&mut parent, (prev + i) as u32, (start + j) as u32)
            });
        }
    }
    row_start.push(runs.len() as u32);
    // Roots are first runs (the smaller index wins): a run's parent precedes it, so one pass in
    // order resolves every run, and the roots in order are the components in scan order.
    let mut comp = vec![0u32; runs.len()];
    let mut count = 0u32;
    for i in 0..runs.len() {
        let p = parent[i] as usize;
        if p == i {
            comp[i] = count;
            count += 1;
        } else {
            parent[i] = parent[p];
            comp[i] = comp[parent[i] as usize];
        }
    }
    let mut accs = vec![Acc::EMPTY; count as usize];
    let strip = Strip {
        first_row,
        runs,
        row_start,
        comp,
        accs: Vec::new(),
    };
    for r in 0..rows {
        let range = strip.runs_of_row(r);
        if range.is_empty() {
            continue;
        }
        let (runs, comp) = (&strip.runs[range.clone()], &strip.comp[range]);
        let y = first_row + r;
        add_row(
            view.format,
            view.row(y),
            &mut keys,
            runs,
            comp,
            &mut accs,
            y,
            weigh,
        );
    }
    Strip { accs, ..strip }
}

/// The largest key above `t` of `view` (an order key), `None` without any.
fn largest_above(view: &RawView<'_>, t: u32) -> Option<u32> {
    (0..view.height)
        .into_par_iter()
        .map_init(
            || vec![0u32; view.width as usize],
            |keys, y| {
                row_keys(view.format, view.row(y), keys);
                keys.iter().copied().filter(|&k| k > t).max()
            },
        )
        .max()
        .flatten()
}

/// The blobs of `view` (keys above `t`), their label image when `labels`, and their weights.
/// Errors: those of [`Weigh::of`] (f32 images).
pub(super) fn cpu_blobs(
    view: &RawView<'_>,
    t: u32,
    opts: &BlobOptions,
    labels: bool,
) -> Result<(Vec<Blob>, Option<Vec<u32>>, Weigh)> {
    let largest = view
        .format
        .is_float()
        .then(|| largest_above(view, t))
        .flatten();
    let weigh = Weigh::of(view.format, opts, largest)?;
    let (w, h) = (view.width, view.height);
    let strips_wanted = (rayon::current_num_threads() * 4).max(1) as u32;
    let rows = h.div_ceil(strips_wanted).max(16);
    let mut strips: Vec<Strip> = (0..h.div_ceil(rows))
        .into_par_iter()
        .map(|s| {
            let first = s * rows;
            label_strip(view, t, opts, weigh, (first, rows.min(h - first)))
        })
        .collect();
    // Global component numbers: a strip's components after the strips before it.
    let mut offsets = Vec::with_capacity(strips.len());
    let mut total = 0usize;
    for s in &strips {
        offsets.push(total);
        total += s.accs.len();
    }
    let mut parent: Vec<u32> = (0..total as u32).collect();
    let slack = opts.connectivity.slack();
    for s in 1..strips.len() {
        let (up, down) = (&strips[s - 1], &strips[s]);
        let upper = &up.runs[up.runs_of_row(up.rows() - 1)];
        let lower = &down.runs[down.runs_of_row(0)];
        let (ur, lr) = (
            up.runs_of_row(up.rows() - 1).start,
            down.runs_of_row(0).start,
        );
        touching(upper, lower, slack, |i, j| {
            let a = offsets[s - 1] + up.comp[ur + i] as usize;
            let b = offsets[s] + down.comp[lr + j] as usize;
            union(&mut parent, a as u32, b as u32);
        });
    }
    let mut accs: Vec<Acc> = Vec::with_capacity(total);
    for s in &mut strips {
        accs.append(&mut s.accs);
    }
    // Roots precede their members: resolve in order, gather the members' sums into the roots,
    // then number the roots that pass the area rule.
    for g in 0..total {
        let p = parent[g] as usize;
        if p != g {
            parent[g] = parent[p];
            let a = accs[g];
            accs[parent[g] as usize].merge(&a);
        }
    }
    let mut number = vec![0u32; total];
    let mut blobs = Vec::new();
    for g in 0..total {
        let root = parent[g] as usize;
        if root == g {
            if opts.keeps(accs[g].area) {
                blobs.push(accs[g].blob(blobs.len() as u32 + 1));
                number[g] = blobs.len() as u32;
            }
        } else {
            number[g] = number[root];
        }
    }
    let labels = labels.then(|| {
        let mut out = crate::cpu::alloc_zeroed::<u32>(w as usize * h as usize);
        let mut rest: &mut [u32] = &mut out;
        let mut pieces = Vec::with_capacity(strips.len());
        for (s, strip) in strips.iter().enumerate() {
            let (mine, after) = rest.split_at_mut(strip.rows() as usize * w as usize);
            pieces.push((s, strip, mine));
            rest = after;
        }
        pieces.into_par_iter().for_each(|(s, strip, out)| {
            for r in 0..strip.rows() {
                let row = &mut out[(r * w) as usize..((r + 1) * w) as usize];
                for k in strip.runs_of_row(r) {
                    let (x0, x1) = strip.runs[k];
                    let n = number[offsets[s] + strip.comp[k] as usize];
                    row[x0 as usize..x1 as usize].fill(n);
                }
            }
        });
        debug_assert!(strips.iter().all(|s| s.first_row < h));
        out
    });
    Ok((blobs, labels, weigh))
}
