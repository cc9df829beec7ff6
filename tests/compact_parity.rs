//! Compaction, the sort by luminance, the exclusive scan and array stats: CPU against plain
//! sequential references, and every OpenCL device against the CPU, exactly (whole vectors and
//! images).

mod common;

use clpix::{ArrayStats, CompactOrder, Engine, Error, ImageView, PixelHit};
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

fn reference(img: &TestImage, threshold: u16, sorted: bool) -> Vec<PixelHit> {
    let mut v: Vec<PixelHit> = scan(img)
        .into_iter()
        .filter(|p| p.2 > threshold)
        .map(|(x, y, luminance, rgba)| PixelHit {
            x,
            y,
            luminance,
            rgba,
        })
        .collect();
    if sorted {
        v.sort_by_key(|h| std::cmp::Reverse(h.luminance)); // stable
    }
    v
}

fn reference_image(img: &TestImage, threshold: u16, sorted: bool) -> image::RgbaImage {
    let hits = reference(img, threshold, sorted);
    let mut out = image::RgbaImage::new(img.width, img.height);
    for (i, h) in hits.iter().enumerate() {
        let (x, y) = (i as u32 % img.width, i as u32 / img.width);
        out.put_pixel(x, y, image::Rgba(h.rgba));
    }
    out
}

type Results = (
    clpix::Result<Vec<PixelHit>>,
    clpix::Result<Vec<PixelHit>>,
    clpix::Result<image::RgbaImage>,
    clpix::Result<image::RgbaImage>,
);

fn run_all<'a>(engine: &Engine, input: impl Into<clpix::ImageInput<'a>> + Copy, t: u16) -> Results {
    (
        engine.compact(input.into(), t, clpix::CompactOrder::ScanOrder),
        engine.compact(input.into(), t, clpix::CompactOrder::LuminanceDescending),
        engine.compacted_image(input.into(), t, CompactOrder::ScanOrder),
        engine.compacted_image(input.into(), t, CompactOrder::LuminanceDescending),
    )
}

fn run_device(engine: &Engine, view: ImageView<'_>, t: u16) -> Results {
    let dev = engine.upload(view).expect("upload");
    run_all(engine, &dev, t)
}

fn threshold() -> impl Strategy<Value = u16> {
    prop_oneof![
        1 => Just(0u16),
        1 => Just(1023u16),
        1 => Just(1022u16),
        4 => 0..1024u16,
    ]
}

fn scan_ref(v: &[u32]) -> Vec<u32> {
    let mut out = Vec::with_capacity(v.len());
    let mut run = 0u32;
    for &x in v {
        out.push(run);
        run = run.wrapping_add(x);
    }
    out
}

/// Array stats by a plain sequential loop: the first occurrence wins ties.
fn stats_ref(v: &[u32]) -> ArrayStats {
    let mut s = ArrayStats {
        count: v.len() as u64,
        sum: 0,
        min: v[0],
        max: v[0],
        argmin: 0,
        argmax: 0,
    };
    for (i, &x) in v.iter().enumerate() {
        s.sum += x as u64;
        if x < s.min {
            (s.min, s.argmin) = (x, i as u64);
        }
        if x > s.max {
            (s.max, s.argmax) = (x, i as u64);
        }
    }
    s
}

/// Array contents that break reductions: random, constant, the extremes of u32, two values,
/// few levels (many ties for the minimum and maximum), one planted extreme.
#[derive(Debug, Clone, Copy)]
enum ArrayContent {
    Random,
    Zero,
    AllMax,
    Constant(u32),
    Two(u32, u32),
    FewLevels,
    OneMin,
    OneMax,
}

