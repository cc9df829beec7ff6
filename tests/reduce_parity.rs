//! Reductions: CPU against a plain reference, and every OpenCL device against the CPU, exactly.

mod common;

use clpix::{Engine, Error, ImageView, LuminanceStats, PixelHit};
use common::*;
use proptest::prelude::*;

fn engines() -> &'static [Engine] {
    static E: SharedEngines = SharedEngines::new();
    E.get(opencl_engines)
}

fn capped() -> &'static [Engine] {
    // 4 KiB buffers: 1024 pixels a part, so most test images are split in many parts.
    static E: SharedEngines = SharedEngines::new();
    E.get(|| capped_opencl_engines(4096))
}

fn reference_extreme(img: &TestImage, brightest: bool) -> Option<PixelHit> {
    let mut best: Option<(u32, u32, u16, [u8; 4])> = None;
    for p in scan(img) {
        let better = match best {
            None => true,
            Some(b) => {
                if brightest {
                    p.2 > b.2
                } else {
                    p.2 < b.2
                }
            }
        };
        if better {
            best = Some(p);
        }
    }
    best.map(|(x, y, luminance, rgba)| PixelHit {
        x,
        y,
        luminance,
        rgba,
    })
}

fn reference_stats(img: &TestImage) -> Option<LuminanceStats> {
    let all = scan(img);
    if all.is_empty() {
        return None;
    }
    let sum: u64 = all.iter().map(|p| p.2 as u64).sum();
    Some(LuminanceStats {
        sum,
        count: all.len() as u64,
        mean: sum as f64 / all.len() as f64,
        min: all.iter().map(|p| p.2).min().unwrap(),
        max: all.iter().map(|p| p.2).max().unwrap(),
    })
}

type Results = (
    clpix::Result<PixelHit>,
    clpix::Result<PixelHit>,
    clpix::Result<LuminanceStats>,
);

fn run_all(engine: &Engine, view: ImageView<'_>) -> Results {
    (
        engine.extreme(view, clpix::Extreme::Brightest),
        engine.extreme(view, clpix::Extreme::Darkest),
        engine.luminance_stats(view),
    )
}

