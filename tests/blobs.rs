//! Blobs (`Engine::blobs`): the CPU path against a plain reference of docs/SPEC.md ("Blobs": a
//! flood fill from each unlabelled foreground pixel in scan order, the statistics summed pixel
//! by pixel), on random sizes and adversarial masks (noise, checkerboards, spirals, combs, one
//! pixel, everything, blobs across the CPU path's strip seams), both connectivities, area
//! limits and a background; every OpenCL engine against the CPU, exactly.

mod common;

use clpix::{BlobOptions, Connectivity, Engine, Error, ImageView};
use common::blobs::*;
use common::*;
use image::Luma;
use proptest::prelude::*;

fn engines() -> &'static [Engine] {
    static E: SharedEngines = SharedEngines::new();
    E.get(opencl_engines)
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
