//! Histograms: CPU against a plain sequential reference, and every OpenCL device against the
//! CPU, exactly, on random sizes and on the content that breaks histograms.

mod common;

use clpix::{Engine, Error, ImageView, LuminanceHistogram, RgbaHistogram};
use common::*;
use proptest::prelude::*;
use std::sync::OnceLock;

fn engines() -> &'static [Engine] {
    static E: SharedEngines = SharedEngines::new();
    E.get(opencl_engines)
}

fn capped() -> &'static [Engine] {
    // 4 KiB buffers: 1024 pixels a part, so most test images are split in many parts.
    static E: SharedEngines = SharedEngines::new();
    E.get(|| capped_opencl_engines(4096))
}

/// SPEC.md, pixel by pixel in scan order.
fn reference(img: &TestImage) -> (RgbaHistogram, LuminanceHistogram) {
    let mut rgba = RgbaHistogram {
        counts: [[0; 256]; 4],
    };
    let mut luma = LuminanceHistogram { counts: [0; 1024] };
    for (_, _, l, p) in scan(img) {
        for (counts, v) in rgba.counts.iter_mut().zip(p) {
            counts[v as usize] += 1;
        }
        luma.counts[l as usize] += 1;
    }
    (rgba, luma)
}

/// What histograms find hard, on top of the common contents: one channel constant, alpha all
/// 0 or all 255 (every pixel of that channel in one bin).
#[derive(Debug, Clone, Copy)]
enum Tweak {
    None,
    ChannelConstant(usize, u8),
    Alpha(u8),
}

fn tweak() -> impl Strategy<Value = Tweak> {
    prop_oneof![
        3 => Just(Tweak::None),
        1 => (0..4usize, any::<u8>()).prop_map(|(c, v)| Tweak::ChannelConstant(c, v)),
        1 => prop_oneof![Just(0u8), Just(255u8)].prop_map(Tweak::Alpha),
    ]
}

fn apply(mut img: TestImage, t: Tweak) -> TestImage {
    let (c, v) = match t {
        Tweak::None => return img,
        Tweak::ChannelConstant(c, v) => (c, v),
        Tweak::Alpha(v) => (3, v),
    };
    for y in 0..img.height as usize {
        for x in 0..img.width as usize {
            img.data[y * img.stride + x * 4 + c] = v;
        }
    }
    img.label = format!("{} {t:?}", img.label);
    img
}

fn hist_image() -> impl Strategy<Value = TestImage> {
    (test_image(), tweak()).prop_map(|(img, t)| apply(img, t))
}

type Results = (
    clpix::Result<RgbaHistogram>,
    clpix::Result<LuminanceHistogram>,
);

fn run_host(engine: &Engine, view: ImageView<'_>) -> Results {
    (
        engine.histogram_rgba(view),
        engine.histogram_luminance(view),
    )
}

fn run_device(engine: &Engine, view: ImageView<'_>) -> Results {
    let dev = engine.upload(view).expect("upload");
    (
        engine.histogram_rgba(&dev),
        engine.histogram_luminance(&dev),
    )
}

fn check_sums(r: &Results, pixels: u64) -> Result<(), TestCaseError> {
    let (rgba, luma) = (r.0.as_ref().unwrap(), r.1.as_ref().unwrap());
    for c in 0..4 {
        let s: u64 = rgba.counts[c].iter().map(|&v| v as u64).sum();
        prop_assert_eq!(s, pixels, "channel {}", c);
    }
    prop_assert_eq!(luma.pixel_count(), pixels);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn cpu_matches_the_sequential_reference(img in hist_image()) {
        let cpu = Engine::cpu();
        let (rgba, luma) = reference(&img);
        let got = run_host(&cpu, img.view());
        check_sums(&got, img.width as u64 * img.height as u64)?;
        prop_assert_eq!(got.0.as_ref().ok(), Some(&rgba));
        prop_assert_eq!(got.1.as_ref().ok(), Some(&luma));
        // A device image of the CPU engine (host memory) gives the same.
        prop_assert_eq!(&run_device(&cpu, img.view()), &got);
    }

    #[test]
    fn opencl_matches_cpu_exactly(img in hist_image()) {
        let expected = run_host(&Engine::cpu(), img.view());
        for e in engines() {
            let got = run_host(e, img.view());
            check_sums(&got, img.width as u64 * img.height as u64)?;
            prop_assert_eq!(&got, &expected, "host input on {}", e.backend());
            prop_assert_eq!(&run_device(e, img.view()), &expected, "device input on {}", e.backend());
        }
    }

    #[test]
    fn opencl_in_many_parts_matches_cpu(img in hist_image()) {
        let expected = run_host(&Engine::cpu(), img.view());
        for e in capped() {
            prop_assert_eq!(&run_host(e, img.view()), &expected, "capped host input on {}", e.backend());
            prop_assert_eq!(&run_device(e, img.view()), &expected, "capped device input on {}", e.backend());
        }
    }
}

fn all_engines() -> Vec<&'static Engine> {
    static CPU: OnceLock<Engine> = OnceLock::new();
    let mut all = vec![CPU.get_or_init(Engine::cpu)];
    all.extend(engines());
    all.extend(capped());
    all
}

