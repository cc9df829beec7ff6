//! Test support for the pixel formats: random channel values of each type, adversarial kinds
//! among them, and the comparison of hits by bits.

use super::TestImage;
use clpix::{Engine, Hit, Pixel};

/// Channel values from 64 random bits: `kind` 0 random, 1 few levels (ties), 2 extremes, 3
/// (f32) NaN, ±inf, −0 and denormals among ordinary values.
pub trait Chan: Copy + bytemuck::Pod + Default + std::fmt::Debug {
    fn make(kind: u8, r: u64) -> Self;
}
impl Chan for u8 {
    fn make(kind: u8, r: u64) -> u8 {
        match kind {
            1 => r as u8 & 0xc0,
            2 => [0, 255][(r & 1) as usize],
            _ => r as u8,
        }
    }
}
impl Chan for u16 {
    fn make(kind: u8, r: u64) -> u16 {
        match kind {
            1 => r as u16 & 0xc000,
            2 => [0, 65535][(r & 1) as usize],
            _ => r as u16,
        }
    }
}
impl Chan for f32 {
    fn make(kind: u8, r: u64) -> f32 {
        let ordinary = ((r >> 8) as u32 % 2001) as f32 / 8.0 - 125.0;
        match (kind, r % 8) {
            (1, _) => ((r & 3) as f32) - 1.5,
            (2, _) => [f32::MIN, f32::MAX][(r & 1) as usize],
            (3, 0) => f32::NAN,
            (3, 1) => f32::INFINITY,
            (3, 2) => f32::NEG_INFINITY,
            (3, 3) => -0.0,
            (3, 4) => f32::from_bits((r >> 8) as u32 & 0x7f_ffff),
            _ => ordinary,
        }
    }
}

/// Equal hits (f32 values compared by bits: a kept pixel has no NaN key, but a colour pixel
/// may hold a NaN in its alpha).
pub fn same<P: Pixel>(a: &[Hit<P>], b: &[Hit<P>]) -> bool
where
    P::Subpixel: bytemuck::Pod,
{
    a.len() == b.len()
        && a.iter().zip(b).all(|(p, q)| {
            p.x == q.x
                && p.y == q.y
                && p.value
                    .channels()
                    .iter()
                    .zip(q.value.channels())
                    .all(|(u, v)| bytemuck::bytes_of(u) == bytemuck::bytes_of(v))
        })
}

/// Random channels of `P` for a `w × h` image with `pad` extra values a row (of `kind`, see
/// [`Chan::make`]), and the row length in values.
pub fn channels<P: Pixel>(
    w: u32,
    h: u32,
    pad: usize,
    kind: u8,
    seed: u64,
) -> (Vec<P::Subpixel>, usize)
where
    P::Subpixel: Chan,
{
    let row = w as usize * P::FORMAT.channels() + pad;
    let mut s = seed;
    let data = (0..row * h as usize)
        .map(|_| Chan::make(kind, super::splitmix(&mut s)))
        .collect();
    (data, row)
}

/// The blobs of an image of any format above `t`, both connectivities (float formats with
/// +inf above `t`: the error that says so).
fn blobs_of<'a, I: clpix::IntoImage<'a> + Copy>(
    e: &Engine,
    img: I,
    t: <I::Pixel as clpix::Pixel>::Key,
) -> Vec<clpix::Result<clpix::Blobs>> {
    [clpix::Connectivity::Eight, clpix::Connectivity::Four]
        .into_iter()
        .map(|c| {
            e.blobs(
                img,
                t,
                &clpix::BlobOptions::new().connectivity(c).area(2, 400),
            )
        })
        .collect()
}

/// The reductions of every other pixel format on one image made from `img`'s pixels (mono8 its
/// green, mono16 green and red, mono f32 with NaN, ±inf, −0 and denormals among its values,
/// RGB8, RGBA16, RGBA f32), each result (value or error) as text.
pub fn every_format_op(e: &Engine, img: &TestImage) -> Vec<String> {
    format_ops(e, img, false)
}

