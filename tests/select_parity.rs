//! The k brightest / darkest pixels with a minimum distance: CPU against a plain reference (sort
//! all pixels, greedy selection), and every OpenCL device against the CPU, exactly.

mod common;

use clpix::{Engine, Error, PixelHit};
use common::*;
use proptest::prelude::*;

fn engines() -> &'static [Engine] {
    static E: SharedEngines = SharedEngines::new();
    E.get(|| {
        let mut v = opencl_engines();
        v.extend(capped_opencl_engines(4096));
        v
    })
}

/// SPEC: all pixels by luminance (descending for brightest), ties in scan order; greedy.
fn reference(img: &TestImage, k: usize, d: f32, brightest: bool) -> Vec<PixelHit> {
    let mut all: Vec<PixelHit> = scan(img)
        .into_iter()
        .map(|(x, y, luminance, rgba)| PixelHit {
            x,
            y,
            luminance,
            rgba,
        })
        .collect();
    if brightest {
        all.sort_by_key(|h| std::cmp::Reverse(h.luminance));
    } else {
        all.sort_by_key(|h| h.luminance);
    }
    let mut taken: Vec<PixelHit> = Vec::new();
    for c in all {
        if taken.len() == k {
            break;
        }
        let far = taken.iter().all(|t| {
            let (dx, dy) = (t.x as f64 - c.x as f64, t.y as f64 - c.y as f64);
            dx * dx + dy * dy >= d as f64 * d as f64
        });
        if far {
            taken.push(c);
        }
    }
    taken
}

fn distance() -> impl Strategy<Value = f32> {
    prop_oneof![
        Just(0.0f32),
        Just(1.0),
        Just(1.5),
        0.0f32..30.0,
        Just(1000.0),
        Just(f32::INFINITY)
    ]
}

fn k() -> impl Strategy<Value = usize> {
    prop_oneof![Just(0usize), Just(1), 1..40usize, Just(100_000)]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn cpu_matches_the_plain_reference(img in test_image(), k in k(), d in distance()) {
        let cpu = Engine::cpu();
        prop_assert_eq!(cpu.extremes(img.view(), clpix::Extreme::Brightest, k, d).unwrap(), reference(&img, k, d, true));
        prop_assert_eq!(cpu.extremes(img.view(), clpix::Extreme::Darkest, k, d).unwrap(), reference(&img, k, d, false));
    }

    #[test]
    fn opencl_matches_cpu_exactly(img in test_image(), k in k(), d in distance()) {
        let cpu = Engine::cpu();
        let b = cpu.extremes(img.view(), clpix::Extreme::Brightest, k, d);
        let dk = cpu.extremes(img.view(), clpix::Extreme::Darkest, k, d);
        for e in engines() {
            prop_assert_eq!(&e.extremes(img.view(), clpix::Extreme::Brightest, k, d), &b, "brightest_k on {}", e.backend());
            prop_assert_eq!(&e.extremes(img.view(), clpix::Extreme::Darkest, k, d), &dk, "darkest_k on {}", e.backend());
            let dev = e.upload(img.view()).unwrap();
            prop_assert_eq!(&e.extremes(&dev, clpix::Extreme::Brightest, k, d), &b, "device brightest_k on {}", e.backend());
            prop_assert_eq!(&e.extremes(&dev, clpix::Extreme::Darkest, k, d), &dk, "device darkest_k on {}", e.backend());
        }
    }
}

#[test]
fn edge_cases_on_every_backend() {
    let constant = make_image(40, 30, 0, Content::Constant([50, 60, 70, 255]), 1);
    for e in std::iter::once(&Engine::cpu()).chain(engines()) {
        // All ties: scan order; with a distance, a grid of picks.
        let top = e
            .extremes(constant.view(), clpix::Extreme::Brightest, 3, 0.0)
            .unwrap();
        assert_eq!(
            top.iter().map(|h| (h.x, h.y)).collect::<Vec<_>>(),
            [(0, 0), (1, 0), (2, 0)],
            "{}",
            e.backend()
        );
        assert_eq!(
            e.extremes(constant.view(), clpix::Extreme::Brightest, 5, 10.0)
                .unwrap(),
            reference(&constant, 5, 10.0, true)
        );
        // k = 0, k larger than the image, distance larger than the image.
        assert!(
            e.extremes(constant.view(), clpix::Extreme::Brightest, 0, 0.0)
                .unwrap()
                .is_empty()
        );
        assert_eq!(
            e.extremes(constant.view(), clpix::Extreme::Darkest, 5000, 0.0)
                .unwrap()
                .len(),
            1200
        );
        assert_eq!(
            e.extremes(constant.view(), clpix::Extreme::Brightest, 10, 500.0)
                .unwrap()
                .len(),
            1
        );
        // Bad distances are errors.
        for bad in [-1.0f32, f32::NAN, f32::NEG_INFINITY] {
            assert!(matches!(
                e.extremes(constant.view(), clpix::Extreme::Brightest, 3, bad),
                Err(Error::InvalidParameter { .. })
            ));
            assert!(matches!(
                e.extremes(constant.view(), clpix::Extreme::Darkest, 3, bad),
                Err(Error::InvalidParameter { .. })
            ));
        }
        // An empty image has no candidates.
        let empty = image::RgbaImage::new(0, 7);
        assert!(
            e.extremes(&empty, clpix::Extreme::Brightest, 3, 0.0)
                .unwrap()
                .is_empty()
        );
    }
}

#[test]
fn markers_in_blobs_are_separated() {
    // Three bright blobs of several pixels each: with a distance, one pick per blob.
    let mut img = make_image(120, 90, 0, Content::Black, 3);
    for (cx, cy) in [(20u32, 20u32), (90, 30), (60, 70)] {
        for dy in 0..4 {
            for dx in 0..4 {
                let i = (((cy + dy) * 120 + cx + dx) * 4) as usize;
                img.data[i..i + 4].copy_from_slice(&[250, 250, 250 - (dx * 10 + dy) as u8, 255]);
            }
        }
    }
    for e in std::iter::once(&Engine::cpu()).chain(engines()) {
        let picks = e
            .extremes(img.view(), clpix::Extreme::Brightest, 3, 8.0)
            .unwrap();
        let mut at: Vec<(u32, u32)> = picks.iter().map(|h| (h.x, h.y)).collect();
        at.sort();
        assert_eq!(at, [(20, 20), (60, 70), (90, 30)], "{}", e.backend());
    }
}
