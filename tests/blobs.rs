//! Blobs (`Engine::blobs`): the CPU path against a plain reference of docs/SPEC.md ("Blobs": a
//! flood fill from each unlabelled foreground pixel in scan order, the statistics summed pixel
//! by pixel), on random sizes and adversarial masks (noise, checkerboards, spirals, combs, one
//! pixel, everything, blobs across the CPU path's strip seams), both connectivities, area
//! limits and a background; every OpenCL engine against the CPU, exactly.

mod common;

use clpix::{Blob, BlobOptions, Connectivity, Engine, Error, ImageView};
use common::*;
use image::Luma;
use proptest::prelude::*;

fn engines() -> &'static [Engine] {
    static E: SharedEngines = SharedEngines::new();
    E.get(opencl_engines)
}

/// The reference: labels by flood fill in scan order, sums pixel by pixel, areas filtered, the
/// survivors renumbered in order; a pixel's weight its key less the background.
fn reference(keys: &[u32], w: u32, h: u32, t: u32, opts: &BlobOptions) -> (Vec<Blob>, Vec<u32>) {
    let bg = opts.background;
    reference_weighed(keys, (w, h), t, opts, |k| (k - bg) as u64, false)
}

/// [`reference`] with a key's weight `weight(key)`; of f32 keys (`float`) the key sum is the
/// weights'.
fn reference_weighed(
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
fn mask(kind: u8, w: u32, h: u32, p: u64, seed: u64) -> Vec<bool> {
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

fn check(
    w: u32,
    h: u32,
    kind: u8,
    p: u64,
    seed: u64,
    opts: BlobOptions,
) -> Result<(), TestCaseError> {
    let m = mask(kind, w, h, p, seed);
    let mut s = seed ^ 0x55;
    // Foreground keys above 1000, background at or below it (ties at the threshold).
    let data: Vec<u16> = m
        .iter()
        .map(|&f| {
            let r = splitmix(&mut s);
            if f {
                1001 + (r % 64_535) as u16
            } else {
                (r % 1001) as u16
            }
        })
        .collect();
    let keys: Vec<u32> = data.iter().map(|&v| v as u32).collect();
    let view = ImageView::<Luma<u16>>::from_channels(&data, w, h, 2 * w as usize)
        .map_err(|e| TestCaseError::fail(e.to_string()))?;
    let (blobs, labels) = reference(&keys, w, h, 1000, &opts);
    let cpu = Engine::cpu()
        .blobs(view, 1000, &opts)
        .map_err(|e| TestCaseError::fail(e.to_string()))?;
    prop_assert_eq!(&cpu.blobs, &blobs, "kind {} {}x{}", kind, w, h);
    let got = cpu.labels.as_ref().map(|l| l.as_raw().clone());
    prop_assert_eq!(got, opts.labels.then_some(labels));
    for e in engines() {
        let dev = e
            .blobs(view, 1000, &opts)
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert!(dev == cpu, "kind {} {}x{} on {}", kind, w, h, e.backend());
    }
    // The same mask in mono8 (the CPU path's byte masks, the kernels' 16-pixel chunks), and a
    // background up to 100 there.
    let opts = opts.background(opts.background.min(100));
    let data8: Vec<u8> = m
        .iter()
        .map(|&f| {
            let r = splitmix(&mut s);
            if f {
                101 + (r % 155) as u8
            } else {
                (r % 101) as u8
            }
        })
        .collect();
    let keys8: Vec<u32> = data8.iter().map(|&v| v as u32).collect();
    let view8 = ImageView::<Luma<u8>>::from_channels(&data8, w, h, w as usize)
        .map_err(|e| TestCaseError::fail(e.to_string()))?;
    let (blobs8, labels8) = reference(&keys8, w, h, 100, &opts);
    let cpu8 = Engine::cpu()
        .blobs(view8, 100, &opts)
        .map_err(|e| TestCaseError::fail(e.to_string()))?;
    prop_assert_eq!(&cpu8.blobs, &blobs8, "mono8 kind {} {}x{}", kind, w, h);
    let got8 = cpu8.labels.as_ref().map(|l| l.as_raw().clone());
    prop_assert_eq!(got8, opts.labels.then_some(labels8));
    for e in engines() {
        let dev = e
            .blobs(view8, 100, &opts)
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert!(
            dev == cpu8,
            "mono8 kind {} {}x{} on {}",
            kind,
            w,
            h,
            e.backend()
        );
    }
    Ok(())
}

fn options() -> impl Strategy<Value = BlobOptions> {
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

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn blobs_match_the_reference(
        (w, h) in prop_oneof![3 => (1..80u32, 1..70u32), 1 => (1..4u32, 1..300u32), 1 => (200..700u32, 1..6u32)],
        kind in 0..7u8,
        p in 1..8u64,
        seed in any::<u64>(),
        opts in options(),
    ) {
        check(w, h, kind, p, seed, opts)?;
    }
}

/// Tall images: many strips on the CPU path, blobs across every seam (spirals and combs).
#[test]
fn blobs_across_many_strips() {
    for (w, h) in [(37u32, 2000u32), (300, 900)] {
        for kind in [0u8, 2, 3, 6] {
            for connectivity in [Connectivity::Four, Connectivity::Eight] {
                let opts = BlobOptions::new().connectivity(connectivity);
                check(w, h, kind, 4, 99, opts).unwrap();
            }
        }
    }
}

#[test]
fn every_integer_format_and_bad_input() {
    let e = Engine::cpu();
    let rgba = image::RgbaImage::from_fn(6, 2, |x, _| {
        image::Rgba([0, if x % 3 == 0 { 0 } else { 255 }, 0, 255])
    });
    let found = e.blobs(&rgba, 500, &BlobOptions::new()).unwrap();
    assert_eq!(found.blobs.len(), 2);
    assert_eq!(found.blobs[0].peak_key, clpix::luminance(0, 255, 0) as u32);
    let rgb = image::RgbImage::from_fn(6, 2, |x, _| {
        image::Rgb([0, if x % 3 == 0 { 0 } else { 255 }, 0])
    });
    assert_eq!(e.blobs(&rgb, 500, &BlobOptions::new()).unwrap(), found);
    let g = image::GrayImage::new(3, 3);
    assert!(matches!(
        e.blobs(&g, 10, &BlobOptions::new().area(5, 4)),
        Err(Error::InvalidParameter { .. })
    ));
    assert!(matches!(
        e.blobs(&g, 10, &BlobOptions::new().background(11)),
        Err(Error::InvalidParameter { .. })
    ));
    let rgb16 = image::ImageBuffer::from_pixel(2, 2, image::Rgba([0u16; 4]));
    assert!(
        e.blobs(&rgb16, 65_535, &BlobOptions::new())
            .unwrap()
            .blobs
            .is_empty()
    );
    let empty = image::GrayImage::new(0, 4);
    let none = e.blobs(&empty, 0, &BlobOptions::new()).unwrap();
    assert!(none.blobs.is_empty() && none.labels.unwrap().dimensions() == (0, 4));
}

/// Sub-pixel centres of windows: against plain f64 sums (exact here: small integers), clipped
/// at the image's edges, all-background windows at the pixel itself, and the errors.
#[test]
fn centroids_of_windows() {
    let (w, h) = (37u32, 23u32);
    let mut s = 7u64;
    let data: Vec<u16> = (0..w * h)
        .map(|_| (splitmix(&mut s) % 3000) as u16)
        .collect();
    let view = ImageView::<Luma<u16>>::from_channels(&data, w, h, 2 * w as usize).unwrap();
    let at: Vec<(u32, u32)> = vec![(0, 0), (36, 22), (10, 5), (20, 11), (1, 22)];
    for (radius, bg) in [(0u32, 0u32), (2, 1000), (5, 2500), (40, 0)] {
        let got = Engine::cpu().centroids(view, &at, radius, bg).unwrap();
        for (&(cx, cy), c) in at.iter().zip(&got) {
            let (mut ws, mut wx, mut wy) = (0f64, 0f64, 0f64);
            for y in cy.saturating_sub(radius)..=(cy + radius).min(h - 1) {
                for x in cx.saturating_sub(radius)..=(cx + radius).min(w - 1) {
                    let wt = (data[(y * w + x) as usize] as f64 - bg as f64).max(0.0);
                    ws += wt;
                    wx += wt * x as f64;
                    wy += wt * y as f64;
                }
            }
            assert_eq!(c.weight_sum as f64, ws);
            if ws == 0.0 {
                assert_eq!((c.x, c.y), (cx as f64, cy as f64));
            } else {
                assert!((c.x - wx / ws).abs() < 1e-9 && (c.y - wy / ws).abs() < 1e-9);
            }
        }
        // Held images too (the windows' pixels gathered on the device), in parts of a KiB.
        let capped = capped_opencl_engines(1024);
        for e in engines().iter().chain(&capped) {
            assert_eq!(e.centroids(view, &at, radius, bg).unwrap(), got);
            let held = e.upload(view).unwrap();
            assert_eq!(
                e.centroids(&held, &at, radius, bg).unwrap(),
                got,
                "{}",
                e.backend()
            );
            assert!(matches!(
                e.centroids(&held, &[(3, 23)], 1, 0),
                Err(Error::InvalidParameter { .. })
            ));
        }
    }
    assert!(matches!(
        Engine::cpu().centroids(view, &[(37, 0)], 1, 0),
        Err(Error::InvalidParameter { .. })
    ));
}

/// f32 centroids: weights `max(⌊k·2^s⌋ − ⌊b·2^s⌋, 0)` in the unit of the windows' largest key,
/// against f64 arithmetic (exact: powers of two scale f32s exactly); NaN and −inf weigh 0;
/// held images the same; +inf in a window and a background that is not finite are errors.
#[test]
fn centroids_of_f32_windows() {
    let (w, h) = (29u32, 17u32);
    let mut s = 9u64;
    let data: Vec<f32> = (0..w * h)
        .map(|i| match splitmix(&mut s) % 11 {
            0 => f32::NAN,
            1 => f32::NEG_INFINITY,
            2 => 1e-40,
            3 => -2.5,
            _ => (i % 97) as f32 * 0.37 + 1e3 * (i % 5) as f32,
        })
        .collect();
    let view = ImageView::<Luma<f32>>::from_channels(&data, w, h, 4 * w as usize).unwrap();
    let at: Vec<(u32, u32)> = vec![(0, 0), (28, 16), (10, 5), (20, 11)];
    for (radius, bg) in [(0u32, 0.0f32), (2, -3.0), (4, 500.0), (40, 1e6)] {
        let got = Engine::cpu()
            .centroids(view, &at, radius, bg.to_bits())
            .unwrap();
        let windows = |c: (u32, u32)| {
            let (x0, x1) = (c.0.saturating_sub(radius), (c.0 + radius).min(w - 1));
            let (y0, y1) = (c.1.saturating_sub(radius), (c.1 + radius).min(h - 1));
            (y0..=y1).flat_map(move |y| (x0..=x1).map(move |x| (x, y)))
        };
        let largest = at
            .iter()
            .flat_map(|&c| windows(c))
            .map(|(x, y)| data[(y * w + x) as usize])
            .filter(|v| !v.is_nan())
            .fold(f32::NEG_INFINITY, f32::max);
        let e = if largest > bg {
            exponent_by_walk(largest, bg)
        } else {
            0
        };
        for (&c, got) in at.iter().zip(&got) {
            let (mut ws, mut wx, mut wy) = (0i128, 0i128, 0i128);
            for (x, y) in windows(c) {
                let v = data[(y * w + x) as usize];
                let wt = match (largest > bg, floor_scaled(v, e), floor_scaled(bg, e)) {
                    (true, Some(k), Some(b)) if v.is_finite() => (k - b).max(0),
                    _ => 0,
                };
                ws += wt;
                wx += wt * x as i128;
                wy += wt * y as i128;
            }
            assert_eq!(
                (got.weight_sum as i128, got.weight_exponent),
                (ws, e),
                "{c:?} r {radius}"
            );
            if ws > 0 {
                let ratio = |n: i128| (n / ws) as f64 + (n % ws) as f64 / ws as f64;
                assert_eq!((got.x, got.y), (ratio(wx), ratio(wy)));
            } else {
                assert_eq!((got.x, got.y), (c.0 as f64, c.1 as f64));
            }
        }
        for e in engines() {
            assert_eq!(e.centroids(view, &at, radius, bg.to_bits()).unwrap(), got);
            let held = e.upload(view).unwrap();
            assert_eq!(e.centroids(&held, &at, radius, bg.to_bits()).unwrap(), got);
        }
    }
    let mut inf = data.clone();
    inf[(5 * w + 10) as usize] = f32::INFINITY;
    let view = ImageView::<Luma<f32>>::from_channels(&inf, w, h, 4 * w as usize).unwrap();
    let bad =
        |r: clpix::Result<Vec<clpix::Centroid>>| matches!(r, Err(Error::InvalidParameter { .. }));
    assert!(bad(Engine::cpu().centroids(view, &[(10, 5)], 1, 0)));
    assert!(
        !bad(Engine::cpu().centroids(view, &[(20, 11)], 1, 0)),
        "+inf outside the windows"
    );
    assert!(bad(Engine::cpu().centroids(
        view,
        &[(20, 11)],
        1,
        f32::NAN.to_bits()
    )));
}

/// The label image kept on the engine equals the host one, whatever the options' `labels`, an
/// image without blobs included (all zeros); array operations take it.
#[test]
fn labels_kept_on_the_engine() {
    let (w, h) = (150u32, 90u32);
    for kind in [0u8, 2, 4] {
        let m = mask(kind, w, h, 3, 21);
        let data: Vec<u8> = m.iter().map(|&f| if f { 200 } else { 10 }).collect();
        let view = ImageView::<Luma<u8>>::from_channels(&data, w, h, w as usize).unwrap();
        let none = vec![0u8; (w * h) as usize];
        let empty = ImageView::<Luma<u8>>::from_channels(&none, w, h, w as usize).unwrap();
        for e in std::iter::once(&Engine::cpu()).chain(engines()) {
            for (v, t) in [(view, 100u8), (empty, 100)] {
                let host = e.blobs(v, t, &BlobOptions::new()).unwrap();
                let (found, labels) = e
                    .blobs_device(v, t, &BlobOptions::new().stats_only())
                    .unwrap();
                let blobs = found.blobs;
                assert_eq!(blobs, host.blobs, "{}", e.backend());
                assert_eq!(labels.len(), (w * h) as usize);
                let expected = host.labels.unwrap().into_raw();
                assert_eq!(
                    e.download_array(&labels).unwrap(),
                    expected,
                    "{}",
                    e.backend()
                );
                let st = e.array_stats(&labels).unwrap();
                assert_eq!(st.max as usize, blobs.len());
            }
        }
    }
}

/// `⌊v·2^s⌋` in f64: exact (a power of two scales an f32 without rounding in f64's range);
/// `None` past ±2^100.
fn floor_scaled(v: f32, s: i32) -> Option<i128> {
    let x = (v as f64 * 2f64.powi(s)).floor();
    (x.abs() < 2f64.powi(100)).then_some(x as i128)
}

/// The weights' exponent by a plain walk down from the largest: the first whose span fits 32
/// bits.
fn exponent_by_walk(largest: f32, background: f32) -> i32 {
    (-200..=200)
        .rev()
        .find(|&s| {
            let span = floor_scaled(largest, s).zip(floor_scaled(background, s));
            span.is_some_and(|(k, b)| k - b <= u32::MAX as i128)
        })
        .unwrap()
}

/// Adversarial f32 keys for a mask: above the threshold `t` (tiny, huge, denormal, ties) and at
/// or below it (NaN and −inf among them).
fn f32_keys(m: &[bool], t: f32, seed: u64) -> Vec<f32> {
    let mut s = seed;
    let above = [
        t + 1.0,
        t * 2.0 + 3.0,
        1e30,
        3e38,
        f32::from_bits(t.to_bits() + 1),
        7.25,
    ];
    let below = [t, f32::NAN, f32::NEG_INFINITY, t - 1.0, -3e38, -0.0];
    m.iter()
        .map(|&f| {
            let r = splitmix(&mut s);
            let v = if r.is_multiple_of(3) {
                let pool = if f { &above[..] } else { &below[..] };
                pool[(r >> 8) as usize % pool.len()]
            } else {
                let x = ((r >> 16) % 100_000) as f32 / 64.0;
                if f {
                    t.abs() + x + 1.0
                } else {
                    t - x.abs() - 1.0
                }
            };
            // Keys above t for the foreground, at or below it (or NaN) for the rest.
            match f {
                true if v > t && v.is_finite() => v,
                true => t.abs() + 2.0,
                false if v <= t || v.is_nan() => v,
                false => t,
            }
        })
        .collect()
}

fn check_f32(
    (w, h): (u32, u32),
    kind: u8,
    seed: u64,
    t: f32,
    background: f32,
    opts: BlobOptions,
) -> Result<(), TestCaseError> {
    let m = mask(kind, w, h, 4, seed);
    let data = f32_keys(&m, t, seed ^ 0x77);
    let order = |v: f32| -> u32 {
        // The order key (docs/SPEC.md): NaN 0, −0 as +0, order of numbers kept.
        if v.is_nan() {
            return 0;
        }
        let b = (v + 0.0).to_bits();
        if b >> 31 == 1 { !b } else { b | 0x8000_0000 }
    };
    let keys: Vec<u32> = data.iter().map(|&v| order(v)).collect();
    let opts = opts.background_f32(background);
    let largest = data
        .iter()
        .copied()
        .filter(|&v| v > t)
        .fold(None, |a: Option<f32>, v| Some(a.map_or(v, |a| a.max(v))));
    let s = largest.map_or(0, |k| exponent_by_walk(k, background));
    let base = floor_scaled(background, s).unwrap_or(0);
    let weight = |k: u32| -> u64 {
        let v = f32::from_bits(if k >> 31 == 1 { k & 0x7fff_ffff } else { !k });
        (floor_scaled(v, s).unwrap_or(0) - base).max(1) as u64
    };
    let (blobs, labels) = reference_weighed(&keys, (w, h), order(t), &opts, weight, true);
    let view = ImageView::<Luma<f32>>::from_channels(&data, w, h, 4 * w as usize)
        .map_err(|e| TestCaseError::fail(e.to_string()))?;
    let cpu = Engine::cpu()
        .blobs(view, t, &opts)
        .map_err(|e| TestCaseError::fail(e.to_string()))?;
    prop_assert_eq!(cpu.weight_exponent, s);
    prop_assert_eq!(&cpu.blobs, &blobs, "f32 kind {} {}x{} t {}", kind, w, h, t);
    let got = cpu.labels.as_ref().map(|l| l.as_raw().clone());
    prop_assert_eq!(got, opts.labels.then_some(labels));
    for e in engines() {
        let dev = e
            .blobs(view, t, &opts)
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert!(
            dev == cpu,
            "f32 kind {} {}x{} on {}",
            kind,
            w,
            h,
            e.backend()
        );
        // The exponent given is the exponent found: the same blobs.
        let fixed = e
            .blobs(view, t, &opts.weight_exponent(s))
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert!(fixed == cpu, "fixed exponent on {}", e.backend());
        let held = e
            .upload(view)
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        let of_held = e
            .blobs(&held, t, &opts)
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert!(of_held == cpu, "held f32 image on {}", e.backend());
    }
    Ok(())
}

/// RGBA f32: the blobs of its keys (`0.07 b + 0.72 g + 0.21 r`, fused as docs/SPEC.md says),
/// on every engine, of host and held images.
#[test]
fn rgba_f32_blobs_are_their_keys_blobs() {
    let (w, h) = (53u32, 41u32);
    let m = mask(0, w, h, 2, 5);
    let mut s = 11u64;
    let mut rgba = Vec::new();
    let mut keys = Vec::new();
    for &f in &m {
        let mut c = [0f32; 4];
        for v in &mut c {
            let r = splitmix(&mut s);
            *v = if f {
                1.0 + (r % 5000) as f32 / 7.0
            } else {
                -((r % 5000) as f32) / 3.0
            };
        }
        rgba.extend(c);
        keys.push(0.07f32.mul_add(c[2], 0.72f32.mul_add(c[1], 0.21 * c[0])));
    }
    let color = ImageView::<image::Rgba<f32>>::from_channels(&rgba, w, h, 16 * w as usize).unwrap();
    let mono = ImageView::<Luma<f32>>::from_channels(&keys, w, h, 4 * w as usize).unwrap();
    let opts = BlobOptions::new().background_f32(-2.0);
    let expected = Engine::cpu().blobs(mono, 0.5, &opts).unwrap();
    assert!(expected.blobs.len() > 20);
    let cpu = Engine::cpu();
    for e in std::iter::once(&cpu).chain(engines()) {
        assert_eq!(
            e.blobs(color, 0.5, &opts).unwrap(),
            expected,
            "{}",
            e.backend()
        );
        let held = e.upload(color).unwrap();
        assert_eq!(
            e.blobs(&held, 0.5, &opts).unwrap(),
            expected,
            "held on {}",
            e.backend()
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// f32 keys: weights in the unit the largest key chooses, exact from the floats' bits,
    /// against plain f64 arithmetic; NaN and −inf never blobs; tiny, denormal and huge keys.
    #[test]
    fn f32_blobs_match_the_reference(
        (w, h) in prop_oneof![3 => (1..60u32, 1..50u32), 1 => (150..400u32, 1..5u32)],
        kind in 0..7u8,
        seed in any::<u64>(),
        (t, background) in prop_oneof![
            Just((0.0f32, 0.0f32)), Just((0.0, -1e30)), Just((-5.0, -5.0)), Just((100.0, 99.5)),
            Just((1e-40, 0.0)), Just((1e20, 1e20)), Just((-3e38, -3e38))],
        opts in options(),
    ) {
        check_f32((w, h), kind, seed, t, background, opts.background(0))?;
    }
}

/// f32 blobs' errors: +inf above the threshold, a background that is not finite or above the
/// threshold, an exponent too large for the keys or set for an integer format.
#[test]
fn f32_blobs_bad_input() {
    let cpu = Engine::cpu();
    let engines_all = std::iter::once(&cpu).chain(engines());
    let img = image::ImageBuffer::from_fn(4, 2, |x, _| {
        Luma([[1.0f32, f32::INFINITY, 0.0, f32::NAN][x as usize]])
    });
    let finite =
        image::ImageBuffer::from_fn(4, 2, |x, _| Luma([[1.0f32, 2.0, 0.0, 5.0][x as usize]]));
    let bad = |r: clpix::Result<clpix::Blobs>| matches!(r, Err(Error::InvalidParameter { .. }));
    for e in engines_all {
        assert!(
            bad(e.blobs(&img, 0.5, &BlobOptions::new())),
            "{}",
            e.backend()
        );
        // Above +inf nothing: no blob, no error.
        assert!(
            e.blobs(&img, f32::INFINITY, &BlobOptions::new())
                .unwrap()
                .blobs
                .is_empty()
        );
        assert!(bad(e.blobs(
            &finite,
            0.5,
            &BlobOptions::new().background_f32(0.75)
        )));
        assert!(bad(e.blobs(
            &finite,
            0.5,
            &BlobOptions::new().background_f32(f32::NEG_INFINITY)
        )));
        assert!(bad(e.blobs(
            &finite,
            0.5,
            &BlobOptions::new().background_f32(f32::NAN)
        )));
        let s = clpix::blob_weight_exponent(5.0, 0.0).unwrap();
        let found = e.blobs(&finite, 0.5, &BlobOptions::new()).unwrap();
        assert_eq!(found.weight_exponent, s);
        assert_eq!(found.blobs[0].peak_f32(), 2.0);
        assert_eq!(found.blobs[1].weight_sum, 10 << s);
        assert!(bad(e.blobs(
            &finite,
            0.5,
            &BlobOptions::new().weight_exponent(s + 1)
        )));
        let coarse = e
            .blobs(&finite, 0.5, &BlobOptions::new().weight_exponent(-3))
            .unwrap();
        assert_eq!(coarse.blobs[0].weight_sum, 4, "weights of at least 1");
        let g = image::GrayImage::new(3, 3);
        assert!(bad(e.blobs(&g, 10, &BlobOptions::new().weight_exponent(0))));
    }
}
