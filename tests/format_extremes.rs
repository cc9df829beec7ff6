//! The k brightest and darkest pixels of every pixel format (`Engine::extremes` of mono 8/16-bit
//! and f32, RGB8, RGBA16, RGBA f32) and `compacted_image` of every format: the CPU against a
//! plain reference of docs/SPEC.md (every pixel with a key in key order, ties in scan order,
//! the greedy distance rule), and every OpenCL device, whole and in parts, against the CPU,
//! exactly.

mod common;

use clpix::{CompactOrder, Engine, Error, Extreme, Hit, ImageView, Pixel};
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

/// The reference of SPEC.md: every pixel's hit (its key by the brightest-pixel rule on a 1×1
/// view), NaN keys left out, sorted stably by key from the wanted end, then taken greedily.
fn reference<P>(view: ImageView<'_, P>, end: Extreme, k: usize, min_distance: f32) -> Vec<Hit<P>>
where
    P: Pixel<Hit = Hit<P>>,
    P::Key: Into<f64> + Copy,
{
    let cpu = Engine::cpu();
    let mut all = Vec::new();
    for y in 0..view.height() {
        for x in 0..view.width() {
            let one = image::ImageBuffer::from_pixel(1, 1, view.get(x, y));
            if let Ok(hit) = cpu.extreme(&one, Extreme::Brightest) {
                all.push(Hit { x, y, ..hit });
            }
        }
    }
    match end {
        Extreme::Brightest => all.sort_by(|a, b| b.key.into().total_cmp(&a.key.into())),
        Extreme::Darkest => all.sort_by(|a, b| a.key.into().total_cmp(&b.key.into())),
    }
    let d2 = (min_distance as f64) * (min_distance as f64);
    let mut taken: Vec<Hit<P>> = Vec::new();
    for c in all {
        if taken.len() == k {
            break;
        }
        let far = taken.iter().all(|t| {
            let (dx, dy) = (t.x.abs_diff(c.x) as f64, t.y.abs_diff(c.y) as f64);
            dx * dx + dy * dy >= d2
        });
        if far {
            taken.push(c);
        }
    }
    taken
}

fn check<P>(
    (w, h): (u32, u32),
    pad: usize,
    kind: u8,
    seed: u64,
    k: usize,
    min_distance: f32,
    t: P::Key,
) -> Result<(), TestCaseError>
where
    P: Pixel<Hit = Hit<P>>,
    P::Subpixel: Chan,
    P::Key: Into<f64> + Copy,
{
    let (data, row) = channels::<P>(w, h, pad, kind, seed);
    let stride = row * std::mem::size_of::<P::Subpixel>();
    let view = ImageView::<P>::from_channels(&data, w, h, stride)
        .map_err(|e| TestCaseError::fail(e.to_string()))?;
    let cpu = Engine::cpu();
    for end in [Extreme::Brightest, Extreme::Darkest] {
        let want = cpu
            .extremes(view, end, k, min_distance)
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        let expected = reference(view, end, k, min_distance);
        prop_assert!(
            same(&want, &expected),
            "{:?} {end:?} k {k} d {min_distance}: {} against {}",
            P::FORMAT,
            want.len(),
            expected.len()
        );
        for e in engines().iter().chain(capped()) {
            let got = e
                .extremes(view, end, k, min_distance)
                .map_err(|e| TestCaseError::fail(e.to_string()))?;
            prop_assert!(
                same(&got, &want),
                "{:?} {end:?} {w}x{h}+{pad} kind {kind} on {}",
                P::FORMAT,
                e.backend()
            );
        }
    }
    // compacted_image: the sorted compaction's values first, zeros after.
    for order in [CompactOrder::ScanOrder, CompactOrder::LuminanceDescending] {
        let hits = cpu
            .compact(view, t, order)
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        let img = cpu
            .compacted_image(view, t, order)
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        let mut expected: Vec<P::Subpixel> = Vec::new();
        for hit in &hits {
            expected.extend_from_slice(hit.value.channels());
        }
        expected.resize(
            w as usize * h as usize * P::FORMAT.channels(),
            Default::default(),
        );
        prop_assert_eq!(
            bytemuck::cast_slice::<_, u8>(img.as_raw()),
            bytemuck::cast_slice::<_, u8>(&expected)
        );
        for e in engines().iter().chain(capped()) {
            let got = e
                .compacted_image(view, t, order)
                .map_err(|e| TestCaseError::fail(e.to_string()))?;
            prop_assert!(
                bytemuck::cast_slice::<_, u8>(got.as_raw())
                    == bytemuck::cast_slice::<_, u8>(img.as_raw()),
                "{:?} compacted image on {}",
                P::FORMAT,
                e.backend()
            );
        }
    }
    Ok(())
}

fn dims() -> impl Strategy<Value = (u32, u32)> {
    prop_oneof![3 => (1..50u32, 1..30u32), 1 => (1..3u32, 1..3u32), 1 => (500..900u32, 1..3u32)]
}

fn distance() -> impl Strategy<Value = f32> {
    prop_oneof![Just(0.0f32), 0.5..6.0f32, Just(f32::INFINITY)]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 20, ..ProptestConfig::default() })]

    #[test]
    fn extremes_mono8(d in dims(), p in 0..4usize, kind in 0..3u8, s in any::<u64>(), k in 0..40usize, m in distance(), t in any::<u8>()) {
        check::<Luma<u8>>(d, p, kind, s, k, m, t)?;
    }

    #[test]
    fn extremes_mono16(d in dims(), p in 0..4usize, kind in 0..3u8, s in any::<u64>(), k in 0..40usize, m in distance(), t in any::<u16>()) {
        check::<Luma<u16>>(d, p, kind, s, k, m, t)?;
    }

    #[test]
    fn extremes_mono_f32(d in dims(), p in 0..4usize, kind in 0..4u8, s in any::<u64>(), k in 0..40usize, m in distance(), t in -130.0..130.0f32) {
        check::<Luma<f32>>(d, p, kind, s, k, m, t)?;
    }

    #[test]
    fn extremes_rgb8(d in dims(), p in 0..4usize, kind in 0..3u8, s in any::<u64>(), k in 0..40usize, m in distance(), t in 0..=1023u16) {
        check::<Rgb<u8>>(d, p, kind, s, k, m, t)?;
    }

    #[test]
    fn extremes_rgba16(d in dims(), p in 0..4usize, kind in 0..3u8, s in any::<u64>(), k in 0..40usize, m in distance(), t in any::<u16>()) {
        check::<Rgba<u16>>(d, p, kind, s, k, m, t)?;
    }

    #[test]
    fn extremes_rgba_f32(d in dims(), p in 0..4usize, kind in 0..4u8, s in any::<u64>(), k in 0..40usize, m in distance(), t in -130.0..130.0f32) {
        check::<Rgba<f32>>(d, p, kind, s, k, m, t)?;
    }
}

