//! Shared by the blobs' tests (tests/blobs.rs, tests/blobs_f32.rs): the reference of
//! docs/SPEC.md ("Blobs"), the adversarial masks, the options' strategy, and the f32 weights'
//! exponent and floors in f64.

use super::splitmix;
use clpix::{Blob, BlobOptions, Connectivity};
use proptest::prelude::*;

/// The reference: labels by flood fill in scan order, sums pixel by pixel, areas filtered, the
/// survivors renumbered in order; a pixel's weight its key less the background.
pub fn reference(
    keys: &[u32],
    w: u32,
    h: u32,
    t: u32,
    opts: &BlobOptions,
) -> (Vec<Blob>, Vec<u32>) {
    let bg = opts.background;
    reference_weighed(keys, (w, h), t, opts, |k| (k - bg) as u64, false)
}

/// [`reference`] with a key's weight `weight(key)`; of f32 keys (`float`) the key sum is the
/// weights'.
pub fn reference_weighed(
    keys: &[u32],
    (w, h): (u32, u32),
    t: u32,
    opts: &BlobOptions,
    weight: impl Fn(u32) -> u64,
    float: bool,
) -> (Vec<Blob>, Vec<u32>) {
    let (wu, hu) = (w as usize, h as usize);
    let mut label = vec![0u32; wu * hu];
    let mut blobs = Vec::new();
    let mut members: Vec<Vec<usize>> = Vec::new();
    for start in 0..wu * hu {
        if keys[start] <= t || label[start] != 0 {
            continue;
        }
        let id = members.len() as u32 + 1;
        let mut stack = vec![start];
        label[start] = id;
        let mut mine = Vec::new();
        while let Some(i) = stack.pop() {
            mine.push(i);
            let (x, y) = ((i % wu) as i64, (i / wu) as i64);
            for dy in -1i64..=1 {
                for dx in -1i64..=1 {
                    let diagonal = dx != 0 && dy != 0;
                    if (dx == 0 && dy == 0) || (diagonal && opts.connectivity == Connectivity::Four)
                    {
                        continue;
                    }
                    let (nx, ny) = (x + dx, y + dy);
                    if nx < 0 || ny < 0 || nx >= w as i64 || ny >= h as i64 {
                        continue;
                    }
                    let j = ny as usize * wu + nx as usize;
                    if keys[j] > t && label[j] == 0 {
                        label[j] = id;
                        stack.push(j);
                    }
                }
            }
        }
        mine.sort_unstable();
        members.push(mine);
    }
    let mut renumber = vec![0u32; members.len() + 1];
    for (m, pixels) in members.iter().enumerate() {
        let area = pixels.len() as u64;
        if area < opts.min_area || area > opts.max_area {
            continue;
        }
        let mut b = Blob {
            label: blobs.len() as u32 + 1,
            area,
            min_x: u32::MAX,
            min_y: u32::MAX,
            max_x: 0,
            max_y: 0,
            first_x: 0,
            key_sum: 0,
            weight_sum: 0,
            weighted_x: 0,
            weighted_y: 0,
            peak_x: 0,
            peak_y: 0,
            peak_key: 0,
        };
        b.first_x = (pixels[0] % wu) as u32;
        for &i in pixels {
            let (x, y, k) = ((i % wu) as u32, (i / wu) as u32, keys[i]);
            b.min_x = b.min_x.min(x);
            b.max_x = b.max_x.max(x);
            b.min_y = b.min_y.min(y);
            b.max_y = b.max_y.max(y);
            let wgt = weight(k);
            b.key_sum += if float { wgt } else { k as u64 };
            b.weight_sum += wgt;
            b.weighted_x += wgt as u128 * x as u128;
            b.weighted_y += wgt as u128 * y as u128;
            // Pixels in scan order: the first greatest key stays.
            if k > b.peak_key {
                (b.peak_x, b.peak_y, b.peak_key) = (x, y, k);
            }
        }
        renumber[m + 1] = b.label;
        blobs.push(b);
    }
    let labels = label.iter().map(|&l| renumber[l as usize]).collect();
    (blobs, labels)
}

/// Masks that are hard for labelling: `kind` 0 random of density `p`/8, 1 checkerboard, 2 a
/// spiral of width 1, 3 a comb (vertical teeth joined at the bottom), 4 one pixel, 5 all,
/// 6 horizontal stripes two rows apart.
pub fn mask(kind: u8, w: u32, h: u32, p: u64, seed: u64) -> Vec<bool> {
    let mut s = seed;
    let (wi, hi) = (w as i64, h as i64);
    let mut m = vec![false; (w * h) as usize];
    match kind {
        0 => m.iter_mut().for_each(|v| *v = splitmix(&mut s) % 8 < p),
        1 => (0..w * h).for_each(|i| m[i as usize] = (i % w + i / w).is_multiple_of(2)),
        2 => {
            // Walk from the corner, turning right where the way ahead is out or would touch
            // the wall already drawn: a spiral of width 1, one pixel between its turns.
            let inside = |x: i64, y: i64| x >= 0 && y >= 0 && x < wi && y < hi;
            let (mut x, mut y, mut dir, mut turns) = (0i64, 0i64, 0usize, 0);
            let dirs = [(1i64, 0i64), (0, 1), (-1, 0), (0, -1)];
            m[0] = true;
            while turns < 2 {
                let (dx, dy) = dirs[dir];
                let (nx, ny, fx, fy) = (x + dx, y + dy, x + 2 * dx, y + 2 * dy);
                let free = inside(nx, ny)
                    && !m[(ny * wi + nx) as usize]
                    && !(inside(fx, fy) && m[(fy * wi + fx) as usize]);
                if free {
                    (x, y, turns) = (nx, ny, 0);
                    m[(y * wi + x) as usize] = true;
                } else {
                    dir = (dir + 1) % 4;
                    turns += 1;
                }
            }
        }
        3 => (0..w * h).for_each(|i| m[i as usize] = (i % w).is_multiple_of(2) || i / w == h - 1),
        4 => m[(splitmix(&mut s) % (w * h) as u64) as usize] = true,
        5 => m.iter_mut().for_each(|v| *v = true),
        _ => (0..w * h).for_each(|i| m[i as usize] = (i / w) % 3 != 2),
    }
    m
}

pub fn options() -> impl Strategy<Value = BlobOptions> {
    (
        any::<bool>(),
        0..4u64,
        prop_oneof![Just(u64::MAX), 1..40u64],
        0..=1000u32,
        any::<bool>(),
    )
        .prop_map(|(four, min, max, bg, stats_only)| {
            let o = BlobOptions::new()
                .connectivity(if four {
                    Connectivity::Four
                } else {
                    Connectivity::Eight
                })
                .area(min.min(max), max)
                .background(bg);
            if stats_only { o.stats_only() } else { o }
        })
}

/// `⌊v·2^s⌋` in f64: exact (a power of two scales an f32 without rounding in f64's range);
/// `None` past ±2^100.
pub fn floor_scaled(v: f32, s: i32) -> Option<i128> {
    let x = (v as f64 * 2f64.powi(s)).floor();
    (x.abs() < 2f64.powi(100)).then_some(x as i128)
}

/// The weights' exponent by a plain walk down from the largest: the first whose span fits 32
/// bits.
pub fn exponent_by_walk(largest: f32, background: f32) -> i32 {
    (-200..=200)
        .rev()
        .find(|&s| {
            let span = floor_scaled(largest, s).zip(floor_scaled(background, s));
            span.is_some_and(|(k, b)| k - b <= u32::MAX as i128)
        })
        .unwrap()
}
