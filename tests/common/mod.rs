//! Shared test support: the engines to test, proptest strategies for images, and plain
//! sequential references of SPEC.md.
#![allow(dead_code)]

use clpix::{Engine, ImageView};
use proptest::prelude::*;
use std::sync::{Mutex, OnceLock};
pub mod blobs;
mod engines;
pub mod formats;
mod shared;
pub use engines::*;
#[allow(unused_imports)] // not every test binary runs every format
pub use formats::{every_format_op, every_format_op_held};
#[allow(unused_imports)] // not every test binary shares engines
pub use shared::SharedEngines;

/// The compaction's adversarial images, 333×77 unless said: all ties, everything kept, nothing
/// kept, strided rows, many groups (1024×700), rows ending in a partial second tile of the
/// GPU kernels (2100 and 4200 pixels), one kept pixel in the last position.
pub fn compaction_edge_cases() -> Vec<TestImage> {
    let (w, h) = (333u32, 77u32);
    let mut cases = vec![
        make_image(w, h, 0, Content::Constant([10, 200, 30, 255]), 1),
        make_image(w, h, 0, Content::White, 2),
        make_image(w, h, 0, Content::Black, 3),
        make_image(w, h, 12, Content::Random, 4),
        make_image(1024, 700, 0, Content::Random, 5),
        make_image(2100, 1, 0, Content::Random, 7),
        make_image(4200, 1, 0, Content::Random, 8),
    ];
    let mut last = make_image(w, h, 0, Content::Black, 6);
    let n = last.data.len();
    last.data[n - 4..].copy_from_slice(&[255, 255, 255, 7]);
    cases.push(last);
    cases
}

/// The warp compaction kernels' cases (emulated and single-pass tests): the edge cases at three
/// thresholds, odd and one-pixel shapes, two colours, and an image of hundreds of 4096-pixel
/// tiles.
pub fn warp_compaction_cases() -> Vec<(TestImage, u16)> {
    let mut cases: Vec<(TestImage, u16)> = compaction_edge_cases()
        .into_iter()
        .flat_map(|img| [(img.clone(), 0), (img.clone(), 400), (img, 1022)])
        .collect();
    cases.extend([
        (make_image(1, 1, 0, Content::White, 9), 1022),
        (make_image(4097, 3, 8, Content::Random, 10), 512),
        (make_image(517, 300, 0, Content::FewLevels, 11), 400),
        (make_image(9000, 1, 0, Content::Black, 12), 0),
        (
            make_image(
                2048,
                9,
                4,
                Content::TwoColours([0, 0, 0, 255], [250, 250, 250, 255]),
                13,
            ),
            512,
        ),
        (make_image(1031, 1031, 0, Content::Random, 14), 512),
        (make_image(1031, 1031, 0, Content::White, 15), 0),
    ]);
    cases
}

/// Every warp compaction case on `engines` against the CPU, hits and compacted images; `refused` says which
/// engines must refuse the forced kernels instead (an error naming `compact_relocate`);
/// `phase` names the run in failures.
pub fn check_warp_compaction(engines: &[Engine], refused: impl Fn(&Engine) -> bool, phase: &str) {
    let cpu = Engine::cpu();
    for (img, t) in &warp_compaction_cases() {
        let expected_hits = cpu
            .compact(img.view(), *t, clpix::CompactOrder::ScanOrder)
            .unwrap();
        let expected_image = cpu
            .compacted_image(img.view(), *t, clpix::CompactOrder::ScanOrder)
            .unwrap();
        for e in engines {
            let hits = e.compact(img.view(), *t, clpix::CompactOrder::ScanOrder);
            if refused(e) {
                match hits {
                    Err(clpix::Error::InvalidTuning { setting, .. }) => {
                        assert_eq!(setting, "compact_relocate")
                    }
                    other => panic!("{phase} {}: not refused: {other:?}", e.backend()),
                }
                continue;
            }
            let hits = match hits {
                Err(err) if refused_there(&err) => continue,
                hits => hits.unwrap_or_else(|err| panic!("{phase} {}: {err}", e.backend())),
            };
            assert!(
                hits == expected_hits,
                "{phase} {} {img:?} t {t}: hits",
                e.backend()
            );
            let image = e
                .compacted_image(img.view(), *t, clpix::CompactOrder::ScanOrder)
                .unwrap();
            assert!(
                image == expected_image,
                "{phase} {} {img:?} t {t}: image",
                e.backend()
            );
        }
    }
}

