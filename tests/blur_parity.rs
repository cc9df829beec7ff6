//! Gaussian blur: CPU against plain sequential references of SPEC.md, and every OpenCL device
//! against the CPU, exactly (RGBA8 and f32, all borders, radii beyond the image and the tile).
// The references are written like SPEC.md: index loops, `acc = acc + w * x`.
#![allow(clippy::needless_range_loop, clippy::assign_op_pattern)]

mod common;

use clpix::{Border, Engine, Error, GaussianBlur, ImageView};
use common::*;
use proptest::prelude::*;

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
        if let Ok(list) = clpix::devices() {
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
                        v.push(
                            Engine::with_device_config(d, &config)
                                .unwrap_or_else(|e| panic!("{}: {e}", d.name)),
                        );
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

/// SPEC.md borders, written out plainly.
fn spec_map(p: i64, n: i64, border: Border) -> Option<i64> {
    if (0..n).contains(&p) {
        return Some(p);
    }
    match border {
        Border::Clamp => Some(p.clamp(0, n - 1)),
        Border::Wrap => Some(((p % n) + n) % n),
        Border::Zero => None,
        Border::Reflect => {
            if n == 1 {
                return Some(0);
            }
            // Walk the mirror one reflection at a time.
            let mut q = p;
            loop {
                if q < 0 {
                    q = -q;
                } else if q >= n {
                    q = 2 * (n - 1) - q;
                } else {
                    return Some(q);
                }
            }
        }
    }
}

/// SPEC.md RGBA8 blur, sequential, from the published fixed-point weights.
fn reference_u8(img: &TestImage, blur: &GaussianBlur) -> image::RgbaImage {
    let (w, h) = (img.width as i64, img.height as i64);
    if blur.radius() == 0 {
        return img.to_image();
    }
    let q = blur.weights_fixed().unwrap();
    let r = blur.radius() as i64;
    let b = blur.border_mode();
    let mut t = vec![[0u16; 4]; (w * h) as usize];
    for y in 0..h {
        for x in 0..w {
            for c in 0..4 {
                let mut acc = 0u32;
                for i in -r..=r {
                    if let Some(s) = spec_map(x + i, w, b) {
                        acc += q[(i + r) as usize] * img.pixel(s as u32, y as u32)[c] as u32;
                    }
                }
                t[(y * w + x) as usize][c] = ((acc + 128) >> 8) as u16;
            }
        }
    }
    image::RgbaImage::from_fn(w as u32, h as u32, |x, y| {
        let mut px = [0u8; 4];
        for (c, out) in px.iter_mut().enumerate() {
            let mut acc = 0u32;
            for i in -r..=r {
                if let Some(s) = spec_map(y as i64 + i, h, b) {
                    acc += q[(i + r) as usize] * t[(s * w + x as i64) as usize][c] as u32;
                }
            }
            *out = ((acc + (1 << 23)) >> 24) as u8;
        }
        image::Rgba(px)
    })
}

/// SPEC.md f32 blur, sequential.
fn reference_f32(img: &image::Rgba32FImage, blur: &GaussianBlur) -> Vec<f32> {
    let (w, h) = (img.width() as i64, img.height() as i64);
    if blur.radius() == 0 {
        return img.as_raw().clone();
    }
    let wt = blur.weights_f32().unwrap();
    let r = blur.radius() as i64;
    let b = blur.border_mode();
    let src = img.as_raw();
    let mut t = vec![0f32; (w * h * 4) as usize];
    for y in 0..h {
        for x in 0..w {
            for c in 0..4 {
                let mut acc = 0.0f32;
                for i in -r..=r {
                    let v =
                        spec_map(x + i, w, b).map_or(0.0, |s| src[((y * w + s) * 4 + c) as usize]);
                    acc = wt[(i + r) as usize].mul_add(v, acc);
                }
                t[((y * w + x) * 4 + c) as usize] = acc;
            }
        }
    }
    let mut out = vec![0f32; (w * h * 4) as usize];
    for y in 0..h {
        for x in 0..w {
            for c in 0..4 {
                let mut acc = 0.0f32;
                for i in -r..=r {
                    let v =
                        spec_map(y + i, h, b).map_or(0.0, |s| t[((s * w + x) * 4 + c) as usize]);
                    acc = wt[(i + r) as usize].mul_add(v, acc);
                }
                out[((y * w + x) * 4 + c) as usize] = acc;
            }
        }
    }
    out
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
        for e in engines() {
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
        for (i, e) in capped().iter().enumerate() {
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
        for (i, e) in capped().iter().enumerate() {
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

/// f32 images move between engines (another engine's image is read back and blurred there),
/// and the empty image and radius 0 work on the device.
#[test]
fn f32_device_images_move_between_engines() {
    let img = f32_image(33, 17, 9, true);
    let blur = GaussianBlur::new(4).border(Border::Reflect);
    let cpu = Engine::cpu();
    let expected = cpu.gaussian_blur_f32(&img, &blur).unwrap();
    let mut all = vec![Engine::cpu()];
    all.extend(opencl_engines());
    for a in &all {
        for b in &all {
            let on_a = a.upload_f32(&img).unwrap();
            let out = b.gaussian_blur_f32_device(&on_a, &blur).unwrap();
            let got = b.download_f32(&out).unwrap();
            assert!(
                same_bits(got.as_raw(), expected.as_raw()),
                "{} to {}",
                a.backend(),
                b.backend()
            );
            assert!(same_bits(
                a.download_f32(&out).unwrap().as_raw(),
                expected.as_raw()
            ));
        }
        let empty = a.upload_f32(&image::Rgba32FImage::new(0, 5)).unwrap();
        let out = a.gaussian_blur_f32_device(&empty, &blur).unwrap();
        assert_eq!(a.download_f32(&out).unwrap().dimensions(), (0, 5));
        let same = a.gaussian_blur_f32_device(&a.upload_f32(&img).unwrap(), &GaussianBlur::new(0));
        let same = a.download_f32(&same.unwrap()).unwrap();
        assert!(
            same_bits(same.as_raw(), img.as_raw()),
            "radius 0 on {}",
            a.backend()
        );
    }
}

#[test]
fn radius_zero_is_a_copy_everywhere() {
    let img = make_image(37, 23, 8, Content::Random, 5);
    let mut all = vec![Engine::cpu()];
    all.extend(opencl_engines());
    for e in &all {
        for b in [Border::Clamp, Border::Zero] {
            let out = e
                .gaussian_blur(img.view(), &GaussianBlur::new(0).border(b))
                .unwrap();
            assert_eq!(out, img.to_image(), "{}", e.backend());
        }
        let f = f32_image(9, 4, 3, true);
        let out = e.gaussian_blur_f32(&f, &GaussianBlur::new(0)).unwrap();
        assert!(same_bits(out.as_raw(), f.as_raw()));
    }
}

#[test]
fn one_bright_pixel_blurs_symmetrically() {
    let mut all = vec![Engine::cpu()];
    all.extend(opencl_engines());
    for r in [1u32, 2, 5, 8, 25, 60] {
        let s = 2 * r + 11;
        let mut img = image::RgbaImage::from_pixel(s, s, image::Rgba([0, 0, 0, 0]));
        img.put_pixel(s / 2, s / 2, image::Rgba([255, 255, 255, 255]));
        for e in &all {
            for b in [Border::Clamp, Border::Reflect, Border::Wrap, Border::Zero] {
                let out = e
                    .gaussian_blur(&img, &GaussianBlur::new(r).border(b))
                    .unwrap();
                for y in 0..s {
                    for x in 0..s {
                        let p = out.get_pixel(x, y);
                        assert_eq!(p, out.get_pixel(s - 1 - x, y), "r {r} {}", e.backend());
                        assert_eq!(p, out.get_pixel(x, s - 1 - y));
                        assert_eq!(p, out.get_pixel(y, x));
                    }
                }
            }
        }
    }
}

#[test]
fn fixed_weights_sum_to_65536_and_are_close() {
    for r in 1..=200u32 {
        for s in [None, Some(0.5), Some(r as f64 * 2.0)] {
            let mut b = GaussianBlur::new(r);
            if let Some(s) = s {
                b = b.sigma(s);
            }
            let q = b.weights_fixed().unwrap();
            let n = b.weights_f64().unwrap();
            assert_eq!(q.iter().map(|&x| x as u64).sum::<u64>(), 65536);
            for (qi, ni) in q.iter().zip(&n) {
                assert!((*qi as f64 - ni * 65536.0).abs() <= 1.0);
            }
        }
    }
}

#[test]
fn bad_parameters_are_errors() {
    let img = image::RgbaImage::new(4, 4);
    let f = image::Rgba32FImage::new(4, 4);
    let mut all = vec![Engine::cpu()];
    all.extend(opencl_engines());
    for e in &all {
        for s in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            let b = GaussianBlur::new(3).sigma(s);
            assert!(matches!(
                e.gaussian_blur(&img, &b),
                Err(Error::InvalidParameter { .. })
            ));
            assert!(matches!(
                e.gaussian_blur_f32(&f, &b),
                Err(Error::InvalidParameter { .. })
            ));
            assert!(e.gaussian_blur_device(&img, &b).is_err());
        }
        // A result image of another size than the input: an error naming `out`, nothing
        // written.
        for (ow, oh) in [(4, 5), (5, 4), (0, 0)] {
            let mut out = image::RgbaImage::from_pixel(ow, oh, image::Rgba([9; 4]));
            match e.gaussian_blur_into(&img, &GaussianBlur::new(2), &mut out) {
                Err(Error::InvalidParameter { name: "out", .. }) => {}
                other => panic!("{ow}×{oh} on {}: {other:?}", e.backend()),
            }
            assert!(out.pixels().all(|p| p.0 == [9; 4]));
            let mut out_f = image::Rgba32FImage::new(ow, oh);
            assert!(matches!(
                e.gaussian_blur_f32_into(&f, &GaussianBlur::new(2), &mut out_f),
                Err(Error::InvalidParameter { name: "out", .. })
            ));
        }
        let huge = GaussianBlur::new(clpix::MAX_RADIUS + 1);
        assert!(matches!(
            e.gaussian_blur(&img, &huge),
            Err(Error::InvalidParameter { .. })
        ));
        assert!(e.gaussian_blur(&img, &GaussianBlur::new(u32::MAX)).is_err());
    }
}

#[test]
fn empty_images_give_empty_images() {
    let mut all = vec![Engine::cpu()];
    all.extend(opencl_engines());
    for (w, h) in [(0, 0), (0, 5), (5, 0)] {
        let data = vec![0u8; 0];
        let view = ImageView::new(&data, w, h).unwrap();
        for e in &all {
            let out = e.gaussian_blur(view, &GaussianBlur::new(3)).unwrap();
            assert_eq!(out.dimensions(), (w, h));
            let dev = e.gaussian_blur_device(view, &GaussianBlur::new(3)).unwrap();
            assert_eq!(e.download(&dev).unwrap().dimensions(), (w, h));
            let f = image::Rgba32FImage::new(w, h);
            assert_eq!(
                e.gaussian_blur_f32(&f, &GaussianBlur::new(3))
                    .unwrap()
                    .dimensions(),
                (w, h)
            );
        }
    }
}

#[test]
fn a_view_without_columns_and_4_billion_rows_is_empty_at_once() {
    let mut owned = vec![Engine::cpu()];
    owned.extend(opencl_engines());
    let view = ImageView::with_stride(&[], 0, u32::MAX, 1).unwrap();
    for e in owned.iter().chain(capped()) {
        for r in [0, 3] {
            let blur = GaussianBlur::new(r).border(Border::Reflect);
            let out = e.gaussian_blur(view, &blur).unwrap();
            assert_eq!(out.dimensions(), (0, u32::MAX));
            let dev = e.gaussian_blur_device(view, &blur).unwrap();
            assert_eq!((dev.width(), dev.height()), (0, u32::MAX));
        }
    }
}

#[test]
fn huge_radius_on_a_small_image_with_every_border() {
    // A radius far beyond the image: reflect and wrap go round many times.
    let img = make_image(7, 5, 0, Content::Random, 11);
    let cpu = Engine::cpu();
    for b in [Border::Clamp, Border::Reflect, Border::Wrap, Border::Zero] {
        let blur = GaussianBlur::new(1000).sigma(3.0).border(b);
        let expected = cpu.gaussian_blur(img.view(), &blur).unwrap();
        assert_eq!(expected, reference_u8(&img, &blur), "{b:?}");
        for e in engines() {
            assert_eq!(
                e.gaussian_blur(img.view(), &blur).unwrap(),
                expected,
                "{b:?}"
            );
        }
    }
}

#[test]
fn large_images_in_many_parts_are_exact() {
    // 100×80 (padded rows) on 16 KiB buffers: bands of 6 rows taking their taps in chunks of
    // 5, radii beyond a band and beyond the image.
    let img = make_image(100, 80, 8, Content::Random, 4);
    let f = f32_image(100, 30, 5, true);
    let cpu = Engine::cpu();
    for (r, b) in [
        (3, Border::Clamp),
        (25, Border::Reflect),
        (90, Border::Wrap),
        (9, Border::Zero),
    ] {
        let blur = GaussianBlur::new(r).border(b);
        let expected = cpu.gaussian_blur(img.view(), &blur).unwrap();
        let expected_f = cpu.gaussian_blur_f32(&f, &blur).unwrap();
        for (i, e) in capped().iter().enumerate().filter(|(i, _)| i % 4 >= 2) {
            assert!(
                e.gaussian_blur(img.view(), &blur).unwrap() == expected,
                "{r} {b:?} {i}"
            );
            let dev = e.upload(img.view()).unwrap();
            let kept = e.gaussian_blur_device(&dev, &blur).unwrap();
            assert!(e.download(&kept).unwrap() == expected, "{r} {b:?} {i}");
            let out = e.gaussian_blur_f32(&f, &blur).unwrap();
            assert!(
                same_bits(out.as_raw(), expected_f.as_raw()),
                "{r} {b:?} {i}"
            );
        }
    }
}

#[test]
fn a_row_larger_than_a_buffer_is_an_error_naming_the_row() {
    // 4 KiB buffers hold 256 pixels of 16 bytes: a 300-pixel row does not fit.
    let img = make_image(300, 20, 0, Content::Random, 4);
    let f = f32_image(300, 20, 4, false);
    let blur = GaussianBlur::new(3);
    for e in capped()
        .iter()
        .enumerate()
        .filter(|(i, _)| i % 4 < 2)
        .map(|(_, e)| e)
    {
        let one_row = |r: Result<_, Error>| match r {
            Err(Error::TooLargeForDevice {
                what,
                needed,
                limit,
            }) => {
                assert!(what.contains("one image row"), "{what}");
                assert_eq!((needed, limit), (300 * 16, 4096));
            }
            other => panic!("{other:?}"),
        };
        one_row(e.gaussian_blur(img.view(), &blur).map(|_| ()));
        let dev = e.upload(img.view()).unwrap();
        one_row(e.gaussian_blur_device(&dev, &blur).map(|_| ()));
        one_row(e.gaussian_blur_f32(&f, &blur).map(|_| ()));
    }
}

#[test]
fn wide_images_cross_column_strips_exactly() {
    // Wide images on every engine; the CPU path's column strips are in
    // `cpu_bands_strips_and_row_pairs_are_exact`.
    let mut all = vec![Engine::cpu()];
    all.extend(opencl_engines());
    for (i, &(w, h, r)) in [
        (1025u32, 40u32, 1u32),
        (1100, 67, 8),
        (2051, 33, 3),
        (1030, 90, 13),
    ]
    .iter()
    .enumerate()
    {
        let img = make_image(
            w,
            h,
            if i % 2 == 0 { 0 } else { 12 },
            Content::Random,
            i as u64,
        );
        for b in [Border::Clamp, Border::Reflect, Border::Wrap, Border::Zero] {
            let blur = GaussianBlur::new(r).border(b);
            let expected = reference_u8(&img, &blur);
            for e in &all {
                assert!(
                    e.gaussian_blur(img.view(), &blur).unwrap() == expected,
                    "{w}x{h} r {r} {b:?} on {}",
                    e.backend()
                );
            }
            let f = f32_image(w, h.min(20), i as u64, false);
            let cpu = Engine::cpu().gaussian_blur_f32(&f, &blur).unwrap();
            assert!(same_bits(cpu.as_raw(), &reference_f32(&f, &blur)));
        }
    }
}

#[test]
fn cpu_bands_strips_and_row_pairs_are_exact() {
    // The CPU path's band route (two threads: bands of 66 and 65 rows at h = 131, so both an
    // even and an odd count of output rows, which it makes two at a time), its column strips
    // (630 pixels for f32 at r = 25, 1,260 for RGBA8; 1,820 for f32 at r = 8) and its route
    // without bands (r = 25 on 61 rows), against the sequential references.
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(2)
        .build()
        .expect("a pool of two threads");
    let cases: [(u32, u32, u32, &[Border]); 4] = [
        (3000, 131, 25, &[Border::Reflect, Border::Zero]),
        (3000, 61, 25, &[Border::Wrap]),
        (
            2100,
            77,
            8,
            &[Border::Clamp, Border::Reflect, Border::Wrap, Border::Zero],
        ),
        (
            700,
            45,
            2,
            &[Border::Clamp, Border::Reflect, Border::Wrap, Border::Zero],
        ),
    ];
    for (i, &(w, h, r, borders)) in cases.iter().enumerate() {
        let img = make_image(w, h, 0, Content::Random, 40 + i as u64);
        let f = f32_image(w, h, 40 + i as u64, i % 2 == 1);
        for &b in borders {
            let blur = GaussianBlur::new(r).border(b);
            let (u8_out, f32_out) = pool.install(|| {
                let cpu = Engine::cpu();
                (
                    cpu.gaussian_blur(img.view(), &blur).unwrap(),
                    cpu.gaussian_blur_f32(&f, &blur).unwrap(),
                )
            });
            assert!(
                u8_out == reference_u8(&img, &blur),
                "RGBA8 {w}x{h} r {r} {b:?}"
            );
            assert!(
                same_bits(f32_out.as_raw(), &reference_f32(&f, &blur)),
                "f32 {w}x{h} r {r} {b:?}"
            );
        }
    }
}

#[test]
fn f32_images_over_borrowed_or_longer_containers_blur_the_same() {
    // The f32 blur takes any container of values: a borrowed slice (how the Python package
    // passes a NumPy array), or a Vec longer than the image (the image crate allows it; only
    // the image's own values are read, and a radius-0 blur copies exactly those).
    let (w, h) = (23u32, 17u32);
    let f = f32_image(w, h, 5, true);
    let mut longer = f.as_raw().clone();
    longer.extend([1.0f32; 9]);
    let long = image::Rgba32FImage::from_raw(w, h, longer).unwrap();
    let cpu = Engine::cpu();
    for e in std::iter::once(&cpu).chain(engines()) {
        for r in [0u32, 3] {
            let blur = GaussianBlur::new(r);
            let expected = cpu.gaussian_blur_f32(&f, &blur).unwrap();
            let view = image::ImageBuffer::<image::Rgba<f32>, &[f32]>::from_raw(
                w,
                h,
                f.as_raw().as_slice(),
            )
            .unwrap();
            let got = e.gaussian_blur_f32(&view, &blur).unwrap();
            assert!(
                same_bits(got.as_raw(), expected.as_raw()),
                "view r {r} on {}",
                e.backend()
            );
            let got = e.gaussian_blur_f32(&long, &blur).unwrap();
            assert!(
                same_bits(got.as_raw(), expected.as_raw()),
                "longer r {r} on {}",
                e.backend()
            );
            let mut out = vec![f32::NAN; f.as_raw().len()];
            e.gaussian_blur_f32_into(&view, &blur, &mut out).unwrap();
            assert!(
                same_bits(&out, expected.as_raw()),
                "view into r {r} on {}",
                e.backend()
            );
        }
    }
}
