//! Every pixel format through the reductions (the brightest and darkest pixel, the statistics):
//! the CPU against a plain reference written from docs/SPEC.md, and every OpenCL device (whole
//! and in many parts) against the CPU, exactly.

mod common;

use clpix::{Engine, Extreme, FloatStats, Hit, ImageView, LuminanceStats, Pixel};
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

/// What a test image's channels hold.
#[derive(Debug, Clone, Copy)]
enum Fill {
    Random,
    Constant,
    Extremes,
    FewLevels,
    OneBright,
    /// f32 only: NaN, ±inf, −0, denormals and huge values among ordinary ones.
    Specials,
    /// f32 only: every channel NaN.
    AllNan,
    /// f32 only: values 2^27 apart in scale, alternately (the exact sums' accumulators fill up
    /// and move to the sums by exponent); integers: random.
    TwoScales,
}

fn fill() -> impl Strategy<Value = Fill> {
    prop_oneof![
        3 => Just(Fill::Random),
        1 => Just(Fill::Constant),
        1 => Just(Fill::Extremes),
        1 => Just(Fill::FewLevels),
        1 => Just(Fill::OneBright),
        2 => Just(Fill::Specials),
        1 => Just(Fill::AllNan),
        1 => Just(Fill::TwoScales),
    ]
}

/// Channel values of the three channel types, from 64 random bits.
trait Channel: Copy + bytemuck::Pod + std::fmt::Debug {
    fn make(fill: Fill, r: u64, k: usize) -> Self;
}
impl Channel for u8 {
    fn make(fill: Fill, r: u64, k: usize) -> u8 {
        match fill {
            Fill::Constant => 77,
            Fill::Extremes => [0, 255][(r & 1) as usize],
            Fill::FewLevels => r as u8 & 0xc0,
            Fill::OneBright => (r as u8 & 0x3f) | ((k == 0) as u8 * 255),
            _ => r as u8,
        }
    }
}
impl Channel for u16 {
    fn make(fill: Fill, r: u64, k: usize) -> u16 {
        match fill {
            Fill::Constant => 40_000,
            Fill::Extremes => [0, 65535][(r & 1) as usize],
            Fill::FewLevels => r as u16 & 0xc000,
            Fill::OneBright => (r as u16 & 0x3fff) | ((k == 0) as u16 * 65535),
            _ => r as u16,
        }
    }
}
impl Channel for f32 {
    fn make(fill: Fill, r: u64, k: usize) -> f32 {
        let ordinary = ((r >> 8) as u32 % 20_001) as f32 / 64.0 - 150.0;
        match fill {
            Fill::Constant => 0.5,
            Fill::Extremes => [f32::MIN, f32::MAX][(r & 1) as usize],
            Fill::FewLevels => ((r & 3) as f32) - 1.5,
            Fill::OneBright => {
                if k == 0 {
                    1e30
                } else {
                    ordinary
                }
            }
            Fill::AllNan => f32::NAN,
            Fill::TwoScales => match r % 4 {
                0 => 1.5 * 2f32.powi(-20),
                1 => -(1.25 * 2f32.powi(-19)),
                2 => 100.0 + (r >> 40) as f32,
                _ => -3.0e6 - (r >> 44) as f32,
            },
            Fill::Specials => match r % 16 {
                0 => f32::NAN,
                1 => f32::INFINITY,
                2 => f32::NEG_INFINITY,
                3 => -0.0,
                4 => 0.0,
                5 => f32::from_bits((r >> 8) as u32 & 0x7f_ffff), // denormal
                6 => -f32::from_bits((r >> 8) as u32 & 0x7f_ffff),
                _ => ordinary,
            },
            Fill::Random => ordinary,
        }
    }
}

/// A test image of pixels `P`: channels with `pad` channels of padding after each row (filled
/// with a value that would win, so that reading it shows), and a chosen "bright" pixel.
struct Img<C> {
    data: Vec<C>,
    width: u32,
    height: u32,
    /// Channels between row starts.
    row: usize,
}

fn make<C: Channel>(channels: usize, w: u32, h: u32, pad: usize, fill: Fill, seed: u64) -> Img<C> {
    let row = w as usize * channels + pad;
    let mut s = seed;
    let bright = (splitmix(&mut s) % (w as u64 * h as u64).max(1)) as usize;
    let mut data = vec![C::make(Fill::Extremes, 1, 1); row * h as usize];
    for y in 0..h as usize {
        for x in 0..w as usize {
            for c in 0..channels {
                let k = if y * w as usize + x == bright { 0 } else { 1 };
                data[y * row + x * channels + c] = C::make(fill, splitmix(&mut s), k);
            }
        }
    }
    Img {
        data,
        width: w,
        height: h,
        row,
    }
}