fn run_device(engine: &Engine, view: ImageView<'_>) -> Results {
    let dev = engine.upload(view).expect("upload");
    (
        engine.extreme(&dev, clpix::Extreme::Brightest),
        engine.extreme(&dev, clpix::Extreme::Darkest),
        engine.luminance_stats(&dev),
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn cpu_matches_the_sequential_reference(img in test_image()) {
        let cpu = Engine::cpu();
        let (b, d, s) = run_all(&cpu, img.view());
        prop_assert_eq!(b.ok(), reference_extreme(&img, true));
        prop_assert_eq!(d.ok(), reference_extreme(&img, false));
        prop_assert_eq!(s.ok(), reference_stats(&img));
    }

    #[test]
    fn opencl_matches_cpu_exactly(img in test_image()) {
        let expected = run_all(&Engine::cpu(), img.view());
        for e in engines() {
            prop_assert_eq!(&run_all(e, img.view()), &expected, "host input on {}", e.backend());
            prop_assert_eq!(&run_device(e, img.view()), &expected, "device input on {}", e.backend());
        }
    }

    #[test]
    fn opencl_in_many_parts_matches_cpu(img in test_image()) {
        let expected = run_all(&Engine::cpu(), img.view());
        for e in capped() {
            prop_assert_eq!(&run_all(e, img.view()), &expected, "capped host input on {}", e.backend());
            prop_assert_eq!(&run_device(e, img.view()), &expected, "capped device input on {}", e.backend());
        }
    }
}

#[test]
fn ties_go_to_the_smallest_scan_index_on_every_backend() {
    // Constant image: every pixel ties; the answer is (0, 0) for both ends.
    let img = make_image(333, 77, 0, Content::Constant([10, 200, 30, 255]), 1);
    let mut all = vec![Engine::cpu()];
    all.extend(opencl_engines());
    for e in &all {
        let b = e.extreme(img.view(), clpix::Extreme::Brightest).unwrap();
        let d = e.extreme(img.view(), clpix::Extreme::Darkest).unwrap();
        assert_eq!((b.x, b.y, d.x, d.y), (0, 0, 0, 0), "{}", e.backend());
    }
    // Two equal bright pixels: the earlier one in scan order wins, even across a part boundary.
    let mut img = make_image(300, 300, 0, Content::Black, 2);
    for &(x, y) in &[(299, 250), (5, 260), (7, 250)] {
        let i = (y * 300 + x) as usize * 4;
        img.data[i..i + 4].copy_from_slice(&[255, 255, 255, 255]);
    }
    all.extend(capped_opencl_engines(4096));
    for e in &all {
        let b = e.extreme(img.view(), clpix::Extreme::Brightest).unwrap();
        assert_eq!((b.x, b.y), (7, 250), "{}", e.backend());
    }
}

#[test]
fn empty_images_are_errors_not_panics() {
    let mut all = vec![Engine::cpu()];
    all.extend(opencl_engines());
    for (w, h) in [(0, 0), (0, 5), (5, 0)] {
        let data = vec![0u8; 0];
        let view = ImageView::new(&data, w, h).unwrap();
        for e in &all {
            assert!(
                matches!(
                    e.extreme(view, clpix::Extreme::Brightest),
                    Err(Error::EmptyImage { .. })
                ),
                "{}",
                e.backend()
            );
            assert!(matches!(
                e.extreme(view, clpix::Extreme::Darkest),
                Err(Error::EmptyImage { .. })
            ));
            assert!(matches!(
                e.luminance_stats(view),
                Err(Error::EmptyImage { .. })
            ));
            let dev = e.upload(view).unwrap();
            assert!(matches!(
                e.extreme(&dev, clpix::Extreme::Brightest),
                Err(Error::EmptyImage { .. })
            ));
            assert_eq!(e.download(&dev).unwrap().dimensions(), (w, h));
        }
    }
}

#[test]
fn bad_views_are_rejected_with_errors() {
    let data = vec![0u8; 40];
    assert!(matches!(
        ImageView::new(&data, 4, 3),
        Err(Error::BufferTooShort {
            needed: 48,
            actual: 40,
            ..
        })
    ));
    assert!(matches!(
        ImageView::with_stride(&data, 4, 2, 15),
        Err(Error::StrideTooSmall {
            stride: 15,
            min: 16
        })
    ));
    // The last row needs only 4 * width bytes, not a whole stride.
    assert!(ImageView::with_stride(&data, 2, 2, 32).is_ok());
    assert!(matches!(
        ImageView::with_stride(&data, 3, 2, 32),
        Err(Error::BufferTooShort { .. })
    ));
    assert!(ImageView::new(&data, u32::MAX, u32::MAX).is_err());
}

#[test]
fn device_images_move_between_engines() {
    let img = make_image(61, 29, 0, Content::Random, 9).to_image();
    let cpu = Engine::cpu();
    for e in opencl_engines() {
        let dev = e.upload(&img).unwrap();
        // A device image given to another engine is read back, not refused.
        assert_eq!(
            cpu.extreme(&dev, clpix::Extreme::Brightest).unwrap(),
            cpu.extreme(&img, clpix::Extreme::Brightest).unwrap()
        );
        assert_eq!(cpu.download(&dev).unwrap(), img);
        let back = cpu.upload(&dev).unwrap();
        assert_eq!(
            e.luminance_stats(&back).unwrap(),
            cpu.luminance_stats(&img).unwrap()
        );
    }
}

#[test]
fn opencl_profiles_its_kernels() {
    let img = make_image(512, 512, 0, Content::Random, 3).to_image();
    for e in opencl_engines() {
        e.extreme(&img, clpix::Extreme::Brightest).unwrap();
        assert!(e.last_kernel_time().is_some(), "{}", e.backend());
    }
}
