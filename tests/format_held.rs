//! Images of every pixel format held by an engine (`Engine::upload` of mono 8/16-bit and f32,
//! RGB8, RGBA16, RGBA f32; `DeviceImage<P>`) and page-locked ones (`PinnedImage<P>`): every
//! operation on them equals the CPU path on the host image, exactly, on every OpenCL device,
//! whole and in parts of a few KiB (the kept pixels' values gathered across parts); the round
//! trip gives the pixels back; an image held by one engine given to another is read back there;
//! `gaussian_blur_device` keeps a blur of every format on the engine.

mod common;

use clpix::{Border, Engine, Extreme, GaussianBlur, ImageView, Pixel};
use common::formats::{Chan, channels};
use common::*;
use image::{ImageBuffer, Luma, Rgb, Rgba};
use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig { cases: 10, ..ProptestConfig::default() })]

    /// Every operation of every format on a held image: the engine's strings on the host image
    /// (which equal the CPU's: tests/format_parity.rs; or, on an engine capped to a few KiB, its
    /// `DeviceLimit` errors).
    #[test]
    fn held_images_equal_host_images(img in test_image()) {
        for e in cpu_opencl_and_capped_engines() {
            let expected = every_format_op(e, &img);
            let got = every_format_op_held(e, &img);
            let first = got.iter().zip(&expected).position(|(a, b)| a != b);
            prop_assert!(
                got == expected,
                "{} {img:?}: op {first:?}: {:.300} against {:.300}",
                e.backend(),
                first.map_or("", |i| got[i].as_str()),
                first.map_or("", |i| expected[i].as_str())
            );
        }
    }
}

/// Upload (from a padded view), download and `download_into` give the pixels back; the
/// brightest of the held image is the host image's; a pinned image of the format holds them too.
fn round_trip<P>(w: u32, h: u32, pad: usize, kind: u8, seed: u64) -> Result<(), TestCaseError>
where
    P: Pixel,
    P::Subpixel: Chan,
{
    let (data, row) = channels::<P>(w, h, pad, kind, seed);
    let stride = row * std::mem::size_of::<P::Subpixel>();
    let view = ImageView::<P>::from_channels(&data, w, h, stride)
        .map_err(|e| TestCaseError::fail(e.to_string()))?;
    let packed: Vec<P::Subpixel> = (0..h as usize)
        .flat_map(|y| data[y * row..y * row + w as usize * P::FORMAT.channels()].to_vec())
        .collect();
    let fail = |e: clpix::Error| TestCaseError::fail(e.to_string());
    let cpu = Engine::cpu();
    for e in cpu_opencl_and_capped_engines() {
        let held = e.upload(view).map_err(fail)?;
        let back = e.download(&held).map_err(fail)?;
        prop_assert!(
            bytemuck::cast_slice::<_, u8>(back.as_raw()) == bytemuck::cast_slice::<_, u8>(&packed),
            "{:?} round trip on {}",
            P::FORMAT,
            e.backend()
        );
        let mut bytes = vec![0u8; packed.len() * std::mem::size_of::<P::Subpixel>()];
        e.download_into(&held, &mut bytes).map_err(fail)?;
        prop_assert_eq!(&bytes[..], bytemuck::cast_slice::<_, u8>(&packed));
        prop_assert!(e.download_into(&held, &mut bytes[1..]).is_err());
        // Held by `e`, given to the CPU engine: read back there.
        let want = format!("{:?}", cpu.extreme(view, Extreme::Darkest));
        prop_assert_eq!(
            format!("{:?}", e.extreme(&held, Extreme::Darkest)),
            want.clone()
        );
        prop_assert_eq!(format!("{:?}", cpu.extreme(&held, Extreme::Darkest)), want);
        // Blurred on the engine, kept there: the engine's host blur's pixels (the CPU's:
        // tests/blur_parity), its statistics and brightest; or the same error (an engine capped
        // to a few KiB that does not answer on the CPU).
        for blur in [
            GaussianBlur::new(2).border(Border::Reflect),
            GaussianBlur::new(0),
        ] {
            let bytes = |img: &image::ImageBuffer<P, Vec<P::Subpixel>>| {
                bytemuck::cast_slice::<_, u8>(img.as_raw()).to_vec()
            };
            match (
                e.gaussian_blur(view, &blur),
                e.gaussian_blur_device(&held, &blur),
                e.gaussian_blur_device(view, &blur),
            ) {
                (Ok(want), Ok(soft), Ok(from_host)) => {
                    let got = e.download(&soft).map_err(fail)?;
                    prop_assert!(
                        bytes(&got) == bytes(&want),
                        "{:?} on {}",
                        P::FORMAT,
                        e.backend()
                    );
                    prop_assert_eq!(
                        format!("{:?}", e.luminance_stats(&soft)),
                        format!("{:?}", cpu.luminance_stats(&want))
                    );
                    prop_assert_eq!(
                        format!("{:?}", e.extreme(&from_host, Extreme::Brightest)),
                        format!("{:?}", cpu.extreme(&want, Extreme::Brightest))
                    );
                }
                (Err(a), Err(b), Err(c)) => {
                    prop_assert_eq!(a.to_string(), b.to_string());
                    prop_assert_eq!(a.to_string(), c.to_string());
                }
                (a, b, c) => prop_assert!(
                    false,
                    "{:?} on {}: {:?} {:?} {:?}",
                    P::FORMAT,
                    e.backend(),
                    a.map(drop),
                    b.map(drop),
                    c.map(drop)
                ),
            }
        }
        let mut pinned = e.pinned_image_of::<P>(w, h).map_err(fail)?;
        pinned.copy_from(view).map_err(fail)?;
        prop_assert_eq!(pinned.as_bytes(), bytemuck::cast_slice::<_, u8>(&packed));
        prop_assert_eq!(
            format!("{:?}", e.luminance_stats(&pinned)),
            format!("{:?}", cpu.luminance_stats(view))
        );
    }
    Ok(())
}