fn array_content() -> impl Strategy<Value = ArrayContent> {
    prop_oneof![
        3 => Just(ArrayContent::Random),
        1 => Just(ArrayContent::Zero),
        1 => Just(ArrayContent::AllMax),
        1 => any::<u32>().prop_map(ArrayContent::Constant),
        1 => (any::<u32>(), any::<u32>()).prop_map(|(a, b)| ArrayContent::Two(a, b)),
        2 => Just(ArrayContent::FewLevels),
        1 => Just(ArrayContent::OneMin),
        1 => Just(ArrayContent::OneMax),
    ]
}

fn make_array(len: usize, content: ArrayContent, seed: u64) -> Vec<u32> {
    let mut s = seed;
    let planted = (splitmix(&mut s) % len.max(1) as u64) as usize;
    (0..len)
        .map(|i| {
            let r = splitmix(&mut s);
            match content {
                ArrayContent::Random => r as u32,
                ArrayContent::Zero => 0,
                ArrayContent::AllMax => u32::MAX,
                ArrayContent::Constant(c) => c,
                ArrayContent::Two(a, b) => [a, b][(r & 1) as usize],
                ArrayContent::FewLevels => [0, 7, u32::MAX - 1, u32::MAX][(r & 3) as usize],
                ArrayContent::OneMin => {
                    if i == planted {
                        3
                    } else {
                        4 + (r as u32 & 0xff)
                    }
                }
                ArrayContent::OneMax => {
                    if i == planted {
                        u32::MAX
                    } else {
                        r as u32 & 0xff
                    }
                }
            }
        })
        .collect()
}

/// Array stats of `v` on `e`, from the host slice and from an array the engine holds (where it
/// can: a capped engine refuses arrays larger than one buffer, with an error).
fn stats_on(e: &Engine, v: &[u32]) -> Result<(ArrayStats, Option<ArrayStats>), String> {
    let host = e.array_stats(v).map_err(|err| err.to_string())?;
    let device = match e.upload_array(v) {
        Ok(a) => Some(e.array_stats(&a).map_err(|err| err.to_string())?),
        Err(Error::TooLargeForDevice { .. }) => None,
        Err(err) => return Err(err.to_string()),
    };
    Ok((host, device))
}

