//! The compaction of every pixel format (`Engine::compact` of mono 8/16-bit and f32, RGB8,
//! RGBA16, RGBA f32): the CPU against a plain reference of docs/SPEC.md (the pixels whose key
//! is above the threshold, in scan order or by key descending, ties in scan order; NaN keys
//! never), and every OpenCL device, whole and in parts, against the CPU, exactly.

mod common;

use clpix::{CompactOrder, Engine, Error, Hit, ImageView, Pixel};
use common::formats::{Chan, channels, same};
use common::*;
use image::{Luma, Rgb, Rgba};
use proptest::prelude::*;

fn engines() -> &'static [Engine] {
    static E: SharedEngines = SharedEngines::new();
    E.get(opencl_engines)
}

fn capped() -> &'static [Engine] {
    static E: SharedEngines = SharedEngines::new();
    E.get(|| capped_opencl_engines(4096))
}

fn check<P>(
    dims: (u32, u32),
    pad: usize,
    kind: u8,
    seed: u64,
    t: P::Key,
) -> Result<(), TestCaseError>
where
    P: Pixel<Hit = Hit<P>>,
    P::Subpixel: Chan,
    P::Key: Into<f64> + Copy,
{
    let c = P::FORMAT.channels();
    let (w, h) = dims;
    let (data, row) = channels::<P>(w, h, pad, kind, seed);
    let stride = row * std::mem::size_of::<P::Subpixel>();
    let view = ImageView::<P>::from_channels(&data, w, h, stride)
        .map_err(|e| TestCaseError::fail(e.to_string()))?;
    let cpu = Engine::cpu();
    let scan = cpu
        .compact(view, t, CompactOrder::ScanOrder)
        .map_err(|e| TestCaseError::fail(e.to_string()))?;
    let sorted = cpu
        .compact(view, t, CompactOrder::LuminanceDescending)
        .map_err(|e| TestCaseError::fail(e.to_string()))?;
    // The reference: every pixel by its key (the brightest-pixel rule gives each pixel's key:
    // a 1×1 view of it), kept when above t, in scan order; sorted stably by key descending.
    let mut expected = Vec::new();
    for y in 0..h {
        for x in 0..w {
            let at = y as usize * row + x as usize * c;
            let one = ImageView::<P>::from_channels(
                &data[at..at + c],
                1,
                1,
                c * std::mem::size_of::<P::Subpixel>(),
            )
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
            if let Ok(hit) = cpu.extreme(one, clpix::Extreme::Brightest)
                && hit.key.into() > t.into()
            {
                expected.push(Hit { x, y, ..hit });
            }
        }
    }
    prop_assert!(
        same(&scan, &expected),
        "{:?} scan order: {} against {}",
        P::FORMAT,
        scan.len(),
        expected.len()
    );
    let mut by_key = expected.clone();
    by_key.sort_by(|a, b| b.key.into().total_cmp(&a.key.into()));
    prop_assert!(same(&sorted, &by_key), "{:?} sorted", P::FORMAT);
    for e in engines().iter().chain(capped()) {
        let got = e
            .compact(view, t, CompactOrder::ScanOrder)
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert!(
            same(&got, &scan),
            "{:?} {dims:?}+{pad} kind {kind} on {}",
            P::FORMAT,
            e.backend()
        );
        let got = e
            .compact(view, t, CompactOrder::LuminanceDescending)
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert!(
            same(&got, &sorted),
            "{:?} sorted on {}",
            P::FORMAT,
            e.backend()
        );
    }
    Ok(())
}

fn dims() -> impl Strategy<Value = (u32, u32)> {
    prop_oneof![3 => (1..60u32, 1..40u32), 1 => (1..3u32, 1..3u32), 1 => (600..1300u32, 1..4u32)]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn compact_mono8(d in dims(), p in 0..5usize, k in 0..3u8, s in any::<u64>(), t in any::<u8>()) {
        check::<Luma<u8>>(d, p, k, s, t)?;
    }

    #[test]
    fn compact_mono16(d in dims(), p in 0..5usize, k in 0..3u8, s in any::<u64>(), t in any::<u16>()) {
        check::<Luma<u16>>(d, p, k, s, t)?;
    }

    #[test]
    fn compact_mono_f32(d in dims(), p in 0..5usize, k in 0..4u8, s in any::<u64>(), t in -130.0..130.0f32) {
        check::<Luma<f32>>(d, p, k, s, t)?;
    }

    #[test]
    fn compact_rgb8(d in dims(), p in 0..5usize, k in 0..3u8, s in any::<u64>(), t in 0..=1023u16) {
        check::<Rgb<u8>>(d, p, k, s, t)?;
    }

    #[test]
    fn compact_rgba16(d in dims(), p in 0..5usize, k in 0..3u8, s in any::<u64>(), t in any::<u16>()) {
        check::<Rgba<u16>>(d, p, k, s, t)?;
    }

    #[test]
    fn compact_rgba_f32(d in dims(), p in 0..5usize, k in 0..4u8, s in any::<u64>(), t in -130.0..130.0f32) {
        check::<Rgba<f32>>(d, p, k, s, t)?;
    }
}

#[test]
fn bad_thresholds_are_errors() {
    let e = Engine::cpu();
    let rgb = image::RgbImage::new(3, 2);
    assert!(matches!(
        e.compact(&rgb, 1024, CompactOrder::ScanOrder),
        Err(Error::InvalidParameter { .. })
    ));
    let f = image::ImageBuffer::from_pixel(3, 2, Luma([1.0f32]));
    assert!(matches!(
        e.compact(&f, f32::NAN, CompactOrder::ScanOrder),
        Err(Error::InvalidParameter { .. })
    ));
    // -inf keeps every pixel with a key; +inf none.
    assert_eq!(
        e.compact(&f, f32::NEG_INFINITY, CompactOrder::ScanOrder)
            .unwrap()
            .len(),
        6
    );
    assert!(
        e.compact(&f, f32::INFINITY, CompactOrder::ScanOrder)
            .unwrap()
            .is_empty()
    );
}

/// Images of many groups, each walking several tiles of chunks, and half the pixels kept.
#[test]
fn compact_many_groups_and_tiles() {
    let (w, h) = (1024u32, 700u32);
    let mut s = 11u64;
    let m8: Vec<u8> = (0..w * h).map(|_| splitmix(&mut s) as u8).collect();
    let m16: Vec<u16> = (0..w * h).map(|_| splitmix(&mut s) as u16).collect();
    let v8 = ImageView::<Luma<u8>>::from_channels(&m8, w, h, w as usize).unwrap();
    let v16 = ImageView::<Luma<u16>>::from_channels(&m16, w, h, 2 * w as usize).unwrap();
    for order in [CompactOrder::ScanOrder, CompactOrder::LuminanceDescending] {
        let cpu8 = Engine::cpu().compact(v8, 127, order).unwrap();
        let cpu16 = Engine::cpu().compact(v16, 65_000, order).unwrap();
        assert!(cpu8.len() > 300_000 && !cpu16.is_empty());
        for e in engines().iter().chain(capped()) {
            assert!(
                e.compact(v8, 127, order).unwrap() == cpu8,
                "{}",
                e.backend()
            );
            assert!(
                e.compact(v16, 65_000, order).unwrap() == cpu16,
                "{}",
                e.backend()
            );
        }
    }
}
