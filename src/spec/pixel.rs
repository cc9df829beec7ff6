//! Pixel formats and their keys, as `docs/SPEC.md` ("Pixel formats") defines them: the sealed
//! [`Pixel`] trait, implemented for the seven `image` pixel types the operations accept.

use super::PixelHit;
use image::{Luma, Rgb, Rgba};

/// The pixel formats the operations accept, one per [`Pixel`] type.
///
/// ```
/// use clpix::{Format, Pixel};
/// assert_eq!(<image::Luma<u16> as Pixel>::FORMAT, Format::Luma16);
/// assert_eq!(Format::Rgb8.bytes_per_pixel(), 3);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Format {
    /// One 8-bit channel (`image::Luma<u8>`).
    Luma8,
    /// One 16-bit channel (`image::Luma<u16>`).
    Luma16,
    /// One 32-bit float channel (`image::Luma<f32>`).
    LumaF32,
    /// Red, green, blue, 8 bits each (`image::Rgb<u8>`).
    Rgb8,
    /// Red, green, blue, alpha, 8 bits each (`image::Rgba<u8>`).
    Rgba8,
    /// Red, green, blue, alpha, 16 bits each (`image::Rgba<u16>`).
    Rgba16,
    /// Red, green, blue, alpha, 32-bit floats (`image::Rgba<f32>`).
    RgbaF32,
}

impl Format {
    /// Every format, in the order of the enum.
    ///
    /// ```
    /// assert_eq!(clpix::Format::ALL.len(), 7);
    /// ```
    pub const ALL: [Format; 7] = [
        Format::Luma8,
        Format::Luma16,
        Format::LumaF32,
        Format::Rgb8,
        Format::Rgba8,
        Format::Rgba16,
        Format::RgbaF32,
    ];

    /// Channels a pixel has.
    ///
    /// ```
    /// assert_eq!(clpix::Format::Rgba16.channels(), 4);
    /// ```
    pub fn channels(self) -> usize {
        match self {
            Format::Luma8 | Format::Luma16 | Format::LumaF32 => 1,
            Format::Rgb8 => 3,
            Format::Rgba8 | Format::Rgba16 | Format::RgbaF32 => 4,
        }
    }

    /// Bytes one channel takes.
    ///
    /// ```
    /// assert_eq!(clpix::Format::LumaF32.bytes_per_channel(), 4);
    /// ```
    pub fn bytes_per_channel(self) -> usize {
        match self {
            Format::Luma8 | Format::Rgb8 | Format::Rgba8 => 1,
            Format::Luma16 | Format::Rgba16 => 2,
            Format::LumaF32 | Format::RgbaF32 => 4,
        }
    }

    /// Bytes one pixel takes.
    ///
    /// ```
    /// assert_eq!(clpix::Format::Rgba16.bytes_per_pixel(), 8);
    /// ```
    pub fn bytes_per_pixel(self) -> usize {
        self.channels() * self.bytes_per_channel()
    }

    /// Whether its channels are 32-bit floats (keys are then `f32`, NaN has no key).
    ///
    /// ```
    /// assert!(clpix::Format::RgbaF32.is_float());
    /// ```
    pub fn is_float(self) -> bool {
        matches!(self, Format::LumaF32 | Format::RgbaF32)
    }

