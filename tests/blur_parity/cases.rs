//! The blur's single cases: devices' images moving between engines, radius 0, symmetric spots, weights, bad parameters, empty and huge inputs, parts, strips and borrowed containers.

use super::*;

/// f32 images move between engines (another engine's image is read back and blurred there),
/// and the empty image and radius 0 work on the device.
#[test]
pub(super) fn f32_device_images_move_between_engines() {
    let img = f32_image(33, 17, 9, true);
    let blur = GaussianBlur::new(4).border(Border::Reflect);
    let cpu = Engine::cpu();
    let expected = cpu.gaussian_blur_f32(&img, &blur).unwrap();
    let mut all = vec![Engine::cpu()];
    all.extend(
        opencl_engines()
            .into_iter()
            .filter(|e| !flushes_denormals(e)),
    );
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
pub(super) fn radius_zero_is_a_copy_everywhere() {
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
pub(super) fn one_bright_pixel_blurs_symmetrically() {
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
pub(super) fn fixed_weights_sum_to_65536_and_are_close() {
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
pub(super) fn bad_parameters_are_errors() {
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
pub(super) fn empty_images_give_empty_images() {
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
pub(super) fn a_view_without_columns_and_4_billion_rows_is_empty_at_once() {
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
pub(super) fn huge_radius_on_a_small_image_with_every_border() {
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
pub(super) fn large_images_in_many_parts_are_exact() {
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
            if flushes_denormals(e) {
                continue;
            }
            let out = e.gaussian_blur_f32(&f, &blur).unwrap();
            assert!(
                same_bits(out.as_raw(), expected_f.as_raw()),
                "{r} {b:?} {i}"
            );
        }
    }
}

#[test]
pub(super) fn a_row_larger_than_a_buffer_is_an_error_naming_the_row() {
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
        if !flushes_denormals(e) {
            one_row(e.gaussian_blur_f32(&f, &blur).map(|_| ()));
        }
    }
}

#[test]
pub(super) fn wide_images_cross_column_strips_exactly() {
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
pub(super) fn cpu_bands_strips_and_row_pairs_are_exact() {
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
pub(super) fn f32_images_over_borrowed_or_longer_containers_blur_the_same() {
    // The f32 blur takes any container of values: a borrowed slice (how the Python package
    // passes a NumPy array), or a Vec longer than the image (the image crate allows it; only
    // the image's own values are read, and a radius-0 blur copies exactly those).
    let (w, h) = (23u32, 17u32);
    let f = f32_image(w, h, 5, true);
    let mut longer = f.as_raw().clone();
    longer.extend([1.0f32; 9]);
    let long = image::Rgba32FImage::from_raw(w, h, longer).unwrap();
    let cpu = Engine::cpu();
    for e in std::iter::once(&cpu).chain(engines().iter().filter(|e| !flushes_denormals(e))) {
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