fn dims() -> impl Strategy<Value = (u32, u32)> {
    prop_oneof![3 => (1..60u32, 1..40u32), 1 => (700..1100u32, 1..4u32)]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]

    #[test]
    fn round_trip_mono8((w, h) in dims(), p in 0..5usize, kind in 0..3u8, s in any::<u64>()) {
        round_trip::<Luma<u8>>(w, h, p, kind, s)?;
    }

    #[test]
    fn round_trip_mono16((w, h) in dims(), p in 0..5usize, kind in 0..3u8, s in any::<u64>()) {
        round_trip::<Luma<u16>>(w, h, p, kind, s)?;
    }

    #[test]
    fn round_trip_mono_f32((w, h) in dims(), p in 0..5usize, kind in 0..4u8, s in any::<u64>()) {
        round_trip::<Luma<f32>>(w, h, p, kind, s)?;
    }

    #[test]
    fn round_trip_rgb8((w, h) in dims(), p in 0..5usize, kind in 0..3u8, s in any::<u64>()) {
        round_trip::<Rgb<u8>>(w, h, p, kind, s)?;
    }

    #[test]
    fn round_trip_rgba16((w, h) in dims(), p in 0..5usize, kind in 0..3u8, s in any::<u64>()) {
        round_trip::<Rgba<u16>>(w, h, p, kind, s)?;
    }

    #[test]
    fn round_trip_rgba_f32((w, h) in dims(), p in 0..5usize, kind in 0..4u8, s in any::<u64>()) {
        round_trip::<Rgba<f32>>(w, h, p, kind, s)?;
    }
}

/// A compaction that keeps most pixels of an image held in many parts: the values gathered on
/// the device in every part, in the order of the sort, equal the host image's.
#[test]
fn gathered_values_of_many_parts() {
    let (w, h) = (1000u32, 70u32);
    let mut s = 3u64;
    let img: ImageBuffer<Rgb<u8>, Vec<u8>> = ImageBuffer::from_fn(w, h, |_, _| {
        Rgb((splitmix(&mut s) as u32).to_le_bytes()[..3]
            .try_into()
            .unwrap_or([0; 3]))
    });
    let want = Engine::cpu()
        .compact(&img, 100, clpix::CompactOrder::LuminanceDescending)
        .expect("cpu");
    assert!(want.len() > 50_000);
    for e in cpu_opencl_and_capped_engines() {
        let held = e.upload(&img).expect("upload");
        let got = e
            .compact(&held, 100, clpix::CompactOrder::LuminanceDescending)
            .expect("compact");
        assert!(got == want, "{}", e.backend());
    }
}
