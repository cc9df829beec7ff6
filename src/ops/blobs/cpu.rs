//! The CPU path of the blobs (the executable specification): runs of foreground pixels, strips
//! of rows labelled in parallel by union-find over their runs, strips joined at their seams,
//! then the canonical numbering and the statistics.
//!
//! A strip's runs are numbered in scan order and joined by union with the smaller index as root,
//! so a component's root is its first run, and components numbered in order of their roots are
//! in the scan order of their first pixels; strips in order keep that order across the image,
//! and the seams join components with the smaller number as root again. The statistics are
//! integer sums, the same whatever the order of their additions.

use super::{Acc, Blob, BlobOptions};
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

/// Labels rows `first_row..first_row + rows` of `view`: runs, their components and the
/// components' sums.
fn label_strip(view: &RawView<'_>, t: u32, opts: &BlobOptions, first_row: u32, rows: u32) -> Strip {
    let w = view.width as usize;
    let mut keys = vec![0u32; w];
    let mut runs: Vec<(u32, u32)> = Vec::new();
    let mut row_start = Vec::with_capacity(rows as usize + 1);
    let mut parent: Vec<u32> = Vec::new();
    let slack = opts.connectivity.slack();
    for y in first_row..first_row + rows {
        row_keys(view.format, view.row(y), &mut keys);
        let start = runs.len();
        row_start.push(start as u32);
        let mut x = 0usize;
        while x < w {
            if keys[x] > t {
                let x0 = x;
                while x < w && keys[x] > t {
                    x += 1;
                }
                let id = runs.len() as u32;
                runs.push((x0 as u32, x as u32));
                parent.push(id);
            } else {
                x += 1;
            }
        }
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
    let mut strip = Strip {
        first_row,
        runs,
        row_start,
        comp,
        accs: Vec::new(),
    };
    for r in 0..rows {
        let y = first_row + r;
        let range = strip.runs_of_row(r);
        if range.is_empty() {
            continue;
        }
        row_keys(view.format, view.row(y), &mut keys);
        for k in range {
            let (x0, x1) = strip.runs[k];
            accs[strip.comp[k] as usize].add_run(&keys, x0, x1, y, opts.background);
        }
    }
    strip.accs = accs;
    strip
}

/// The blobs of `view` (integer keys above `t`), and their label image when `opts.labels`.
pub(super) fn cpu_blobs(
    view: &RawView<'_>,
    t: u32,
    opts: &BlobOptions,
) -> (Vec<Blob>, Option<Vec<u32>>) {
    let (w, h) = (view.width, view.height);
    let strips_wanted = (rayon::current_num_threads() * 4).max(1) as u32;
    let rows = h.div_ceil(strips_wanted).max(16);
    let mut strips: Vec<Strip> = (0..h.div_ceil(rows))
        .into_par_iter()
        .map(|s| {
            let first = s * rows;
            label_strip(view, t, opts, first, rows.min(h - first))
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
    let labels = opts.labels.then(|| {
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
    (blobs, labels)
}