/// The key of a pixel as SPEC.md writes it, as f64 (NaN: none), for the reference.
fn spec_key<P: Pixel>(p: &P) -> f64
where
    P::Subpixel: Into<f64>,
{
    let c: Vec<f64> = p.channels().iter().map(|&v| v.into()).collect();
    use clpix::Format::*;
    match P::FORMAT {
        Luma8 | Luma16 | LumaF32 => c[0],
        Rgb8 | Rgba8 => {
            ((1023 * (21 * c[0] as u32 + 72 * c[1] as u32 + 7 * c[2] as u32)) / 25500) as f64
        }
        Rgba16 => ((21 * c[0] as u32 + 72 * c[1] as u32 + 7 * c[2] as u32) / 100) as f64,
        RgbaF32 => {
            let (r, g, b) = (c[0] as f32, c[1] as f32, c[2] as f32);
            0.07f32.mul_add(b, 0.72f32.mul_add(g, 0.21 * r)) as f64
        }
    }
}

/// The reference: (brightest (x, y, key), darkest, (sum, count, min, max)), scanning plainly;
/// sums of f32 keys in double-double (exact for these contents), rounded to f64.
type Point = Option<(u32, u32, f64)>;
type Reference = (Point, Point, Option<(f64, u64, f64, f64)>);