/// Many candidates with the distance rule rejecting most (several rounds lowering the cut),
/// on images of many work-groups, and f32 images whose keys span the whole range with
/// infinities (a coarse histogram: the cut is lowered until enough candidates are in).
#[test]
fn extremes_many_rounds() {
    let (w, h) = (1024u32, 600u32);
    let mut s = 5u64;
    // A few bright plateaus: the top keys are crowded together, so k far-apart picks need many.
    let m16: Vec<u16> = (0..w * h)
        .map(|i| {
            let (x, y) = (i % w, i / w);
            let r = splitmix(&mut s) as u16;
            if x % 200 < 20 && y % 150 < 10 {
                60_000 + (r & 7)
            } else {
                r & 0x0fff
            }
        })
        .collect();
    let v16 = ImageView::<Luma<u16>>::from_channels(&m16, w, h, 2 * w as usize).unwrap();
    let wide: Vec<f32> = (0..w * h)
        .map(|i| match splitmix(&mut s) % 97 {
            0 => f32::INFINITY,
            1 => f32::NEG_INFINITY,
            2 => f32::NAN,
            3 => f32::MAX,
            4 => f32::MIN,
            r => (i % 1000) as f32 * 0.25 - r as f32,
        })
        .collect();
    let vf = ImageView::<Luma<f32>>::from_channels(&wide, w, h, 4 * w as usize).unwrap();
    for end in [Extreme::Brightest, Extreme::Darkest] {
        for (k, d) in [(50, 40.0f32), (300, 3.0), (5, 0.0)] {
            let cpu16 = Engine::cpu().extremes(v16, end, k, d).unwrap();
            let cpuf = Engine::cpu().extremes(vf, end, k, d).unwrap();
            assert_eq!(cpu16.len(), k);
            assert_eq!(cpuf.len(), k);
            for e in engines().iter().chain(capped()) {
                assert!(
                    e.extremes(v16, end, k, d).unwrap() == cpu16,
                    "{}",
                    e.backend()
                );
                assert!(
                    same(&e.extremes(vf, end, k, d).unwrap(), &cpuf),
                    "{}",
                    e.backend()
                );
            }
        }
    }
    // The brightest f32 are the +inf pixels, the darkest the -inf ones, first in scan order.
    let top = Engine::cpu()
        .extremes(vf, Extreme::Brightest, 1, 0.0)
        .unwrap();
    assert_eq!(top[0].key, f32::INFINITY);
    let bottom = Engine::cpu()
        .extremes(vf, Extreme::Darkest, 1, 0.0)
        .unwrap();
    assert_eq!(bottom[0].key, f32::NEG_INFINITY);
}