#[derive(Clone)]
pub struct TestImage {
    pub data: Vec<u8>,
    pub width: u32,
    pub height: u32,
    pub stride: usize,
    pub label: String,
}

impl std::fmt::Debug for TestImage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}×{} stride {} ({})",
            self.width, self.height, self.stride, self.label
        )
    }
}

impl TestImage {
    pub fn view(&self) -> ImageView<'_> {
        ImageView::with_stride(&self.data, self.width, self.height, self.stride)
            .expect("valid test image")
    }
    pub fn pixel(&self, x: u32, y: u32) -> [u8; 4] {
        self.view().pixel(x, y)
    }
    pub fn to_image(&self) -> image::RgbaImage {
        self.view().to_image()
    }
}

/// What fills a test image: random data and the content that breaks reductions, histograms
/// and sorts.
#[derive(Debug, Clone, Copy)]
pub enum Content {
    Random,
    Constant([u8; 4]),
    Black,
    White,
    TwoColours([u8; 4], [u8; 4]),
    OneBright,
    FewLevels,
    Gradient,
}

pub fn content() -> impl Strategy<Value = Content> {
    prop_oneof![
        3 => Just(Content::Random),
        1 => any::<[u8; 4]>().prop_map(Content::Constant),
        1 => Just(Content::Black),
        1 => Just(Content::White),
        1 => (any::<[u8; 4]>(), any::<[u8; 4]>()).prop_map(|(a, b)| Content::TwoColours(a, b)),
        1 => Just(Content::OneBright),
        1 => Just(Content::FewLevels),
        1 => Just(Content::Gradient),
    ]
}

/// Sizes: 1×1, 1×N, N×1, odd, prime, and larger than several work-groups.
pub fn dims() -> impl Strategy<Value = (u32, u32)> {
    prop_oneof![
        Just((1, 1)),
        (1..300u32).prop_map(|w| (w, 1)),
        (1..300u32).prop_map(|h| (1, h)),
        (1..48u32, 1..48u32),
        prop::sample::select(vec![
            (2, 3),
            (7, 13),
            (31, 37),
            (97, 101),
            (257, 3),
            (3, 257),
            (1031, 1),
            (127, 129)
        ]),
        (150..420u32, 150..420u32),
    ]
}