fn reference<P: Pixel>(view: &ImageView<'_, P>) -> Reference
where
    P::Subpixel: bytemuck::Pod + Into<f64>,
{
    let (mut hi, mut lo): (Point, Point) = (None, None);
    let (mut s_hi, mut s_lo, mut count) = (0f64, 0f64, 0u64);
    for y in 0..view.height() {
        for x in 0..view.width() {
            let k = spec_key(&view.get(x, y));
            if k.is_nan() {
                continue;
            }
            if hi.is_none_or(|h| k > h.2) {
                hi = Some((x, y, k));
            }
            if lo.is_none_or(|l| k < l.2) {
                lo = Some((x, y, k));
            }
            // TwoSum: s_hi + s_lo carries the sum without error.
            let t = s_hi + k;
            let bv = t - s_hi;
            let err = (s_hi - (t - bv)) + (k - bv);
            s_hi = t;
            s_lo += err;
            count += 1;
        }
    }
    let sum = if s_hi.is_finite() { s_hi + s_lo } else { s_hi };
    let stats = (count > 0).then(|| (sum, count, lo.map_or(0.0, |l| l.2), hi.map_or(0.0, |h| h.2)));
    (hi, lo, stats)
}

/// What an engine answers, in the reference's terms.
fn answers<P: Pixel>(e: &Engine, view: ImageView<'_, P>) -> Reference
where
    P::Hit: Into<Found>,
    P::Stats: Into<Summary>,
{
    let hit = |which| e.extreme(view, which).ok().map(|h: P::Hit| h.into().0);
    let stats = e.luminance_stats(view).ok().map(|s: P::Stats| s.into().0);
    (hit(Extreme::Brightest), hit(Extreme::Darkest), stats)
}

struct Found((u32, u32, f64));
struct Summary((f64, u64, f64, f64));
impl<P: Pixel> From<Hit<P>> for Found
where
    P::Key: Into<f64>,
{
    fn from(h: Hit<P>) -> Found {
        Found((h.x, h.y, h.key.into()))
    }
}
impl From<clpix::PixelHit> for Found {
    fn from(h: clpix::PixelHit) -> Found {
        Found((h.x, h.y, h.luminance as f64))
    }
}
impl From<LuminanceStats> for Summary {
    fn from(s: LuminanceStats) -> Summary {
        Summary((s.sum as f64, s.count, s.min as f64, s.max as f64))
    }
}
impl From<FloatStats> for Summary {
    fn from(s: FloatStats) -> Summary {
        Summary((s.sum, s.count, s.min as f64, s.max as f64))
    }
}

/// Compares by bits where floats are involved (−0 and +0 are the same key, NaN sums equal).
fn same(a: &Reference, b: &Reference) -> bool {
    let f = |v: f64| match v {
        _ if v.is_nan() => u64::MAX,
        0.0 => 0,
        _ => v.to_bits(),
    };
    let hit = |h: &Option<(u32, u32, f64)>| h.map(|(x, y, k)| (x, y, f(k)));
    let st = |s: &Option<(f64, u64, f64, f64)>| s.map(|(a, b, c, d)| (f(a), b, f(c), f(d)));
    hit(&a.0) == hit(&b.0) && hit(&a.1) == hit(&b.1) && st(&a.2) == st(&b.2)
}

fn check<P, C>(
    channels: usize,
    (w, h): (u32, u32),
    pad: usize,
    fill: Fill,
    seed: u64,
) -> Result<(), TestCaseError>
where
    P: Pixel<Subpixel = C>,
    C: Channel + Into<f64>,
    P::Hit: Into<Found>,
    P::Stats: Into<Summary>,
    P::Key: Into<f64>,
{
    let img = make::<C>(channels, w, h, pad, fill, seed);
    let stride = img.row * std::mem::size_of::<C>();
    let view = ImageView::<P>::from_channels(&img.data, img.width, img.height, stride)
        .map_err(|e| TestCaseError::fail(e.to_string()))?;
    let cpu = answers(&Engine::cpu(), view);
    let expected = reference(&view);
    prop_assert!(
        same(&cpu, &expected),
        "{:?} {fill:?} {w}×{h}+{pad}: cpu {cpu:?} reference {expected:?}",
        P::FORMAT
    );
    for e in engines().iter().chain(capped()) {
        let got = answers(e, view);
        prop_assert!(
            same(&got, &cpu),
            "{:?} {fill:?} {w}×{h}+{pad} on {}: {got:?} cpu {cpu:?}",
            P::FORMAT,
            e.backend()
        );
    }
    Ok(())
}

fn pad() -> impl Strategy<Value = usize> {
    prop_oneof![3 => Just(0usize), 1 => 1..9usize]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 40, ..ProptestConfig::default() })]

    #[test]
    fn mono8(d in dims(), p in pad(), f in fill(), s in any::<u64>()) {
        check::<Luma<u8>, u8>(1, d, p, f, s)?;
    }

    #[test]
    fn mono16(d in dims(), p in pad(), f in fill(), s in any::<u64>()) {
        check::<Luma<u16>, u16>(1, d, p, f, s)?;
    }

    #[test]
    fn mono_f32(d in dims(), p in pad(), f in fill(), s in any::<u64>()) {
        check::<Luma<f32>, f32>(1, d, p, f, s)?;
    }

    #[test]
    fn rgb8(d in dims(), p in pad(), f in fill(), s in any::<u64>()) {
        check::<Rgb<u8>, u8>(3, d, p, f, s)?;
    }

    #[test]
    fn rgba8_through_the_typed_api(d in dims(), p in pad(), f in fill(), s in any::<u64>()) {
        check::<Rgba<u8>, u8>(4, d, p, f, s)?;
    }

    #[test]
    fn rgba16(d in dims(), p in pad(), f in fill(), s in any::<u64>()) {
        check::<Rgba<u16>, u16>(4, d, p, f, s)?;
    }

    #[test]
    fn rgba_f32(d in dims(), p in pad(), f in fill(), s in any::<u64>()) {
        check::<Rgba<f32>, f32>(4, d, p, f, s)?;
    }
}

#[test]
fn exact_f32_sums_of_two_scales() {
    for (w, h) in [(1000, 300), (4099, 17), (64, 64)] {
        for seed in 0..3 {
            check::<Luma<f32>, f32>(1, (w, h), 0, Fill::TwoScales, seed).unwrap();
            check::<Rgba<f32>, f32>(4, (w, h), 1, Fill::TwoScales, seed).unwrap();
        }
    }
}

#[test]
fn image_buffers_and_views_give_the_same_answers() {
    let img = image::ImageBuffer::from_fn(300, 200, |x, y| {
        Luma([((x * 7919 + y * 104_729) % 65_536) as u16])
    });
    let mut all = vec![Engine::cpu()];
    all.extend(opencl_engines());
    for e in &all {
        let a = e.extreme(&img, Extreme::Brightest).unwrap();
        let b = e
            .extreme(ImageView::from(&img), Extreme::Brightest)
            .unwrap();
        assert_eq!(a, b, "{}", e.backend());
        assert_eq!(a.value, *img.get_pixel(a.x, a.y));
        assert_eq!(a.key, a.value.0[0]);
    }
}

