//! The CPU path of the blobs (the executable specification): runs of foreground pixels, strips
//! of rows labelled in parallel by union-find over their runs, strips joined at their seams,
//! then the canonical numbering and the statistics.
//!
//! A strip's runs are numbered in scan order and joined by union with the smaller index as root,
//! so a component's root is its first run, and components numbered in order of their roots are
//! in the scan order of their first pixels; strips in order keep that order across the image,
//! and the seams join components with the smaller number as root again. The statistics are
//! integer sums, the same whatever the order of their additions.

use super::sums::{self, Sums};
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
/// a bit mask of 64 pixels a word (so that no branch depends on a single pixel); `edges` holds
/// `width + 1` columns.
#[inline(never)]
fn row_runs(
    format: Format,
    row: &[u8],
    t: u32,
    keys: &mut [u32],
    mask: &mut [u64],
    edges: &mut [u32],
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
    // Runs from the bits' edges (a pixel unlike its left neighbour): starts and ends in turn,
    // a run open at a word's end continuing into the next.
    let mut n = 0;
    let mut carry = 0u64;
    for (k, &word) in mask.iter().enumerate() {
        let base = 64 * k as u32;
        let mut e = word ^ (word << 1 | carry);
        carry = word >> 63;
        while e != 0 {
            edges[n] = base + e.trailing_zeros();
            n += 1;
            e &= e - 1;
        }
    }
    if n % 2 == 1 {
        edges[n] = w as u32;
        n += 1;
    }
    out.extend(edges[..n].chunks_exact(2).map(|e| (e[0], e[1])));
}

/// The foreground bits of a row of bytes (`v > t`, `t` below 256): 64 a word.
#[inline(never)]
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

/// Unites each run of `lower` (run indices from `base`, each its own parent yet) with the runs
/// of `upper`, the row above (indices from `up`), that it touches (`slack` 1 for
/// 8-connectivity, 0 for 4): the runs of both rows in one walk, as [`touching`].
#[inline(never)]
fn link(
    upper: &[(u32, u32)],
    up: u32,
    lower: &[(u32, u32)],
    base: u32,
    slack: u32,
    parent: &mut [u32],
) {
    let slack = slack as u64;
    let mut i = 0;
    for (j, &(b0, b1)) in lower.iter().enumerate() {
        let mut root = base + j as u32;
        // Runs above ending before this one's reach touch no run of this row from here on.
        while i < upper.len() && upper[i].1 as u64 + slack <= b0 as u64 {
            i += 1;
        }
        while i < upper.len() && (upper[i].0 as u64) < b1 as u64 + slack {
            // The smaller root the root: a run's parent precedes it.
            let r = find(parent, up + i as u32);
            if r < root {
                parent[root as usize] = r;
                root = r;
            } else if r > root {
                parent[r as usize] = root;
            }
            // A run above ending after this one may touch the next one too.
            if upper[i].1 > b1 {
                break;
            }
            i += 1;
        }
    }
}

/// Labels rows `first_row..first_row + rows` of `view`: runs, their components and the
/// components' sums (in [`Sums`] where `fast`, of integer keys).
fn label_strip(
    view: &RawView<'_>,
    t: u32,
    opts: &BlobOptions,
    (weigh, fast): (Weigh, bool),
    (first_row, rows): (u32, u32),
) -> Strip {
    let w = view.width as usize;
    let mut keys = vec![0u32; w];
    let mut mask = vec![0u64; w.div_ceil(64)];
    let mut edges = vec![0u32; w + 1];
    // Room for every run the strip can have (up to 2^22), on huge pages where the kernel has
    // them: far fewer page faults than growing.
    let most = (rows as usize * (w / 2 + 1)).min(1 << 22);
    let mut runs: Vec<(u32, u32)> = Vec::with_capacity(most);
    let mut parent: Vec<u32> = Vec::with_capacity(most);
    crate::cpu::advise_huge_pages(runs.as_ptr() as usize, most * 8);
    crate::cpu::advise_huge_pages(parent.as_ptr() as usize, most * 4);
    let mut row_start = Vec::with_capacity(rows as usize + 1);
    let slack = opts.connectivity.slack();
    for y in first_row..first_row + rows {
        let start = runs.len();
        row_start.push(start as u32);
        let row = view.row(y);
        row_runs(
            view.format,
            row,
            t,
            &mut keys,
            &mut mask,
            &mut edges,
            &mut runs,
        );
        parent.extend(start as u32..runs.len() as u32);
        if y > first_row {
            let prev = row_start[row_start.len() - 2] as usize;
            let (before, now) = runs.split_at(start);
            link(
                &before[prev..],
                prev as u32,
                now,
                start as u32,
                slack,
                &mut parent,
            );
        }
    }
    row_start.push(runs.len() as u32);
    // Roots are first runs (the smaller index wins): a run's parent precedes it, so one pass in
    // order turns each parent into its component's number (the roots numbered in order: the
    // components in scan order).
    let mut comp = parent;
    let mut count = 0u32;
    for i in 0..comp.len() {
        let p = comp[i] as usize;
        if p == i {
            comp[i] = count;
            count += 1;
        } else {
            // p < i: its number already.
            comp[i] = comp[p];
        }
    }
    let strip = Strip {
        first_row,
        runs,
        row_start,
        comp,
        accs: Vec::new(),
    };
    let accs = match (weigh, fast) {
        (Weigh::Int { background }, true) => {
            fast_sums(view, &strip, &mut keys, background, count as usize)
        }
        _ => {
            let mut accs = vec![Acc::EMPTY; count as usize];
            for r in 0..rows {
                let range = strip.runs_of_row(r);
                if range.is_empty() {
                    continue;
                }
                let (runs, comp) = (&strip.runs[range.clone()], &strip.comp[range]);
                let y = first_row + r;
                let row = view.row(y);
                add_row(view.format, row, &mut keys, runs, comp, &mut accs, y, weigh);
            }
            accs
        }
    };
    Strip { accs, ..strip }
}