    /// The name errors and the docs use (`"mono16"`, `"rgb8"`, ...).
    ///
    /// ```
    /// assert_eq!(clpix::Format::Luma16.name(), "mono16");
    /// ```
    pub fn name(self) -> &'static str {
        match self {
            Format::Luma8 => "mono8",
            Format::Luma16 => "mono16",
            Format::LumaF32 => "mono-f32",
            Format::Rgb8 => "rgb8",
            Format::Rgba8 => "rgba8",
            Format::Rgba16 => "rgba16",
            Format::RgbaF32 => "rgba-f32",
        }
    }

    /// The largest key of an integer format (`None` for float formats).
    ///
    /// ```
    /// assert_eq!(clpix::Format::Rgb8.max_key(), Some(1023));
    /// assert_eq!(clpix::Format::Luma16.max_key(), Some(65535));
    /// ```
    pub fn max_key(self) -> Option<u32> {
        match self {
            Format::Luma8 => Some(255),
            Format::Luma16 | Format::Rgba16 => Some(65535),
            Format::Rgb8 | Format::Rgba8 => Some(1023),
            Format::LumaF32 | Format::RgbaF32 => None,
        }
    }

    /// The key of the pixel whose bytes (native endian, `bytes_per_pixel` of them) are `px`,
    /// as an order key: for integer formats the key itself, for float formats the bits of the
    /// `f32` key mapped so that integer order is numeric order (−0 as +0); `None` for a NaN key.
    pub(crate) fn order_key(self, px: &[u8]) -> Option<u32> {
        let u16_at = |i: usize| u16::from_ne_bytes([px[2 * i], px[2 * i + 1]]) as u32;
        let f32_at =
            |i: usize| f32::from_ne_bytes([px[4 * i], px[4 * i + 1], px[4 * i + 2], px[4 * i + 3]]);
        match self {
            Format::Luma8 => Some(px[0] as u32),
            Format::Luma16 => Some(u16_at(0)),
            Format::Rgb8 | Format::Rgba8 => {
                Some((1023 * (21 * px[0] as u32 + 72 * px[1] as u32 + 7 * px[2] as u32)) / 25500)
            }
            Format::Rgba16 => Some((21 * u16_at(0) + 72 * u16_at(1) + 7 * u16_at(2)) / 100),
            Format::LumaF32 => order_of_f32(f32_at(0)),
            Format::RgbaF32 => order_of_f32(rgba_f32_key(f32_at(0), f32_at(1), f32_at(2))),
        }
    }
}

/// The key of an RGBA f32 pixel: `fma(0.07, b, fma(0.72, g, 0.21 × r))`, in f32, in that order.
#[inline(always)]
pub(crate) fn rgba_f32_key(r: f32, g: f32, b: f32) -> f32 {
    0.07f32.mul_add(b, 0.72f32.mul_add(g, 0.21 * r))
}

/// An f32 as an order key (integer order = numeric order, −0 = +0); `None` for NaN.
#[inline(always)]
pub(crate) fn order_of_f32(v: f32) -> Option<u32> {
    if v.is_nan() {
        return None;
    }
    let bits = (v + 0.0).to_bits(); // −0 + 0 = +0
    Some(if bits >> 31 == 1 {
        !bits
    } else {
        bits | 0x8000_0000
    })
}

/// The f32 whose order key is `k` (the inverse of [`order_of_f32`]).
#[inline(always)]
pub(crate) fn f32_of_order(k: u32) -> f32 {
    f32::from_bits(if k >> 31 == 1 { k & 0x7fff_ffff } else { !k })
}

/// A pixel found by an operation on an image of format `P`: where it is, its key (what the
/// operation ranked it by) and its own value. [`Rgba<u8>`] images give [`PixelHit`] instead,
/// as they always have.
///
/// ```
/// let mut img = image::ImageBuffer::<image::Luma<u16>, _>::new(40, 30);
/// img.put_pixel(7, 9, image::Luma([60_000]));
/// let hit = clpix::Engine::cpu().extreme(&img, clpix::Extreme::Brightest)?;
/// assert_eq!((hit.x, hit.y, hit.key, hit.value), (7, 9, 60_000, image::Luma([60_000])));
/// # Ok::<(), clpix::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Hit<P: Pixel> {
    /// Column.
    pub x: u32,
    /// Row.
    pub y: u32,
    /// The pixel's key: its value for one channel, its luminance for colour.
    pub key: P::Key,
    /// The pixel.
    pub value: P,
}

/// Luminance statistics of an image.
///
/// ```
/// let img = image::RgbaImage::from_pixel(4, 4, image::Rgba([255, 255, 255, 0]));
/// let s = clpix::Engine::cpu().luminance_stats(&img)?;
/// assert_eq!((s.sum, s.count, s.min, s.max), (16 * 1023, 16, 1023, 1023));
/// assert_eq!(s.mean, 1023.0);
/// # Ok::<(), clpix::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LuminanceStats {
    /// Sum of the luminance of every pixel.
    pub sum: u64,
    /// Number of pixels.
    pub count: u64,
    /// `sum / count`.
    pub mean: f64,
    /// Smallest luminance.
    pub min: u16,
    /// Largest luminance.
    pub max: u16,
}

