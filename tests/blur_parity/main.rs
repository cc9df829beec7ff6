//! Gaussian blur: CPU against plain sequential references of SPEC.md, and every OpenCL device
//! against the CPU, exactly (RGBA8 and f32, all borders, radii beyond the image and the tile).
// The references are written like SPEC.md: index loops, `acc = acc + w * x`.
#![allow(clippy::needless_range_loop, clippy::assign_op_pattern)]

#[path = "../common/mod.rs"]
mod common;

use clpix::{Border, Engine, Error, GaussianBlur, ImageView};
use common::*;
use proptest::prelude::*;
mod reference;
use reference::*;
mod cases;
mod formats;

fn engines() -> &'static [Engine] {
    static E: SharedEngines = SharedEngines::new();
    E.get(opencl_engines)
}

/// Engines with small buffer caps (4 KiB and 16 KiB), in both kernel layouts: every image of
/// more than a few hundred pixels is blurred in bands, many of them.
fn capped() -> &'static [Engine] {
    static E: SharedEngines = SharedEngines::new();
    E.get(|| {
        let mut v = Vec::new();
        if let Ok(list) = common::test_devices() {
            for d in &list {
                for cap in [4096u64, 16384] {
                    for layout in [
                        clpix::KernelLayout::Contiguous,
                        clpix::KernelLayout::Coalesced,
                    ] {
                        let config = clpix::EngineConfig {
                            max_buffer_bytes: Some(cap),
                            layout,
                            ..Default::default()
                        };
                        match Engine::with_device_config(d, &config) {
                            Ok(e) => v.push(e),
                            // A driver that stops long loops (rusticl on llvmpipe) refuses
                            // the contiguous layout (tests/distrust.rs checks that it does):
                            // its automatic layout in its place, two engines a cap as ever.
                            Err(clpix::Error::Unsupported { .. }) => {
                                let auto = clpix::EngineConfig {
                                    layout: clpix::KernelLayout::Auto,
                                    ..config
                                };
                                v.push(
                                    Engine::with_device_config(d, &auto)
                                        .unwrap_or_else(|e| panic!("{}: {e}", d.name)),
                                );
                            }
                            Err(e) => panic!("{}: {e}", d.name),
                        }
                    }
                }
            }
        }
        v
    })
}

/// Whether an image `width` pixels wide can be blurred on an engine capped at `cap` bytes:
/// one row with its intermediate and accumulator rows (16 bytes a pixel) must fit a buffer.
fn row_fits(width: u32, cap: u64) -> bool {
    16 * width as u64 <= cap
}

/// Radii from 0 to beyond the image and the 128-wide tile; large radii only on small images
/// (so the sequential references stay fast).
fn blur_for(pixels: u64) -> impl Strategy<Value = GaussianBlur> {
    blur_up_to(if pixels <= 20_000 { 150 } else { 12 })
}

/// On engines capped at a few KiB, bands of one or two rows take their taps one or two at a
/// time: radii up to 150 on images of up to 2,500 pixels, 12 beyond.
fn capped_blur_for(pixels: u64) -> impl Strategy<Value = GaussianBlur> {
    blur_up_to(if pixels <= 2_500 { 150 } else { 12 })
}

fn blur_up_to(max: u32) -> impl Strategy<Value = GaussianBlur> {
    (
        prop_oneof![2 => 0..4u32, 2 => 0..=12u32, 1 => 0..=max],
        prop_oneof![2 => Just(None), 1 => (0.2f64..40.0).prop_map(Some)],
        border(),
    )
        .prop_map(|(r, s, b)| {
            let g = GaussianBlur::new(r).border(b);
            match s {
                Some(s) => g.sigma(s),
                None => g,
            }
        })
}

fn image_and_blur() -> impl Strategy<Value = (TestImage, GaussianBlur)> {
    test_image().prop_flat_map(|img| {
        let p = img.width as u64 * img.height as u64;
        (Just(img), blur_for(p))
    })
}

fn capped_image_and_blur() -> impl Strategy<Value = (TestImage, GaussianBlur)> {
    test_image().prop_flat_map(|img| {
        let p = img.width as u64 * img.height as u64;
        (Just(img), capped_blur_for(p))
    })
}