#[test]
fn extremes_edge_cases() {
    let e = Engine::cpu();
    let nan = image::ImageBuffer::from_pixel(4, 3, Luma([f32::NAN]));
    assert!(
        e.extremes(&nan, Extreme::Brightest, 3, 0.0)
            .unwrap()
            .is_empty()
    );
    let flat = image::ImageBuffer::from_pixel(4, 3, Luma([7u16]));
    let all = e.extremes(&flat, Extreme::Darkest, 20, 0.0).unwrap();
    assert_eq!(all.len(), 12);
    assert!(all.windows(2).all(|p| (p[0].y, p[0].x) < (p[1].y, p[1].x)));
    assert!(matches!(
        e.extremes(&flat, Extreme::Brightest, 2, -1.0),
        Err(Error::InvalidParameter { .. })
    ));
    assert!(
        e.extremes(&flat, Extreme::Brightest, 0, 1.0)
            .unwrap()
            .is_empty()
    );
    let empty = image::ImageBuffer::<Luma<u8>, Vec<u8>>::new(0, 5);
    assert!(
        e.extremes(&empty, Extreme::Brightest, 3, 1.0)
            .unwrap()
            .is_empty()
    );
    assert!(matches!(
        e.compacted_image(&image::RgbImage::new(2, 2), 1024, CompactOrder::ScanOrder),
        Err(Error::InvalidParameter { .. })
    ));
}

/// f32 keys a few denormals (or tiny normals) apart: the coarse histogram's estimate scale
/// (`bins / span`) overflows f32 and a value at the low end gave `0 · inf`, a NaN estimate that
/// Intel's CPU runtime turned into a bin far past the table (a SIGSEGV in CI); NaN now
/// estimates bin 0 on every path, which the bounds then correct.
#[test]
fn extremes_of_keys_a_tiny_span_apart() {
    let (w, h) = (97u32, 13u32);
    let mut s = 11u64;
    for base in [0u32, 0x0080_0000, 0x0d80_0000] {
        // base: zero (denormals), the smallest normal, a tiny normal; then a few ulps above.
        let px: Vec<f32> = (0..w * h)
            .map(|_| f32::from_bits(base + (splitmix(&mut s) % 9) as u32))
            .collect();
        let v = ImageView::<Luma<f32>>::from_channels(&px, w, h, 4 * w as usize).unwrap();
        for end in [Extreme::Brightest, Extreme::Darkest] {
            for (k, d) in [(7, 0.0f32), (40, 2.5)] {
                let want = Engine::cpu().extremes(v, end, k, d).unwrap();
                assert_eq!(want.len(), k);
                for e in engines().iter().chain(capped()) {
                    let got = e.extremes(v, end, k, d).unwrap();
                    assert!(
                        same(&got, &want),
                        "base {base:#x} {end:?} on {}",
                        e.backend()
                    );
                }
            }
        }
    }
}