#[test]
fn images_of_nan_only_are_errors_not_panics() {
    let img = image::ImageBuffer::from_pixel(40, 30, Luma([f32::NAN]));
    let mut all = vec![Engine::cpu()];
    all.extend(opencl_engines());
    for e in &all {
        for which in [Extreme::Brightest, Extreme::Darkest] {
            assert!(
                matches!(e.extreme(&img, which), Err(clpix::Error::EmptyImage { .. })),
                "{}",
                e.backend()
            );
        }
        assert!(matches!(
            e.luminance_stats(&img),
            Err(clpix::Error::EmptyImage { .. })
        ));
    }
}

#[test]
fn bad_typed_views_are_errors() {
    let px = [0u16; 12];
    assert!(
        ImageView::<Luma<u16>>::from_channels(&px, 4, 3, 7).is_err(),
        "odd stride"
    );
    assert!(
        ImageView::<Luma<u16>>::from_channels(&px, 4, 3, 6).is_err(),
        "stride below a row"
    );
    assert!(
        ImageView::<Luma<u16>>::from_channels(&px, 4, 4, 8).is_err(),
        "too short"
    );
    assert!(ImageView::<Rgb<u8>>::from_channels(&[0u8; 9], 3, 1, 9).is_ok());
}

/// SPEC.md's bins, written plainly: integers by the formula, f32 by numpy's f64 edges.
fn spec_bin(v: f64, float: bool, n: u32, lo: f64, hi: f64) -> Option<usize> {
    if v.is_nan() {
        return None;
    }
    if !float {
        let w = (hi - lo) as u64 + 1;
        return (v >= lo && v <= hi).then(|| ((v - lo) as u64 * n as u64 / w) as usize);
    }
    let (lo, hi) = if lo == hi {
        (lo - 0.5, hi + 0.5)
    } else {
        (lo, hi)
    };
    let step = (hi - lo) / n as f64;
    let edge = |k: u32| if k == n { hi } else { k as f64 * step + lo };
    if !(v >= lo && v <= hi) {
        return None;
    }
    // The last edge not above v (bins closed below), the last bin closed above.
    let (mut a, mut b) = (0u32, n);
    while b - a > 1 {
        let m = (a + b) / 2;
        if v >= edge(m) { a = m } else { b = m }
    }
    Some(a as usize)
}

/// Channel and key histograms on the CPU against the plain reference, and every OpenCL engine
/// (whole and in parts) against the CPU.
fn check_histograms<P, C>(
    channels: usize,
    (w, h): (u32, u32),
    pad: usize,
    fill: Fill,
    seed: u64,
    (n, lo, hi): (u32, f64, f64),
) -> Result<(), TestCaseError>
where
    P: Pixel<Subpixel = C>,
    C: Channel + Into<f64>,
{
    let img = make::<C>(channels, w, h, pad, fill, seed);
    let stride = img.row * std::mem::size_of::<C>();
    let view = ImageView::<P>::from_channels(&img.data, img.width, img.height, stride)
        .map_err(|e| TestCaseError::fail(e.to_string()))?;
    let bins = clpix::Bins::new(n, lo, hi).map_err(|e| TestCaseError::fail(e.to_string()))?;
    let float = P::FORMAT.is_float();
    let mut want_c = vec![vec![0u32; n as usize]; channels];
    let mut want_k = vec![0u32; n as usize];
    for y in 0..h {
        for x in 0..w {
            let p = view.get(x, y);
            for (c, &v) in p.channels().iter().enumerate() {
                if let Some(b) = spec_bin(v.into(), float, n, lo, hi) {
                    want_c[c][b] += 1;
                }
            }
            if let Some(b) = spec_bin(spec_key(&p), float, n, lo, hi) {
                want_k[b] += 1;
            }
        }
    }
    let cpu = Engine::cpu();
    let (got_c, got_k) = (
        cpu.histogram(view, bins).unwrap(),
        cpu.histogram_keys(view, bins).unwrap(),
    );
    prop_assert!(
        got_c == want_c,
        "{:?} {fill:?} {w}×{h} channels, {n} bins {lo}..={hi}",
        P::FORMAT
    );
    prop_assert!(
        got_k == want_k,
        "{:?} {fill:?} {w}×{h} keys, {n} bins {lo}..={hi}",
        P::FORMAT
    );
    for e in engines().iter().chain(capped()) {
        prop_assert!(
            e.histogram(view, bins).unwrap() == got_c,
            "{:?} channels on {}",
            P::FORMAT,
            e.backend()
        );
        prop_assert!(
            e.histogram_keys(view, bins).unwrap() == got_k,
            "{:?} keys on {}",
            P::FORMAT,
            e.backend()
        );
    }
    Ok(())
}