fn all_engines() -> Vec<&'static Engine> {
    static CPU: OnceLock<Engine> = OnceLock::new();
    let mut v = vec![CPU.get_or_init(Engine::cpu)];
    v.extend(engines());
    v.extend(capped());
    v
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 80, ..ProptestConfig::default() })]

    #[test]
    fn cpu_matches_the_sequential_reference(img in test_image(), t in threshold()) {
        let cpu = Engine::cpu();
        let (a, b, c, d) = run_all(&cpu, img.view(), t);
        prop_assert_eq!(a.unwrap(), reference(&img, t, false));
        prop_assert_eq!(b.unwrap(), reference(&img, t, true));
        prop_assert_eq!(c.unwrap(), reference_image(&img, t, false));
        prop_assert_eq!(d.unwrap(), reference_image(&img, t, true));
    }

    #[test]
    fn opencl_matches_cpu_exactly(img in test_image(), t in threshold()) {
        let expected = run_all(&Engine::cpu(), img.view(), t);
        for e in engines() {
            prop_assert_eq!(&run_all(e, img.view(), t), &expected, "host input on {}", e.backend());
            prop_assert_eq!(&run_device(e, img.view(), t), &expected, "device input on {}", e.backend());
        }
    }

    #[test]
    fn opencl_in_many_parts_matches_cpu(img in test_image(), t in threshold()) {
        let expected = run_all(&Engine::cpu(), img.view(), t);
        for e in capped() {
            prop_assert_eq!(&run_all(e, img.view(), t), &expected, "capped host input on {}", e.backend());
            prop_assert_eq!(&run_device(e, img.view(), t), &expected, "capped device input on {}", e.backend());
        }
    }

    #[test]
    fn scan_matches_a_sequential_scan(
        len in prop_oneof![
            Just(0usize), Just(1), Just(2),
            (1u32..18).prop_flat_map(|k| prop_oneof![Just((1usize << k) - 1), Just(1usize << k), Just((1usize << k) + 1)]),
            0..5000usize,
            5000..300_000usize,
        ],
        big in any::<bool>(),
        seed in any::<u64>(),
    ) {
        let mut s = seed;
        let v: Vec<u32> = (0..len)
            .map(|_| {
                let r = splitmix(&mut s) as u32;
                if big { u32::MAX - (r & 0xff) } else { r & 0xffff }
            })
            .collect();
        let expected = scan_ref(&v);
        for e in all_engines() {
            prop_assert_eq!(&e.exclusive_scan(&v).unwrap(), &expected, "{}", e.backend());
            match e.upload_array(&v) {
                Ok(a) => {
                    let out = e.exclusive_scan_device(&a).unwrap();
                    prop_assert_eq!(out.len(), v.len());
                    prop_assert_eq!(&e.download_array(&out).unwrap(), &expected, "device {}", e.backend());
                }
                // Capped engines: larger than one buffer is an error, never a panic.
                Err(err) => prop_assert!(matches!(err, Error::TooLargeForDevice { .. }), "{}", err),
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn array_stats_match_a_sequential_loop_on_every_engine(
        len in prop_oneof![
            Just(1usize), Just(2), Just(3),
            (1u32..18).prop_flat_map(|k| prop_oneof![Just((1usize << k) - 1), Just(1usize << k), Just((1usize << k) + 1)]),
            prop::sample::select(vec![7usize, 13, 31, 127, 509, 1021, 4093, 65521, 131071]),
            1..5000usize,
            5000..300_000usize,
        ],
        content in array_content(),
        seed in any::<u64>(),
    ) {
        let v = make_array(len, content, seed);
        let expected = stats_ref(&v);
        for e in all_engines() {
            let (host, device) = stats_on(e, &v).map_err(TestCaseError::fail)?;
            prop_assert_eq!(host, expected, "{:?} on {}", content, e.backend());
            if let Some(d) = device {
                prop_assert_eq!(d, expected, "device {:?} on {}", content, e.backend());
            }
        }
    }
}

#[test]
fn array_stats_known_answers() {
    let cases: [(&[u32], ArrayStats); 4] = [
        (
            &[5],
            ArrayStats {
                count: 1,
                sum: 5,
                min: 5,
                max: 5,
                argmin: 0,
                argmax: 0,
            },
        ),
        (
            &[2, 9, 1, 9, 1, 0, 0],
            ArrayStats {
                count: 7,
                sum: 22,
                min: 0,
                max: 9,
                argmin: 5,
                argmax: 1,
            },
        ),
        (
            &[u32::MAX; 3],
            ArrayStats {
                count: 3,
                sum: 3 * u32::MAX as u64,
                min: u32::MAX,
                max: u32::MAX,
                argmin: 0,
                argmax: 0,
            },
        ),
        (
            &[0, 0, 0, 0, 1],
            ArrayStats {
                count: 5,
                sum: 1,
                min: 0,
                max: 1,
                argmin: 0,
                argmax: 4,
            },
        ),
    ];
    for (v, expected) in cases {
        assert_eq!(stats_ref(v), expected);
        for e in all_engines() {
            assert_eq!(
                stats_on(e, v),
                Ok((expected, Some(expected))),
                "{v:?} {}",
                e.backend()
            );
        }
    }
}

#[test]
fn long_array_stats_match() {
    // Several million elements: many work-groups, sums far beyond u32, extremes in the middle
    // and at the end, and all-ties arrays.
    let n = 4_000_037usize;
    let mut random = make_array(n, ArrayContent::Random, 11);
    random[n / 2] = 0;
    random[n - 1] = u32::MAX;
    let cases = [
        random,
        make_array(n, ArrayContent::AllMax, 1),
        make_array(n, ArrayContent::Zero, 2),
        make_array(n, ArrayContent::FewLevels, 3),
        make_array(n, ArrayContent::OneMin, 4),
    ];
    let mut all = vec![Engine::cpu()];
    all.extend(opencl_engines());
    for v in &cases {
        let expected = stats_ref(v);
        for e in &all {
            assert_eq!(
                stats_on(e, v),
                Ok((expected, Some(expected))),
                "{}",
                e.backend()
            );
        }
    }
    assert_eq!(stats_ref(&cases[1]).sum, n as u64 * u32::MAX as u64);
}

#[test]
fn empty_arrays_have_no_stats_and_capped_arrays_are_errors() {
    for e in all_engines() {
        let err = e.array_stats(&[]).unwrap_err();
        assert!(matches!(err, Error::InvalidParameter { .. }), "{err}");
        assert!(err.to_string().contains("at least one element"), "{err}");
        let a = e.upload_array(&[]).unwrap();
        let err = e.array_stats(&a).unwrap_err();
        assert!(matches!(err, Error::InvalidParameter { .. }), "{err}");
    }
    // 4 KiB buffers: 1024 u32. A larger device array is an error; its host slice is reduced in
    // parts.
    let v = make_array(5000, ArrayContent::Random, 9);
    for e in capped() {
        let err = e.upload_array(&v).unwrap_err();
        assert!(matches!(err, Error::TooLargeForDevice { .. }), "{err}");
        assert_eq!(e.array_stats(&v).unwrap(), stats_ref(&v));
    }
}

#[test]
fn a_long_scan_matches() {
    let n = 5_000_003usize;
    let mut s = 7u64;
    let v: Vec<u32> = (0..n).map(|_| splitmix(&mut s) as u32).collect();
    let expected = scan_ref(&v);
    let mut all = vec![Engine::cpu()];
    all.extend(opencl_engines());
    for e in &all {
        assert_eq!(e.exclusive_scan(&v).unwrap(), expected, "{}", e.backend());
        let a = e.upload_array(&v).unwrap();
        let out = e.exclusive_scan_device(&a).unwrap();
        assert_eq!(e.download_array(&out).unwrap(), expected, "{}", e.backend());
    }
}

#[test]
fn arrays_move_between_engines() {
    let v: Vec<u32> = (0..10_000).collect();
    let cpu = Engine::cpu();
    for e in opencl_engines() {
        let a = e.upload_array(&v).unwrap();
        let s = cpu.exclusive_scan_device(&a).unwrap();
        assert_eq!(cpu.download_array(&s).unwrap(), scan_ref(&v));
        assert_eq!(cpu.array_stats(&a).unwrap(), stats_ref(&v));
        let h = cpu.upload_array(&v).unwrap();
        let s = e.exclusive_scan_device(&h).unwrap();
        assert_eq!(e.download_array(&s).unwrap(), scan_ref(&v));
        assert_eq!(e.array_stats(&h).unwrap(), stats_ref(&v));
        // An array of another OpenCL engine (another context): read back, same results.
        for other in opencl_engines().iter().take(1) {
            let o = other.upload_array(&v).unwrap();
            assert_eq!(e.array_stats(&o).unwrap(), stats_ref(&v));
        }
    }
}

#[test]
fn edge_cases_on_every_backend() {
    let cases = compaction_edge_cases();
    for img in &cases {
        for t in [0u16, 1, 512, 1022, 1023] {
            let expected = run_all(&Engine::cpu(), img.view(), t);
            assert_eq!(expected.0.as_ref().unwrap(), &reference(img, t, false));
            assert_eq!(expected.1.as_ref().unwrap(), &reference(img, t, true));
            for e in all_engines() {
                assert_eq!(
                    run_all(e, img.view(), t),
                    expected,
                    "{img:?} t {t} {}",
                    e.backend()
                );
                assert_eq!(
                    run_device(e, img.view(), t),
                    expected,
                    "{img:?} t {t} {}",
                    e.backend()
                );
            }
        }
    }
    let last = cases.last().expect("edge cases");
    let hits = Engine::cpu()
        .compact(last.view(), 1000, clpix::CompactOrder::ScanOrder)
        .unwrap();
    assert_eq!(hits.len(), 1);
    assert_eq!(
        (hits[0].x, hits[0].y, hits[0].rgba),
        (332, 76, [255, 255, 255, 7])
    );
}

/// The GPU sort's groups whose kept pixels share one radix digit, which are copied or relocated
/// in scan order instead of ranked by digit: half an image constant and half random (groups of
/// both kinds in one pass); two colours whose digits are 7 and 31, the last digit, in pass 1
/// (L 600 and 512) or 13 and 31 in pass 2 (L 600 and 20), so that no group has one digit
/// (83,000 pixels: 11 tiles of 8192, so the last group is not empty either); a threshold above
/// 991, where every kept bin has the high digit 0; and a white image with one black pixel,
/// whose group keeps all its pixels but one (relocated, not copied).
#[test]
fn single_digit_groups_match_cpu() {
    assert_eq!(clpix::luminance(1, 177, 0), 512);
    assert_eq!(clpix::luminance(0, 208, 0), 600);
    assert_eq!(clpix::luminance(5, 5, 5), 20);
    let mut half = make_image(1024, 700, 0, Content::Random, 21);
    let mid = half.data.len() / 2;
    for px in half.data[..mid].chunks_exact_mut(4) {
        px.copy_from_slice(&[250, 240, 10, 255]);
    }
    // White but for one black pixel.
    let mut holed = make_image(1000, 83, 0, Content::White, 26);
    holed.data[4 * 5000..4 * 5001].copy_from_slice(&[0, 0, 0, 255]);
    let two =
        |a: [u8; 4], b: [u8; 4], seed| make_image(1000, 83, 0, Content::TwoColours(a, b), seed);
    let cases = [
        (half.clone(), 100),
        (half, 700),
        (two([1, 177, 0, 255], [0, 208, 0, 9], 22), 400),
        (two([5, 5, 5, 255], [0, 208, 0, 9], 23), 10),
        (make_image(999, 333, 0, Content::Random, 24), 995),
        (make_image(999, 333, 0, Content::White, 25), 992),
        (holed, 512),
    ];
    let cpu = Engine::cpu();
    for (img, t) in &cases {
        let expected = run_all(&cpu, img.view(), *t);
        assert_eq!(expected.1.as_ref().unwrap(), &reference(img, *t, true));
        for e in all_engines() {
            // assert!, not assert_eq!: the results are large, so a failure names the case only.
            let got = run_all(e, img.view(), *t);
            assert!(got == expected, "{img:?} t {t} {}", e.backend());
        }
    }
}

#[test]
fn bad_thresholds_are_errors_and_empty_images_give_empty_results() {
    let img = make_image(5, 5, 0, Content::Random, 1);
    let data = vec![0u8; 0];
    let empty = ImageView::new(&data, 0, 7).unwrap();
    for e in all_engines() {
        for t in [1024u16, u16::MAX] {
            assert!(matches!(
                e.compact(img.view(), t, clpix::CompactOrder::ScanOrder),
                Err(Error::InvalidParameter { .. })
            ));
            assert!(matches!(
                e.compact(img.view(), t, clpix::CompactOrder::LuminanceDescending),
                Err(Error::InvalidParameter { .. })
            ));
            assert!(matches!(
                e.compacted_image(img.view(), t, CompactOrder::ScanOrder),
                Err(Error::InvalidParameter { .. })
            ));
        }
        assert!(
            e.compact(empty, 0, clpix::CompactOrder::ScanOrder)
                .unwrap()
                .is_empty()
        );
        assert!(
            e.compact(empty, 0, clpix::CompactOrder::LuminanceDescending)
                .unwrap()
                .is_empty()
        );
        let out = e
            .compacted_image(empty, 0, CompactOrder::LuminanceDescending)
            .unwrap();
        assert_eq!(out.dimensions(), (0, 7));
    }
}
