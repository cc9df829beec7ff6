//! Blobs and centroids of f32 images (`Engine::blobs`, `Engine::centroids`): the CPU path
//! against the reference of docs/SPEC.md ("Blobs", item 8: integer weights in one unit `2^-s`,
//! computed here in f64, where a power of two scales an f32 exactly), on adversarial keys (tiny,
//! denormal, huge, tied; NaN and −inf below the threshold), host and held images; every OpenCL
//! engine against the CPU, exactly.

mod common;

use clpix::{BlobOptions, Engine, Error, ImageView};
use common::blobs::*;
use common::*;
use image::Luma;
use proptest::prelude::*;

fn engines() -> &'static [Engine] {
    static E: SharedEngines = SharedEngines::new();
    E.get(opencl_engines)
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

/// A held image in several parts (held parts are padded, so they split a little sooner than an
/// upload of the same pixels) gives the host image's blobs: it is read back and labelled whole,
/// on engines of 4 KiB buffers.
#[test]
fn held_images_in_parts_give_the_host_images_blobs() {
    let capped = capped_opencl_engines(4096);
    // A column of a few long blobs (a buffer of 4 KiB holds the statistics of 53).
    let rgba16: Vec<u16> = (0..508 * 4u32)
        .map(|i| if (i / 4 / 60) % 2 == 0 { 3000 + (i * 7) % 50 } else { 100 } as u16)
        .collect();
    let rgba: Vec<f32> = (0..254 * 4u32)
        .map(|i| {
            if (i / 4 / 30) % 2 == 0 {
                5.0 - (i % 7) as f32
            } else {
                -3.0
            }
        })
        .collect();
    let r16 = ImageView::<image::Rgba<u16>>::from_channels(&rgba16, 1, 508, 8).unwrap();
    let rf = ImageView::<image::Rgba<f32>>::from_channels(&rgba, 1, 254, 16).unwrap();
    for e in &capped {
        let opts = BlobOptions::new();
        let host = e.blobs(r16, 1500, &opts).unwrap();
        let held = e.upload(r16).unwrap();
        assert_eq!(
            e.blobs(&held, 1500, &opts).unwrap(),
            host,
            "{}",
            e.backend()
        );
        let host = e.blobs(rf, 0.0, &opts.background_f32(-4.0)).unwrap();
        let held = e.upload(rf).unwrap();
        assert_eq!(
            e.blobs(&held, 0.0, &opts.background_f32(-4.0)).unwrap(),
            host,
            "{}",
            e.backend()
        );
        assert!(!host.blobs.is_empty());
    }
}