/// Statistics of the keys of an image of a float format: NaN keys are not counted.
///
/// `sum` is the exact sum of the keys rounded once to f64 (the same bits on every path and
/// device); it is ±infinity where infinite keys of one sign are present and NaN where both.
///
/// ```
/// let img = image::ImageBuffer::<image::Luma<f32>, _>::from_raw(3, 1, vec![1.5, f32::NAN, -0.25]).unwrap();
/// let s = clpix::Engine::cpu().luminance_stats(&img)?;
/// assert_eq!((s.sum, s.count, s.min, s.max, s.mean), (1.25, 2, -0.25, 1.5, 0.625));
/// # Ok::<(), clpix::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FloatStats {
    /// Exact sum of the keys, rounded once to f64.
    pub sum: f64,
    /// Pixels whose key is not NaN.
    pub count: u64,
    /// `sum / count`.
    pub mean: f64,
    /// Smallest key.
    pub min: f32,
    /// Largest key.
    pub max: f32,
}

/// Integer-key statistics, as the operations hand them to [`Pixel`]: the sum, count, minimum
/// and maximum of the keys.
#[doc(hidden)]
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RawStats {
    pub(crate) sum: f64,
    pub(crate) int_sum: u64,
    pub(crate) count: u64,
    pub(crate) min: u32,
    pub(crate) max: u32,
}

/// A found pixel before it takes its format's type.
#[doc(hidden)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RawHit {
    pub(crate) x: u32,
    pub(crate) y: u32,
    /// The order key ([`Format::order_key`]).
    pub(crate) key: u32,
    /// The pixel's bytes (the first `bytes_per_pixel`).
    pub(crate) value: [u8; 16],
}

mod sealed {
    pub trait Sealed {}

    /// A key as an order key (`Format::order_key`'s order); `None` for NaN.
    pub trait Order {
        fn order(self) -> Option<u32>;
    }
    impl Order for u8 {
        fn order(self) -> Option<u32> {
            Some(self as u32)
        }
    }
    impl Order for u16 {
        fn order(self) -> Option<u32> {
            Some(self as u32)
        }
    }
    impl Order for f32 {
        fn order(self) -> Option<u32> {
            super::order_of_f32(self)
        }
    }
}

/// A pixel type the operations accept: `Luma<u8>`, `Luma<u16>`, `Luma<f32>`, `Rgb<u8>`,
/// `Rgba<u8>`, `Rgba<u16>` and `Rgba<f32>` of the `image` crate. Sealed: the semantics of each
/// (its key, its histogram, its blur) are written in `docs/SPEC.md`.
///
/// ```
/// use clpix::Pixel;
/// fn channels<P: Pixel>() -> usize { P::FORMAT.channels() }
/// assert_eq!(channels::<image::Rgb<u8>>(), 3);
/// ```
pub trait Pixel:
    image::Pixel<Subpixel: bytemuck::Pod + Default>
    + Send
    + Sync
    + std::fmt::Debug
    + 'static
    + sealed::Sealed
{
    /// The format.
    const FORMAT: Format;
    /// Its key: `u8`/`u16` for one integer channel, the luminance `u16` for integer colour,
    /// `f32` for float formats.
    type Key: Copy + PartialEq + PartialOrd + std::fmt::Debug + Send + Sync + 'static;
    /// What the brightest and darkest are: [`Hit<Self>`], or [`PixelHit`] for `Rgba<u8>`.
    type Hit: Copy + PartialEq + std::fmt::Debug + Send + Sync + 'static;
    /// What the statistics are: [`LuminanceStats`] for integer
    /// formats, [`FloatStats`] for float formats.
    type Stats: Copy + PartialEq + std::fmt::Debug + Send + Sync + 'static;
    #[doc(hidden)]
    fn hit(raw: RawHit) -> Self::Hit;
    #[doc(hidden)]
    fn stats(raw: RawStats) -> Self::Stats;
    #[doc(hidden)]
    fn key_order(key: Self::Key) -> Option<u32>;
}

/// The pixel whose channels' bytes (native endian, any alignment) are `bytes`.
pub(crate) fn pixel_of_bytes<P: image::Pixel>(bytes: &[u8]) -> P
where
    P::Subpixel: bytemuck::Pod,
{
    let n = P::CHANNEL_COUNT as usize;
    let size = std::mem::size_of::<P::Subpixel>();
    let mut ch = [<P::Subpixel as image::Primitive>::DEFAULT_MIN_VALUE; 4];
    for (i, c) in ch.iter_mut().enumerate().take(n) {
        *c = bytemuck::pod_read_unaligned(&bytes[i * size..(i + 1) * size]);
    }
    *P::from_slice(&ch[..n])
}