fn f32_image(w: u32, h: u32, seed: u64, specials: bool) -> image::Rgba32FImage {
    let mut s = seed;
    image::Rgba32FImage::from_fn(w, h, |_, _| {
        let mut px = [0f32; 4];
        for v in &mut px {
            let r = splitmix(&mut s);
            *v = match r % 16 {
                0 if specials => f32::NAN,
                1 if specials => f32::INFINITY,
                2 if specials => -0.0,
                3 if specials => 1e-40,
                _ => ((r >> 8) % 100_000) as f32 / 997.0 - 50.0,
            };
        }
        image::Rgba(px)
    })
}

/// Equal bits, NaN matching any NaN (SPEC.md: NaN stays NaN; its sign and payload depend on
/// the hardware's default NaN and on operand order, which compilers may commute).
/// Whether `e` refuses the f32 blur because its device flushes f32 denormals (no
/// `CL_FP_DENORM`: rusticl on llvmpipe), as it must: one fused multiply-add a tap, subnormals
/// kept, is the f32 blur's specification. Every other refusal, and an answer, is `false`.
fn flushes_denormals(e: &Engine) -> bool {
    let probe = image::Rgba32FImage::from_pixel(3, 2, image::Rgba([1e-39, 0.5, -2.0, 1.0]));
    match e.gaussian_blur_f32(&probe, &GaussianBlur::new(1)) {
        Err(Error::DeviceLimit { what, .. }) => {
            assert!(what.contains("denormals"), "{what}");
            true
        }
        _ => false,
    }
}