#[test]
fn known_answers_on_every_backend() {
    // Every byte value once in each channel, in a different order per channel, plus a large
    // constant block: 256 + 300×300 pixels, split in parts on the capped engines.
    let (w, h) = (316u32, 286u32);
    let mut img = make_image(w, h, 8, Content::Constant([1, 2, 3, 4]), 0);
    for i in 0..256usize {
        let (x, y) = (i % w as usize, i / w as usize);
        let px = [i as u8, (255 - i) as u8, (i * 7) as u8, (i * 13 + 5) as u8];
        let at = y * img.stride + x * 4;
        img.data[at..at + 4].copy_from_slice(&px);
    }
    let n = w * h;
    let (rgba, luma) = reference(&img);
    for c in 0..4 {
        // Every value once, the constant's value n - 256 more times.
        for v in 0..256 {
            let extra = if v == c + 1 { n - 256 } else { 0 };
            assert_eq!(rgba.counts[c][v], 1 + extra, "channel {c} value {v}");
        }
    }
    assert_eq!(
        luma.counts[clpix::luminance(1, 2, 3) as usize] as u64,
        n as u64 - 256 + {
            (0..256usize)
                .filter(|&i| {
                    clpix::luminance(i as u8, (255 - i) as u8, (i * 7) as u8)
                        == clpix::luminance(1, 2, 3)
                })
                .count() as u64
        }
    );
    for e in all_engines() {
        assert_eq!(
            e.histogram_rgba(img.view()).unwrap(),
            rgba,
            "{}",
            e.backend()
        );
        assert_eq!(
            e.histogram_luminance(img.view()).unwrap(),
            luma,
            "{}",
            e.backend()
        );
    }
    // White, black and pure green: luminance 1023, 0 and 736.
    let img = image::RgbaImage::from_fn(3, 5, |x, _| {
        image::Rgba([[255, 255, 255, 255], [0, 0, 0, 0], [0, 255, 0, 128]][x as usize])
    });
    for e in all_engines() {
        let l = e.histogram_luminance(&img).unwrap();
        assert_eq!((l.counts[1023], l.counts[0], l.counts[736]), (5, 5, 5));
        assert_eq!(l.pixel_count(), 15);
        let r = e.histogram_rgba(&img).unwrap();
        assert_eq!(
            (r.counts[3][255], r.counts[3][0], r.counts[3][128]),
            (5, 5, 5)
        );
        assert_eq!((r.counts[1][255], r.counts[1][0]), (10, 5));
    }
}

#[test]
fn large_images_with_all_pixels_in_one_bin() {
    // 1024×1024 constant and two-colour images: many work-groups, every pixel in one or two
    // bins; the counts must not saturate or lose increments anywhere.
    for content in [
        Content::Constant([77, 77, 77, 255]),
        Content::TwoColours([0, 0, 0, 0], [255, 255, 255, 255]),
        Content::Random,
    ] {
        let img = make_image(1024, 1024, 0, content, 5);
        let (rgba, luma) = reference(&img);
        for e in all_engines() {
            assert_eq!(
                e.histogram_rgba(img.view()).unwrap(),
                rgba,
                "{content:?} on {}",
                e.backend()
            );
            assert_eq!(
                e.histogram_luminance(img.view()).unwrap(),
                luma,
                "{content:?} on {}",
                e.backend()
            );
        }
    }
}

#[test]
fn empty_images_give_zero_histograms() {
    for (w, h) in [(0, 0), (0, 5), (5, 0)] {
        let data = vec![0u8; 0];
        let view = ImageView::new(&data, w, h).unwrap();
        for e in all_engines() {
            assert_eq!(e.histogram_rgba(view).unwrap(), RgbaHistogram::default());
            assert_eq!(
                e.histogram_luminance(view).unwrap(),
                LuminanceHistogram::default()
            );
            let dev = e.upload(view).unwrap();
            assert_eq!(e.histogram_rgba(&dev).unwrap(), RgbaHistogram::default());
            assert_eq!(
                e.histogram_luminance(&dev).unwrap(),
                LuminanceHistogram::default()
            );
        }
    }
}

#[test]
fn more_than_u32_max_pixels_is_an_error() {
    // 2 × (2^31 + 1) pixels: 16 GiB of zero pages that are mapped but never touched. Skipped
    // where the system refuses to reserve that much address space.
    let (w, h) = (2u32, (1u32 << 31) + 1);
    let len = w as usize * h as usize * 4;
    let Ok(layout) = std::alloc::Layout::from_size_align(len, 4) else {
        return;
    };
    // SAFETY: a non-zero size; the pointer is checked for null and freed with the same layout.
    let ptr = unsafe { std::alloc::alloc_zeroed(layout) };
    if ptr.is_null() {
        eprintln!("SKIPPING: could not reserve {len} bytes of address space");
        return;
    }
    {
        // SAFETY: `len` zeroed bytes owned by this test until the dealloc below.
        let data = unsafe { std::slice::from_raw_parts(ptr, len) };
        let view = ImageView::new(data, w, h).unwrap();
        for e in all_engines() {
            assert!(matches!(
                e.histogram_rgba(view),
                Err(Error::ImageTooLarge { .. })
            ));
            assert!(matches!(
                e.histogram_luminance(view),
                Err(Error::ImageTooLarge { .. })
            ));
        }
    }
    // SAFETY: allocated above with this layout.
    unsafe { std::alloc::dealloc(ptr, layout) };
}

#[test]
fn opencl_profiles_its_kernels() {
    let img = make_image(512, 512, 0, Content::Random, 3).to_image();
    for e in engines() {
        e.histogram_rgba(&img).unwrap();
        assert!(e.last_kernel_time().is_some(), "{}", e.backend());
    }
}
