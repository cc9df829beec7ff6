//! The blobs' rows (`--ops blobs`): issue 54's three images, mono8 (and as mono f32), 8-connected, labels and
//! statistics (and statistics only), beside the anchors' NPP `LabelMarkersUF` (blobs_anchor.cu)
//! and OpenCV / scikit-image (python/bench/blobs_vs_opencv.py), which make the same images.

use super::formats::timed_row;
use clpix::{BlobOptions, Engine, ImageView};
use image::Luma;

/// Output `i` of splitmix64 seeded with `seed` (as the anchor and the Python script make it).
fn rnd(seed: u64, i: u64) -> u64 {
    let mut z = seed.wrapping_add((i + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15));
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// `(rnd(seed, i) >> 32) mod n`.
fn below(seed: u64, i: u64, n: u64) -> u64 {
    (rnd(seed, i) >> 32) % n
}

/// (a) markers: noise 0..=40 and 2,000 Gaussian spots of radius 3..=15 (peak 200..=255, added
/// within the radius, `⌊peak · exp(−2 d² / r²) + ½⌋`, capped at 255); threshold 100.
pub(super) fn spots(size: u32) -> Vec<u8> {
    let n = size as usize;
    let mut img: Vec<u8> = (0..(n * n) as u64).map(|i| below(1, i, 41) as u8).collect();
    for k in 0..2000u64 {
        let p = |j: u64| below(2, 4 * k + j, 1 << 32) as i64;
        let (cx, cy) = (p(0) % n as i64, p(1) % n as i64);
        let (r, peak) = (3 + p(2) % 13, (200 + p(3) % 56) as f64);
        for y in (cy - r).max(0)..=(cy + r).min(n as i64 - 1) {
            for x in (cx - r).max(0)..=(cx + r).min(n as i64 - 1) {
                let d2 = (x - cx) * (x - cx) + (y - cy) * (y - cy);
                if d2 > r * r {
                    continue;
                }
                let add = (peak * (-2.0 * d2 as f64 / (r * r) as f64).exp() + 0.5) as i64;
                let v = &mut img[y as usize * n + x as usize];
                *v = (*v as i64 + add).min(255) as u8;
            }
        }
    }
    img
}

/// (b) noise: uniform bytes, threshold 127 (half the pixels).
pub(super) fn noise(size: u32) -> Vec<u8> {
    (0..size as u64 * size as u64)
        .map(|i| below(3, i, 256) as u8)
        .collect()
}

/// `Σ (i + 1) · pixel[i]` mod 2^64: the anchor's and the Python script's checksum of an image.
pub(super) fn checksum(img: &[u8]) -> u64 {
    img.iter().enumerate().fold(0u64, |s, (i, &v)| {
        s.wrapping_add((i as u64 + 1).wrapping_mul(v as u64))
    })
}

/// (c) one spiral of width 1 over the whole image, one pixel between its turns: from the
/// corner, turning clockwise where the next pixel is outside or the one after it drawn.
pub(super) fn spiral(size: u32) -> Vec<u8> {
    let n = size as i64;
    let mut img = vec![0u8; (n * n) as usize];
    let inside = |x: i64, y: i64| x >= 0 && y >= 0 && x < n && y < n;
    let dirs = [(1i64, 0i64), (0, 1), (-1, 0), (0, -1)];
    let (mut x, mut y, mut dir, mut turns) = (0i64, 0i64, 0usize, 0);
    img[0] = 255;
    while turns < 2 {
        let (dx, dy) = dirs[dir];
        let (nx, ny, fx, fy) = (x + dx, y + dy, x + 2 * dx, y + 2 * dy);
        let free = inside(nx, ny)
            && img[(ny * n + nx) as usize] == 0
            && !(inside(fx, fy) && img[(fy * n + fx) as usize] != 0);
        if free {
            (x, y, turns) = (nx, ny, 0);
            img[(y * n + x) as usize] = 255;
        } else {
            dir = (dir + 1) % 4;
            turns += 1;
        }
    }
    img
}

pub(super) fn blob_rows(engines: &[Engine], size: u32, reps: usize) -> Vec<String> {
    let mut lines = Vec::new();
    for (name, make, t) in [
        ("spots", spots as fn(u32) -> Vec<u8>, 100u8),
        ("noise", noise, 127),
        ("spiral", spiral, 127),
    ] {
        let data = make(size);
        let Ok(view) = ImageView::<Luma<u8>>::from_channels(&data, size, size, size as usize)
        else {
            continue;
        };
        for e in engines {
            let count = e
                .blobs(view, t, &BlobOptions::new().stats_only())
                .map_or(0, |b| b.blobs.len());
            let content = format!("{name} ({count} blobs, {:016x})", checksum(&data));
            lines.push(timed_row(e, "blobs mono8 labels", &content, reps, || {
                e.blobs(view, t, &BlobOptions::new()).map(drop)
            }));
            lines.push(timed_row(
                e,
                "blobs mono8 stats only",
                &content,
                reps,
                || e.blobs(view, t, &BlobOptions::new().stats_only()).map(drop),
            ));
        }
        // The same foreground in f32 (key + a fraction below 0.999, above t + 0.999): the f32
        // weights' path (the largest key first, 32-bit weights).
        let data_f32: Vec<f32> = data
            .iter()
            .enumerate()
            .map(|(i, &v)| v as f32 + below(7, i as u64, 1000) as f32 / 1000.0)
            .collect();
        let tf = t as f32 + 0.999;
        let Ok(view_f32) =
            ImageView::<Luma<f32>>::from_channels(&data_f32, size, size, 4 * size as usize)
        else {
            continue;
        };
        for e in engines {
            let count = e
                .blobs(view_f32, tf, &BlobOptions::new().stats_only())
                .map_or(0, |b| b.blobs.len());
            let content = format!("{name} ({count} blobs)");
            lines.push(timed_row(
                e,
                "blobs mono f32 labels",
                &content,
                reps,
                || e.blobs(view_f32, tf, &BlobOptions::new()).map(drop),
            ));
            lines.push(timed_row(
                e,
                "blobs mono f32 stats only",
                &content,
                reps,
                || {
                    e.blobs(view_f32, tf, &BlobOptions::new().stats_only())
                        .map(drop)
                },
            ));
        }
    }
    lines
}