fn same_bits(a: &[f32], b: &[f32]) -> bool {
    a.len() == b.len()
        && a.iter()
            .zip(b)
            .all(|(x, y)| x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan()))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn cpu_matches_the_sequential_reference((img, blur) in image_and_blur()) {
        let out = Engine::cpu().gaussian_blur(img.view(), &blur).unwrap();
        prop_assert!(out == reference_u8(&img, &blur), "{:?} {:?}", img, blur);
    }

    #[test]
    fn into_calls_write_every_value_and_match(
        (img, blur) in image_and_blur(), seed in any::<u64>(), specials in any::<bool>(),
    ) {
        // The results written over images full of other values (every value must be
        // written), on the CPU and every device; an image kept on the device as input too.
        let expected = Engine::cpu().gaussian_blur(img.view(), &blur).unwrap();
        let (w, h) = (img.width, img.height);
        let f = f32_image(w.min(200), h.min(100), seed, specials);
        let expected_f = Engine::cpu().gaussian_blur_f32(&f, &blur).unwrap();
        let cpu = Engine::cpu();
        for e in std::iter::once(&cpu).chain(engines()) {
            let mut out = image::RgbaImage::from_pixel(w, h, image::Rgba([7, 77, 177, 255]));
            e.gaussian_blur_into(img.view(), &blur, &mut out).unwrap();
            prop_assert!(out == expected, "host input into on {} {:?}", e.backend(), blur);
            let dev = e.upload(img.view()).unwrap();
            out.pixels_mut().for_each(|p| *p = image::Rgba([1, 2, 3, 4]));
            e.gaussian_blur_into(&dev, &blur, &mut out).unwrap();
            prop_assert!(out == expected, "device input into on {}", e.backend());
            // Bytes that are not 4-aligned (a CPU device cannot write them as words in place).
            let mut odd = vec![5u8; out.len() + 1];
            e.gaussian_blur_into(img.view(), &blur, &mut odd[1..]).unwrap();
            prop_assert!(odd[1..] == expected.as_raw()[..], "unaligned into on {}", e.backend());
            if flushes_denormals(e) {
                continue;
            }
            let mut out_f = image::Rgba32FImage::from_pixel(f.width(), f.height(), image::Rgba([f32::NAN; 4]));
            e.gaussian_blur_f32_into(&f, &blur, &mut out_f).unwrap();
            prop_assert!(same_bits(out_f.as_raw(), expected_f.as_raw()), "f32 into on {} {:?}", e.backend(), blur);
        }
    }

    #[test]
    fn opencl_matches_cpu_exactly((img, blur) in image_and_blur()) {
        let expected = Engine::cpu().gaussian_blur(img.view(), &blur).unwrap();
        for e in engines() {
            let host = e.gaussian_blur(img.view(), &blur).unwrap();
            prop_assert!(host == expected, "host input on {} {:?} {:?}", e.backend(), img, blur);
            let dev = e.upload(img.view()).unwrap();
            let from_dev = e.gaussian_blur(&dev, &blur).unwrap();
            prop_assert!(from_dev == expected, "device input on {}", e.backend());
            let kept = e.gaussian_blur_device(&dev, &blur).unwrap();
            prop_assert!(e.download(&kept).unwrap() == expected, "device output on {}", e.backend());
        }
    }

    #[test]
    fn f32_cpu_matches_reference_and_opencl_matches_cpu(
        (w, h) in dims(), seed in any::<u64>(), specials in any::<bool>(),
        blur in blur_for(20_000),
    ) {
        let (w, h) = if w as u64 * h as u64 > 20_000 && blur.radius() > 12 { (w.min(100), h.min(100)) } else { (w, h) };
        let img = f32_image(w, h, seed, specials);
        let cpu = Engine::cpu().gaussian_blur_f32(&img, &blur).unwrap();
        prop_assert!(same_bits(cpu.as_raw(), &reference_f32(&img, &blur)), "{}x{} {:?}", w, h, blur);
        for e in engines().iter().filter(|e| !flushes_denormals(e)) {
            let out = e.gaussian_blur_f32(&img, &blur).unwrap();
            prop_assert!(same_bits(out.as_raw(), cpu.as_raw()), "{} {}x{} {:?}", e.backend(), w, h, blur);
            // On the device: uploaded, blurred there, read back.
            let dev = e.upload_f32(&img).unwrap();
            let kept = e.gaussian_blur_f32_device(&dev, &blur).unwrap();
            let back = e.download_f32(&kept).unwrap();
            prop_assert!(same_bits(back.as_raw(), cpu.as_raw()), "device {} {}x{} {:?}", e.backend(), w, h, blur);
        }
    }

    #[test]
    fn constant_images_stay_constant(
        (w, h) in (1..70u32, 1..70u32), px in any::<[u8; 4]>(), r in 0..=150u32,
        sigma in prop::option::of(0.1f64..100.0),
        b in prop::sample::select(vec![Border::Clamp, Border::Reflect, Border::Wrap]),
    ) {
        let img = image::RgbaImage::from_pixel(w, h, image::Rgba(px));
        let mut blur = GaussianBlur::new(r).border(b);
        if let Some(s) = sigma { blur = blur.sigma(s); }
        let mut all = vec![Engine::cpu()];
        all.extend(opencl_engines());
        for e in &all {
            prop_assert!(e.gaussian_blur(&img, &blur).unwrap() == img, "{}", e.backend());
        }
    }

    #[test]
    fn within_one_of_the_real_valued_blur(img in test_image(), r in 1..=30u32, b in border()) {
        prop_assume!((img.width as u64 * img.height as u64) * r as u64 <= 400_000);
        let blur = GaussianBlur::new(r).border(b);
        let out = Engine::cpu().gaussian_blur(img.view(), &blur).unwrap();
        let n = blur.weights_f64().unwrap();
        let (w, h, r) = (img.width as i64, img.height as i64, r as i64);
        for y in 0..h {
            for x in 0..w {
                for c in 0..4 {
                    let mut acc = 0f64;
                    for j in -r..=r {
                        let Some(sy) = spec_map(y + j, h, b) else { continue };
                        for i in -r..=r {
                            if let Some(sx) = spec_map(x + i, w, b) {
                                acc += n[(i + r) as usize] * n[(j + r) as usize]
                                    * img.pixel(sx as u32, sy as u32)[c] as f64;
                            }
                        }
                    }
                    let got = out.get_pixel(x as u32, y as u32)[c] as f64;
                    prop_assert!((got - acc.round()).abs() <= 1.0, "({x},{y}) c{c}: {got} vs {acc}");
                }
            }
        }
    }
}

