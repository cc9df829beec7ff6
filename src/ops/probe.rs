//! What the operations' known-answer probes share (see [`Family`](crate::engine::Family)):
//! small inputs that cross every boundary the kernels have, and the comparison with the CPU.
//!
//! The image is 203 × 67 (13,601 pixels): several work-groups of every streaming kernel (256
//! work-items, 4 pixels each), several relocation and radix tiles (2,048 and 4,096 pixels),
//! blur tiles and strips in both directions with partial ones at the right and bottom edges,
//! many parts on a CPU device. Its content mixes noise with runs of equal pixels and the
//! extremes (ties, 0 and 255), as the property tests' adversarial images do.

use crate::error::{Error, Result};
use crate::image::RawView;
use crate::spec::Format;
use image::RgbaImage;

/// The probes' image size.
pub(super) const PROBE_SIZE: (u32, u32) = (203, 67);

/// A 32-bit LCG step: the probes' inputs are the same in every process.
fn next(seed: &mut u32) -> u32 {
    *seed = seed.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
    *seed
}

/// The probes' image: noise, with a band of one colour (ties), a white and a black run.
pub(super) fn probe_image() -> RgbaImage {
    let (w, h) = PROBE_SIZE;
    let mut seed = 0x5eed_u32;
    RgbaImage::from_fn(w, h, |x, y| {
        let noise = next(&mut seed).to_le_bytes();
        match (x, y) {
            (_, 20..=23) => image::Rgba([90, 140, 30, 255]),
            (150..=170, 40) => image::Rgba([255, 255, 255, 255]),
            (10..=40, 50) => image::Rgba([0, 0, 0, 0]),
            _ => image::Rgba(noise),
        }
    })
}

/// The probes' array: 70,001 elements (several scan tiles and groups, a partial last one) of
/// noise with runs of 0 and `u32::MAX`.
pub(super) fn probe_array() -> Vec<u32> {
    let mut seed = 0xa77a_u32;
    (0..70_001u32)
        .map(|i| match i % 9_973 {
            0..=40 => 0,
            100..=140 => u32::MAX,
            _ => next(&mut seed) >> (i % 17),
        })
        .collect()
}

/// `None` where the device's answer equals the CPU's, else what differed (`what`). An error of
/// the device is the probe's error (no verdict); the CPU's answers are always `Ok` for these
/// inputs, and an error of theirs is one too.
pub(super) fn compare<T: PartialEq>(
    what: &str,
    device: Result<T>,
    cpu: Result<T>,
) -> Result<Option<String>> {
    let (device, cpu) = (device?, cpu?);
    Ok((device != cpu).then(|| {
        format!(
            "{what} of a {}×{} probe differed from the CPU's",
            PROBE_SIZE.0, PROBE_SIZE.1
        )
    }))
}

/// An error for an operation a family's probe does not know (a programming error, never a
/// user's: the call goes on unprobed).
pub(super) fn unknown(operation: &'static str) -> Error {
    Error::invalid(
        "probed operation",
        operation,
        "an operation of the kernel family",
    )
}

/// The probe image of `format`, as bytes: the RGBA8 probe's noise widened to the format, with
/// its runs of one colour (ties), white and black; f32 formats add NaN, ±infinity, −0 and a
/// denormal.
fn probe_bytes(format: Format) -> Vec<u8> {
    let img = probe_image();
    let mut out = Vec::new();
    for (i, p) in img.pixels().enumerate() {
        let [r, g, b, a] = p.0;
        let wide = |c: u8| (c as u16) << 8 | (i as u16 & 0xff);
        let float = |c: u8| match i % 97 {
            3 => f32::NAN,
            5 => f32::INFINITY,
            7 => f32::NEG_INFINITY,
            11 => -0.0,
            13 => f32::from_bits(3),
            _ => (c as f32 - 100.0) / 7.0,
        };
        match format {
            Format::Luma8 => out.push(g),
            Format::Luma16 => out.extend(wide(g).to_ne_bytes()),
            Format::LumaF32 => out.extend(float(g).to_ne_bytes()),
            Format::Rgb8 => out.extend([r, g, b]),
            Format::Rgba8 => out.extend([r, g, b, a]),
            Format::Rgba16 => {
                for c in [r, g, b, a] {
                    out.extend(wide(c).to_ne_bytes());
                }
            }
            Format::RgbaF32 => {
                for c in [float(r), g as f32 / 255.0, b as f32 * 1e-40, a as f32] {
                    out.extend(c.to_ne_bytes());
                }
            }
        }
    }
    out
}

/// The probe image of a format, in u32 words (aligned for every channel size).
pub(super) struct ProbeRaw {
    words: Vec<u32>,
    bytes: usize,
    format: Format,
}

impl ProbeRaw {
    pub(super) fn view(&self) -> RawView<'_> {
        let (w, h) = PROBE_SIZE;
        RawView {
            data: &bytemuck::cast_slice(&self.words)[..self.bytes],
            width: w,
            height: h,
            stride: w as usize * self.format.bytes_per_pixel(),
            format: self.format,
        }
    }
}

/// [`probe_bytes`] of `format`, as [`ProbeRaw`].
pub(super) fn probe_raw(format: Format) -> ProbeRaw {
    let bytes = probe_bytes(format);
    let mut words = vec![0u32; bytes.len().div_ceil(4)];
    bytemuck::cast_slice_mut::<u32, u8>(&mut words)[..bytes.len()].copy_from_slice(&bytes);
    ProbeRaw {
        words,
        bytes: bytes.len(),
        format,
    }
}