/// [`every_format_op`] on images `e` holds (`Engine::upload` of each format first): the same
/// strings as on the host images.
pub fn every_format_op_held(e: &Engine, img: &TestImage) -> Vec<String> {
    format_ops(e, img, true)
}

fn format_ops(e: &Engine, img: &TestImage, held: bool) -> Vec<String> {
    use clpix::Extreme::{Brightest, Darkest};
    use image::{ImageBuffer, Luma, Rgb, Rgba};
    let rgba = img.to_image();
    let (w, h) = rgba.dimensions();
    let special = |x: u32, y: u32, c: u8| match (x * 7 + y * 3) % 23 {
        0 => f32::NAN,
        1 => f32::INFINITY,
        2 => f32::NEG_INFINITY,
        3 => -0.0,
        4 => f32::from_bits(c as u32 + 1),
        // Two scales 2^26 apart: the exact sums' accumulators fill up.
        5 | 8 | 11 => 1.5 * 2f32.powi(-20),
        6 | 9 | 12 => 100.0 + c as f32,
        _ => (c as f32 - 127.0) / 3.0,
    };
    let px = |x, y| rgba.get_pixel(x, y).0;
    let m8 = ImageBuffer::from_fn(w, h, |x, y| Luma([px(x, y)[1]]));
    let m16 = ImageBuffer::from_fn(w, h, |x, y| {
        Luma([u16::from_le_bytes([px(x, y)[0], px(x, y)[1]])])
    });
    let mf = ImageBuffer::from_fn(w, h, |x, y| Luma([special(x, y, px(x, y)[1])]));
    let rgb = ImageBuffer::from_fn(w, h, |x, y| Rgb([px(x, y)[0], px(x, y)[1], px(x, y)[2]]));
    let r16 = ImageBuffer::from_fn(w, h, |x, y| {
        Rgba(px(x, y).map(|c| ((c as u16) * 257) ^ (x as u16)))
    });
    let rf = ImageBuffer::from_fn(w, h, |x, y| {
        let p = px(x, y);
        Rgba([
            special(x, y, p[0]),
            p[1] as f32 / 255.0,
            p[2] as f32,
            p[3] as f32,
        ])
    });
    let mut out = Vec::new();
    let int_bins = clpix::Bins::new(37, 3.0, 60_000.0).expect("bins");
    let few_bins = clpix::Bins::new(5, 10.0, 200.0).expect("bins");
    let f32_bins = clpix::Bins::new(37, -20.0, 20.0).expect("bins");
    macro_rules! run {
        ($img:expr, $host:expr, $bins:expr, $t:expr) => {{
            out.push(format!("{:?}", e.extreme($img, Brightest)));
            out.push(format!("{:?}", e.extreme($img, Darkest)));
            out.push(format!("{:?}", e.luminance_stats($img)));
            out.push(format!("{:?}", e.histogram($img, $bins)));
            out.push(format!("{:?}", e.histogram_keys($img, $bins)));
            for order in [
                clpix::CompactOrder::ScanOrder,
                clpix::CompactOrder::LuminanceDescending,
            ] {
                out.push(format!("{:?}", e.compact($img, $t, order)));
            }
            out.push(format!(
                "{:?}",
                e.compacted_image($img, $t, clpix::CompactOrder::LuminanceDescending)
                    .map(|c| c.into_raw())
            ));
            out.push(format!("{:?}", blobs_of(e, $img, $t)));
            out.push(format!("{:?}", e.extremes($img, Brightest, 5, 3.0)));
            out.push(format!("{:?}", e.extremes($img, Darkest, 7, 0.0)));
            // The blur: the tile in local memory (w = 2), and taps beyond the image (w = 9).
            for blur in [
                clpix::GaussianBlur::new(2).border(clpix::Border::Reflect),
                clpix::GaussianBlur::new(9).border(clpix::Border::Zero),
            ] {
                // A device that flushes denormals refuses f32 blurs, saying so (an automatic
                // engine answers on the CPU): the CPU's answer stands for it.
                let blurred = match e.gaussian_blur($img, &blur) {
                    Err(clpix::Error::DeviceLimit { what, .. }) if what.contains("denormals") => {
                        Engine::cpu().gaussian_blur($host, &blur)
                    }
                    other => other,
                };
                out.push(format!("{:?}", blurred.map(|b| b.into_raw())));
                // Kept on the engine, then read back.
                let kept = match e
                    .gaussian_blur_device($img, &blur)
                    .and_then(|d| e.download(&d))
                {
                    Err(clpix::Error::DeviceLimit { what, .. }) if what.contains("denormals") => {
                        Engine::cpu().gaussian_blur($host, &blur)
                    }
                    other => other,
                };
                out.push(format!("{:?}", kept.map(|b| b.into_raw())));
            }
        }};
    }
    macro_rules! ops {
        ($($img:ident, $bins:expr, $t:expr);*) => {$(
            if held {
                let d = e.upload(&$img).expect("upload");
                run!(&d, &$img, $bins, $t);
            } else {
                run!(&$img, &$img, $bins, $t);
            }
        )*};
    }
    ops!(
        m8, few_bins, 100u8;
        m16, int_bins, 30_000u16;
        mf, f32_bins, 0.0f32;
        rgb, few_bins, 500u16;
        r16, int_bins, 30_000u16;
        rf, f32_bins, 0.0f32
    );
    // f32 blobs: the infinities (an error on every path) made ±1e30, a background below 0.
    let finite = |v: f32| match v.is_infinite() {
        true => 1e30f32.copysign(v),
        false => v,
    };
    let mf_finite = ImageBuffer::from_fn(w, h, |x, y| Luma([finite(mf.get_pixel(x, y).0[0])]));
    let rf_finite = ImageBuffer::from_fn(w, h, |x, y| Rgba(rf.get_pixel(x, y).0.map(finite)));
    let opts = clpix::BlobOptions::new().background_f32(-1.0).area(1, 400);
    macro_rules! f32_blobs {
        ($($img:ident),*) => {$(
            let found = match held {
                true => e.upload(&$img).and_then(|d| e.blobs(&d, 0.0f32, &opts)),
                false => e.blobs(&$img, 0.0f32, &opts),
            };
            out.push(format!("{found:?}"));
        )*};
    }
    f32_blobs!(mf_finite, rf_finite);
    // Many bins: the global-memory counters (more than local memory holds).
    let many = clpix::Bins::new(65_536, 0.0, 65_535.0).expect("bins");
    out.push(format!(
        "{:?}",
        e.histogram_keys(&m16, many)
            .map(|h| h.iter().map(|&c| c as u64 * 31).sum::<u64>())
    ));
    out.push(format!("{:?}", e.histogram(img.view(), few_bins)));
    // RGBA8's operations of every format (the histograms, the blobs, the centroids) on a held
    // RGBA8 image: its parts read where they are.
    macro_rules! rgba8_ops {
        ($img:expr) => {{
            out.push(format!("{:?}", e.histogram($img, few_bins)));
            out.push(format!("{:?}", e.histogram_keys($img, few_bins)));
            out.push(format!("{:?}", blobs_of(e, $img, 500u16)));
            if w > 0 && h > 0 {
                let at = [(0, 0), (w - 1, h - 1), (w / 2, h / 2)];
                out.push(format!("{:?}", e.centroids($img, &at, 2, 100)));
            }
        }};
    }
    if held {
        let d = e.upload(img.view()).expect("upload");
        rgba8_ops!(&d);
    } else {
        rgba8_ops!(img.view());
    }
    out
}