proptest! {
    // Many bands and tap chunks per case on small caps; fewer cases keep the file fast.
    #![proptest_config(ProptestConfig { cases: 40, ..ProptestConfig::default() })]

    /// Images in bands: host input, strided views, device input in parts and device output,
    /// exact; refused with the error naming one image row only when a row does not fit.
    #[test]
    fn capped_opencl_in_parts_is_exact((img, blur) in capped_image_and_blur()) {
        let expected = Engine::cpu().gaussian_blur(img.view(), &blur).unwrap();
        for (i, e) in capped().iter().enumerate() {
            let cap = if i % 4 < 2 { 4096 } else { 16384 };
            let fits = row_fits(img.width, cap) || img.width as u64 * img.height as u64 * 8 <= cap;
            let dev = e.upload(img.view()).unwrap();
            match e.gaussian_blur(img.view(), &blur) {
                Ok(out) => prop_assert!(out == expected, "capped {} on {} {:?} {:?}", cap, e.backend(), img, blur),
                Err(Error::TooLargeForDevice { what, .. }) if !fits => {
                    prop_assert!(what.contains("one image row"), "{}", what);
                    continue;
                }
                Err(other) => prop_assert!(false, "unexpected error {other}"),
            }
            let from_dev = e.gaussian_blur(&dev, &blur).unwrap();
            prop_assert!(from_dev == expected, "device input, capped {} on {}", cap, e.backend());
            let mut into = image::RgbaImage::from_pixel(img.width, img.height, image::Rgba([9, 8, 7, 6]));
            e.gaussian_blur_into(img.view(), &blur, &mut into).unwrap();
            prop_assert!(into == expected, "into, capped {} on {}", cap, e.backend());
            let kept = e.gaussian_blur_device(&dev, &blur).unwrap();
            prop_assert!(e.download(&kept).unwrap() == expected, "device output, capped {} on {}", cap, e.backend());
            // The parts of the result serve the next operation like uploaded parts.
            prop_assert_eq!(e.histogram_rgba(&kept).unwrap(), e.histogram_rgba(&expected).unwrap());
        }
    }

    #[test]
    fn capped_f32_device_images_are_exact_or_refused(
        (w, h) in (1..64u32, 1..48u32), seed in any::<u64>(), blur in capped_blur_for(1_000),
    ) {
        let img = f32_image(w, h, seed, true);
        let cpu = Engine::cpu().gaussian_blur_f32(&img, &blur).unwrap();
        for (i, e) in capped().iter().enumerate().filter(|(_, e)| !flushes_denormals(e)) {
            let cap = if i % 4 < 2 { 4096 } else { 16384 };
            match e.upload_f32(&img) {
                Ok(dev) => {
                    prop_assert!(w as u64 * h as u64 * 16 <= cap);
                    let out = e.download_f32(&e.gaussian_blur_f32_device(&dev, &blur).unwrap()).unwrap();
                    prop_assert!(same_bits(out.as_raw(), cpu.as_raw()), "capped {} on {}", cap, e.backend());
                }
                // One buffer an image: larger ones are refused at upload, saying what to use.
                Err(Error::TooLargeForDevice { what, .. }) => prop_assert!(
                    w as u64 * h as u64 * 16 > cap && what.contains("gaussian_blur_f32"),
                    "{} {}x{} cap {}", what, w, h, cap
                ),
                Err(other) => prop_assert!(false, "unexpected error {other}"),
            }
        }
    }

    #[test]
    fn capped_f32_in_parts_is_exact(
        (w, h) in (1..64u32, 1..48u32), seed in any::<u64>(), specials in any::<bool>(),
        blur in capped_blur_for(1_000),
    ) {
        let img = f32_image(w, h, seed, specials);
        let cpu = Engine::cpu().gaussian_blur_f32(&img, &blur).unwrap();
        for (i, e) in capped().iter().enumerate().filter(|(_, e)| !flushes_denormals(e)) {
            let cap = if i % 4 < 2 { 4096 } else { 16384 };
            match e.gaussian_blur_f32(&img, &blur) {
                Ok(out) => prop_assert!(same_bits(out.as_raw(), cpu.as_raw()), "capped {} on {} {}x{} {:?}", cap, e.backend(), w, h, blur),
                Err(Error::TooLargeForDevice { what, .. }) => prop_assert!(
                    !row_fits(w, cap) && what.contains("one image row") && blur.radius() > 0,
                    "{} {}x{} cap {}", what, w, h, cap
                ),
                Err(other) => prop_assert!(false, "unexpected error {other}"),
            }
        }
    }
}