fn int_stats(r: RawStats) -> LuminanceStats {
    LuminanceStats {
        sum: r.int_sum,
        count: r.count,
        mean: r.int_sum as f64 / r.count as f64,
        min: r.min as u16,
        max: r.max as u16,
    }
}

fn float_stats(r: RawStats) -> FloatStats {
    FloatStats {
        sum: r.sum,
        count: r.count,
        mean: r.sum / r.count as f64,
        min: f32_of_order(r.min),
        max: f32_of_order(r.max),
    }
}

macro_rules! pixel {
    ($ty:ty, $format:ident, $key:ty, $to_key:expr, $stats:ty, $make_stats:expr) => {
        impl sealed::Sealed for $ty {}
        impl Pixel for $ty {
            const FORMAT: Format = Format::$format;
            type Key = $key;
            type Hit = Hit<$ty>;
            type Stats = $stats;
            fn hit(raw: RawHit) -> Hit<$ty> {
                Hit {
                    x: raw.x,
                    y: raw.y,
                    key: $to_key(raw.key),
                    value: pixel_of_bytes::<$ty>(&raw.value),
                }
            }
            fn key_order(key: $key) -> Option<u32> {
                sealed::Order::order(key)
            }
            fn stats(raw: RawStats) -> $stats {
                $make_stats(raw)
            }
        }
    };
}

pixel!(Luma<u8>, Luma8, u8, |k| k as u8, LuminanceStats, int_stats);
pixel!(
    Luma<u16>,
    Luma16,
    u16,
    |k| k as u16,
    LuminanceStats,
    int_stats
);
pixel!(
    Luma<f32>,
    LumaF32,
    f32,
    f32_of_order,
    FloatStats,
    float_stats
);
pixel!(Rgb<u8>, Rgb8, u16, |k| k as u16, LuminanceStats, int_stats);
pixel!(
    Rgba<u16>,
    Rgba16,
    u16,
    |k| k as u16,
    LuminanceStats,
    int_stats
);
pixel!(
    Rgba<f32>,
    RgbaF32,
    f32,
    f32_of_order,
    FloatStats,
    float_stats
);

impl sealed::Sealed for Rgba<u8> {}
impl Pixel for Rgba<u8> {
    const FORMAT: Format = Format::Rgba8;
    type Key = u16;
    type Hit = PixelHit;
    type Stats = LuminanceStats;
    fn hit(raw: RawHit) -> PixelHit {
        PixelHit {
            x: raw.x,
            y: raw.y,
            luminance: raw.key as u16,
            rgba: [raw.value[0], raw.value[1], raw.value[2], raw.value[3]],
        }
    }
    fn key_order(key: u16) -> Option<u32> {
        Some(key as u32)
    }
    fn stats(raw: RawStats) -> LuminanceStats {
        int_stats(raw)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn f32_order_keys_are_numeric_order() {
        let vals = [
            f32::NEG_INFINITY,
            -3.4e38,
            -1.0,
            -1e-45,
            0.0,
            1e-45,
            1.0,
            3.4e38,
            f32::INFINITY,
        ];
        let keys: Vec<u32> = vals.iter().map(|&v| order_of_f32(v).unwrap_or(0)).collect();
        assert!(keys.windows(2).all(|w| w[0] < w[1]), "{keys:x?}");
        assert_eq!(order_of_f32(-0.0), order_of_f32(0.0));
        assert_eq!(order_of_f32(f32::NAN), None);
        assert!(keys[0] > 0, "every key of a value is above 0");
        for v in vals {
            assert_eq!(f32_of_order(order_of_f32(v).unwrap_or(0)), v);
        }
    }

    #[test]
    fn colour_keys_follow_the_rules() {
        assert_eq!(Format::Rgb8.order_key(&[255, 255, 255]), Some(1023));
        let white16: Vec<u8> = [65535u16; 4].iter().flat_map(|v| v.to_ne_bytes()).collect();
        assert_eq!(Format::Rgba16.order_key(&white16), Some(65535));
        let f: Vec<u8> = [1.0f32, f32::NAN, 0.0, 1.0]
            .iter()
            .flat_map(|v| v.to_ne_bytes())
            .collect();
        assert_eq!(Format::RgbaF32.order_key(&f), None);
    }
}