pub fn splitmix(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

pub fn make_image(width: u32, height: u32, pad: usize, content: Content, seed: u64) -> TestImage {
    let stride = width as usize * 4 + pad;
    let mut s = seed;
    // Padding is filled with 0xEE: a kernel that reads it as pixels shows up as a mismatch.
    let mut data = vec![0xEEu8; stride * height as usize];
    let bright = (splitmix(&mut s) % (width as u64 * height as u64).max(1)) as u32;
    let (a, b) = ([splitmix(&mut s) as u8; 4], [splitmix(&mut s) as u8; 4]);
    for y in 0..height {
        for x in 0..width {
            let r = splitmix(&mut s).to_le_bytes();
            let px: [u8; 4] = match content {
                Content::Random => [r[0], r[1], r[2], r[3]],
                Content::Constant(c) => c,
                Content::Black => [0, 0, 0, 255],
                Content::White => [255, 255, 255, 255],
                Content::TwoColours(c0, c1) => {
                    if r[0] & 1 == 0 {
                        c0
                    } else {
                        c1
                    }
                }
                Content::OneBright => {
                    if y * width + x == bright {
                        [255, 255, 255, 255]
                    } else {
                        [r[0] & 0x3f, r[1] & 0x3f, r[2] & 0x3f, 255]
                    }
                }
                Content::FewLevels => [r[0] & 0xc0, r[1] & 0xc0, r[2] & 0xc0, r[3] & 0x80],
                Content::Gradient => {
                    let _ = (a, b);
                    [
                        (x * 255 / width.max(1)) as u8,
                        (y * 255 / height.max(1)) as u8,
                        128,
                        255,
                    ]
                }
            };
            let i = y as usize * stride + x as usize * 4;
            data[i..i + 4].copy_from_slice(&px);
        }
    }
    TestImage {
        data,
        width,
        height,
        stride,
        label: format!("{content:?}"),
    }
}

/// Random test images: every size class, every content, with or without row padding.
pub fn test_image() -> impl Strategy<Value = TestImage> {
    (
        dims(),
        prop_oneof![3 => Just(0usize), 1 => 1..24usize],
        content(),
        any::<u64>(),
    )
        .prop_map(|((w, h), pad, c, seed)| make_image(w, h, pad * 4 / 4, c, seed))
}

/// SPEC.md luminance, written out plainly.
pub fn spec_luma(p: [u8; 4]) -> u16 {
    ((1023 * (21 * p[0] as u32 + 72 * p[1] as u32 + 7 * p[2] as u32)) / 25500) as u16
}

/// Every pixel in scan order with its luminance: the sequential reference.
pub fn scan(img: &TestImage) -> Vec<(u32, u32, u16, [u8; 4])> {
    let mut out = Vec::new();
    for y in 0..img.height {
        for x in 0..img.width {
            let p = img.pixel(x, y);
            out.push((x, y, spec_luma(p), p));
        }
    }
    out
}

/// Every operation of the library on one input, each result (value or error) as text, so that
/// backends can be compared wholesale. Operations add themselves here as they land.
pub fn every_op(e: &Engine, input: clpix::ImageInput<'_>) -> Vec<String> {
    use clpix::{Border, GaussianBlur};
    // The f32 blur takes host f32 images: the input's pixels, as f32.
    let rgba = match input {
        clpix::ImageInput::Host(v) => Ok(v.to_image()),
        clpix::ImageInput::Device(d) => e.download(d),
    };
    // The pixels as a u32 array, for the array operations.
    let words: Vec<u32> = rgba
        .as_ref()
        .map(|img| {
            img.as_raw()
                .chunks_exact(4)
                .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                .collect()
        })
        .unwrap_or_default();
    // Device-resident arrays; an engine capped below the array's size refuses it (tested on
    // its own in compact_parity), and then the host path stands in.
    let on_device = e
        .upload_array(&words)
        .and_then(|a| {
            Ok((
                e.array_stats(&a)?,
                e.download_array(&e.exclusive_scan_device(&a)?)?,
            ))
        })
        .or_else(|err| match err {
            clpix::Error::TooLargeForDevice { .. } => {
                Ok((e.array_stats(&words)?, e.exclusive_scan(&words)?))
            }
            other => Err(other),
        });
    let f32_blur = rgba.map(|img| {
        let f = image::Rgba32FImage::from_fn(img.width(), img.height(), |x, y| {
            let p = img.get_pixel(x, y).0;
            image::Rgba(p.map(|c| c as f32 / 7.0 - 3.0))
        });
        let bits = |o: image::Rgba32FImage| {
            o.into_raw()
                .iter()
                .map(|v| v.to_bits())
                .collect::<Vec<u32>>()
        };
        let blur = GaussianBlur::new(4).border(Border::Reflect);
        // The same blur of the image uploaded, kept on the device, read back; an engine capped
        // below the image's size refuses it (tested in blur_parity), and then the host call
        // stands in.
        // A device that flushes f32 denormals (rusticl on llvmpipe) refuses the f32 blur, as it
        // must (blur_parity checks the refusal): the CPU's answer stands in, and the other
        // operations are still compared.
        let refused = |r: &clpix::Result<Vec<u32>>| {
            matches!(r, Err(clpix::Error::DeviceLimit { what, .. }) if what.contains("denormals"))
        };
        let host = e.gaussian_blur_f32(&f, &blur).map(bits);
        if refused(&host) {
            let cpu = Engine::cpu().gaussian_blur_f32(&f, &blur).map(bits);
            return (cpu.clone(), cpu);
        }
        let on_device = e
            .upload_f32(&f)
            .and_then(|d| e.gaussian_blur_f32_device(&d, &blur))
            .and_then(|d| e.download_f32(&d))
            .map(bits)
            .or_else(|err| match err {
                clpix::Error::TooLargeForDevice { .. } => host.clone(),
                other => Err(other),
            });
        (host, on_device)
    });
    vec![
        format!(
            "{:?}",
            e.gaussian_blur(input, &GaussianBlur::new(2))
                .map(|i| i.into_raw())
        ),
        format!(
            "{:?}",
            e.gaussian_blur(input, &GaussianBlur::new(9).border(Border::Wrap))
                .map(|i| i.into_raw())
        ),
        format!(
            "{:?}",
            e.gaussian_blur(input, &GaussianBlur::new(5).sigma(1.3).border(Border::Zero))
                .map(|i| i.into_raw())
        ),
        format!("{f32_blur:?}"),
        format!("{:?}", e.extreme(input, clpix::Extreme::Brightest)),
        format!("{:?}", e.extreme(input, clpix::Extreme::Darkest)),
        format!("{:?}", e.luminance_stats(input)),
        format!("{:?}", e.histogram_rgba(input)),
        format!("{:?}", e.histogram_luminance(input)),
        format!(
            "{:?}",
            e.compact(input, 512, clpix::CompactOrder::ScanOrder)
        ),
        format!(
            "{:?}",
            e.compact(input, 300, clpix::CompactOrder::LuminanceDescending)
        ),
        format!(
            "{:?}",
            e.compacted_image(input, 100, clpix::CompactOrder::LuminanceDescending)
                .map(|i| i.into_raw())
        ),
        format!("{:?}", e.extremes(input, clpix::Extreme::Brightest, 5, 3.0)),
        format!("{:?}", e.extremes(input, clpix::Extreme::Darkest, 7, 0.0)),
        format!("{:?}", e.exclusive_scan(&words)),
        format!("{:?}", e.array_stats(&words)),
        format!("{on_device:?}"),
    ]
}

/// The four borders.
pub fn border() -> impl Strategy<Value = clpix::Border> {
    use clpix::Border;
    prop::sample::select(vec![
        Border::Clamp,
        Border::Reflect,
        Border::Wrap,
        Border::Zero,
    ])
}

/// `cases` random blurs (an image of [`test_image`], one of `radii`, a border, a sigma) on each
/// of `engines` against the CPU path, exactly; `label` names the kernels under test in a
/// failure. A runner made by hand (for tests that set the environment between runs) has no
/// source file to persist failures beside: none kept.
pub fn random_blurs_match_cpu(engines: &[&Engine], radii: &[u32], cases: u32, label: &str) {
    use clpix::GaussianBlur;
    let cpu = Engine::cpu();
    let config = ProptestConfig {
        cases,
        failure_persistence: None,
        ..ProptestConfig::default()
    };
    let mut runner = proptest::test_runner::TestRunner::new(config);
    let strategy = (
        test_image(),
        prop::sample::select(radii.to_vec()),
        border(),
        0.3f64..30.0,
    );
    runner
        .run(&strategy, |(img, radius, border, sigma)| {
            let blur = GaussianBlur::new(radius).sigma(sigma).border(border);
            let expected = cpu.gaussian_blur(img.view(), &blur).unwrap();
            for e in engines {
                let got = match e.gaussian_blur(img.view(), &blur) {
                    Err(err) if refused_there(&err) => continue,
                    got => got.unwrap(),
                };
                prop_assert!(
                    got == expected,
                    "{label}: {} {:?} {:?}",
                    e.backend(),
                    img,
                    blur
                );
            }
            Ok(())
        })
        .unwrap();
}

/// A fresh folder holding a copy of the kernel sources as `CLPIX_KERNEL_DIR` takes them: the
/// repository's `cl/` folder (`common.h`, `<op>/*.cl`). Found in the source tree, or (test
/// binaries copied to another machine, e.g. into `.gpu/`) in `../cl` or `./cl`. `edit` may
/// change a file's text (its path under `cl/`, such as `blur/blur_radius.cl`, and its text).
#[allow(dead_code)]
pub fn kernel_dir_copy(label: &str, edit: impl Fn(&str, &mut String)) -> std::path::PathBuf {
    use std::path::{Path, PathBuf};
    let src = [
        Path::new(env!("CARGO_MANIFEST_DIR")).join("cl"),
        PathBuf::from("../cl"),
        PathBuf::from("cl"),
    ]
    .into_iter()
    .find(|p| p.join("common.h").exists())
    .expect("the kernel sources in cl/");
    let dir = std::env::temp_dir().join(format!("clpix-{label}-{}", std::process::id()));
    fn walk(d: &Path, out: &mut Vec<PathBuf>) {
        for e in std::fs::read_dir(d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(&p, out);
            } else {
                out.push(p);
            }
        }
    }
    let mut files = Vec::new();
    walk(&src, &mut files);
    for f in files {
        let rel = f
            .strip_prefix(&src)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        let mut text = std::fs::read_to_string(&f).unwrap();
        edit(&rel, &mut text);
        let to = dir.join(&rel);
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::write(to, text).unwrap();
    }
    dir
}