/// Bins for an integer format whose values reach `max`: few or many, ranges inside, across,
/// below and beyond the values.
fn int_bins(max: u32) -> impl Strategy<Value = (u32, f64, f64)> {
    (
        prop_oneof![Just(1u32), 1..300u32, Just(4096), Just(65_536)],
        -300..=max as i64,
        -300..=max as i64 + 10,
    )
        .prop_map(|(n, a, b)| (n, a.min(b) as f64, a.max(b) as f64))
}

/// Bins for f32 values: ranges over the ordinary values (or one value), and adversarial ones:
/// spans so small that `bins / span` overflows f32 (denormals, tiny normals), and ranges beyond
/// f32's (whose low end is -inf as an f32, and whose `bins / span` underflows to 0).
fn f32_bins() -> impl Strategy<Value = (u32, f64, f64)> {
    let ordinary = (
        prop_oneof![Just(1u32), 1..300u32, Just(4096)],
        -200.0..200.0f64,
        0.0..400.0f64,
    )
        .prop_map(|(n, lo, span)| (n, lo, lo + span * (span > 1.0) as u8 as f64));
    let tiny = (
        prop_oneof![Just(1u32), 2..300u32, Just(65_536)],
        prop::sample::select(vec![0.0, -1e-40, 1e-42, -1.5e-38, 1e-37]),
        prop::sample::select(vec![1e-45, 3e-42, 1e-40, 1e-38, 1e-35]),
    )
        .prop_map(|(n, lo, span)| (n, lo, lo + span));
    let huge = (
        prop_oneof![Just(1u32), 2..300u32, Just(65_536)],
        prop::sample::select(vec![
            (-1e300, 1e300),
            (-(f32::MAX as f64), f32::MAX as f64),
            (0.0, 1e39),
            (-1e39, 5.0),
            (-3e38, 3e38),
        ]),
    )
        .prop_map(|(n, (lo, hi))| (n, lo, hi));
    prop_oneof![4 => ordinary, 1 => tiny, 1 => huge]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn histograms_mono8(d in dims(), p in pad(), f in fill(), s in any::<u64>(), b in int_bins(255)) {
        check_histograms::<Luma<u8>, u8>(1, d, p, f, s, b)?;
    }

    #[test]
    fn histograms_mono16(d in dims(), p in pad(), f in fill(), s in any::<u64>(), b in int_bins(65535)) {
        check_histograms::<Luma<u16>, u16>(1, d, p, f, s, b)?;
    }

    #[test]
    fn histograms_mono_f32(d in dims(), p in pad(), f in fill(), s in any::<u64>(), b in f32_bins()) {
        check_histograms::<Luma<f32>, f32>(1, d, p, f, s, b)?;
    }

    #[test]
    fn histograms_rgb8(d in dims(), p in pad(), f in fill(), s in any::<u64>(), b in int_bins(255)) {
        check_histograms::<Rgb<u8>, u8>(3, d, p, f, s, b)?;
    }

    #[test]
    fn histograms_rgba8(d in dims(), p in pad(), f in fill(), s in any::<u64>(), b in int_bins(255)) {
        check_histograms::<Rgba<u8>, u8>(4, d, p, f, s, b)?;
    }

    #[test]
    fn histograms_rgba16(d in dims(), p in pad(), f in fill(), s in any::<u64>(), b in int_bins(65535)) {
        check_histograms::<Rgba<u16>, u16>(4, d, p, f, s, b)?;
    }

    #[test]
    fn histograms_rgba_f32(d in dims(), p in pad(), f in fill(), s in any::<u64>(), b in f32_bins()) {
        check_histograms::<Rgba<f32>, f32>(4, d, p, f, s, b)?;
    }
}

/// The whole domain in bins of 2^k values (the fast paths: a shift, no table), and its
/// neighbours that are not.
#[test]
fn histograms_of_the_whole_domain() {
    let cases = [
        (256u32, 0.0, 65535.0),
        (65_536, 0.0, 65535.0),
        (1024, 0.0, 131_071.0),
        (256, 0.0, 65534.0),
        (256, 1.0, 65535.0),
    ];
    for (k, &bins) in cases.iter().enumerate() {
        for fill in [Fill::Random, Fill::Constant, Fill::Extremes] {
            check_histograms::<Luma<u16>, u16>(1, (301, 77), k % 2, fill, k as u64, bins).unwrap();
            check_histograms::<Luma<u8>, u8>(
                1,
                (301, 77),
                k % 2,
                fill,
                k as u64,
                (bins.0.min(256), 0.0, 255.0),
            )
            .unwrap();
        }
    }
}