/// The sums of a strip's `count` components of integer keys (weights the keys less
/// `background`) in [`Sums`] (the strip within [`sums::fits`]), as [`Acc`]s.
#[inline(never)]
fn fast_sums(
    view: &RawView<'_>,
    strip: &Strip,
    keys: &mut [u32],
    background: u32,
    count: usize,
) -> Vec<Acc> {
    let w = view.width;
    let mut sums = vec![Sums::EMPTY; count];
    for r in 0..strip.rows() {
        let range = strip.runs_of_row(r);
        if range.is_empty() {
            continue;
        }
        let (runs, comp) = (&strip.runs[range.clone()], &strip.comp[range]);
        let y = strip.first_row + r;
        let row = view.row(y);
        let mut add = |k: usize, (s, p): ((u64, u64), (u32, u32))| {
            sums[comp[k] as usize].add(runs[k], y, r, w, s, p)
        };
        match view.format {
            Format::Luma8 => {
                for (k, &run) in runs.iter().enumerate() {
                    // Runs of at most 8 pixels whose 8 bytes lie in the row: without a loop.
                    let s = match run.1 - run.0 <= 8 && run.0 as usize + 8 <= row.len() {
                        true => sums::short_u8(row, background, run),
                        false => sums::run_sums(|x| row[x] as u32, background, run),
                    };
                    add(k, s);
                }
            }
            Format::Luma16 => {
                let key = |x: usize| u16::from_ne_bytes([row[2 * x], row[2 * x + 1]]) as u32;
                for (k, &run) in runs.iter().enumerate() {
                    add(k, sums::run_sums(key, background, run));
                }
            }
            format => {
                row_keys(format, row, keys);
                for (k, &run) in runs.iter().enumerate() {
                    add(k, sums::run_sums(|x| keys[x], background, run));
                }
            }
        }
    }
    sums.iter()
        .map(|s| s.acc(strip.first_row, w, background))
        .collect()
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
    let fast = match (weigh, view.format.max_key()) {
        (Weigh::Int { background }, Some(max)) => sums::fits(w, rows, max - background),
        _ => false,
    };
    let mut strips: Vec<Strip> = (0..h.div_ceil(rows))
        .into_par_iter()
        .map(|s| {
            let first = s * rows;
            label_strip(view, t, opts, (weigh, fast), (first, rows.min(h - first)))
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
    let mut blobs = super::blob_vec(total);
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
                    let (x0, x1) = (strip.runs[k].0 as usize, strip.runs[k].1 as usize);
                    let n = number[offsets[s] + strip.comp[k] as usize];
                    // A run of at most 8 with 8 more columns in the row after it: 8 labels from
                    // its start, then 8 zeros from its end (over the labels past it; the runs
                    // after it are written later).
                    if x1 - x0 <= 8 && x1 + 8 <= row.len() {
                        row[x0..x0 + 8].copy_from_slice(&[n; 8]);
                        row[x1..x1 + 8].copy_from_slice(&[0; 8]);
                    } else {
                        row[x0..x1].fill(n);
                    }
                }
            }
        });
        debug_assert!(strips.iter().all(|s| s.first_row < h));
        out
    });
    Ok((blobs, labels, weigh))
}
