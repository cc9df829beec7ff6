//! The exact sum of the f32 keys of a float32 image, in a form that adds up across images:
//! what `clpix.dask` combines chunk statistics with, so that its sum, rounded once at the end,
//! is the single-image call's (docs/SPEC.md, "Pixel formats": the sum is exact, rounded once).

use crate::errors::type_error;
use crate::formats::{any_image, AnyImage};
use clpix::ImageView;
use pyo3::prelude::*;
use rayon::prelude::*;

/// Exponent buckets: a finite f32 is `m · 2^(e − 149)`, `m < 2^24`, `e` in `0..=253`.
const BUCKETS: usize = 254;

/// Sums of the keys by exponent (integers: bucket `e` holds a sum of `m`s, each key
/// `± m · 2^(e − 149)`), and whether +inf and −inf keys occur.
#[derive(Clone)]
struct Sums {
    buckets: Vec<i64>,
    pos_inf: bool,
    neg_inf: bool,
}

impl Sums {
    fn new() -> Self {
        Sums {
            buckets: vec![0; BUCKETS],
            pos_inf: false,
            neg_inf: false,
        }
    }

    /// Adds one key (NaN: nothing).
    #[inline(always)]
    fn add(&mut self, key: f32) {
        if key.is_nan() {
            return;
        }
        if key.is_infinite() {
            match key > 0.0 {
                true => self.pos_inf = true,
                false => self.neg_inf = true,
            }
            return;
        }
        let bits = key.to_bits();
        let field = (bits >> 23) & 0xff;
        let fraction = i64::from(bits & 0x7f_ffff);
        // Normal: (2^23 + f) · 2^(field − 150); denormal: f · 2^−149.
        let (m, e) = match field {
            0 => (fraction, 0),
            _ => (fraction | 1 << 23, field as usize - 1),
        };
        // At most u32::MAX keys of m < 2^24 a bucket: |sum| < 2^56.
        self.buckets[e] += if bits >> 31 == 1 { -m } else { m };
    }

    fn merge(mut self, other: Sums) -> Sums {
        for (a, b) in self.buckets.iter_mut().zip(other.buckets) {
            *a += b;
        }
        self.pos_inf |= other.pos_inf;
        self.neg_inf |= other.neg_inf;
        self
    }
}

/// The key of an RGBA f32 pixel, as clpix computes it (docs/SPEC.md):
/// `fma(0.07, b, fma(0.72, g, 0.21 × r))` in f32.
fn rgba_key(r: f32, g: f32, b: f32) -> f32 {
    0.07f32.mul_add(b, 0.72f32.mul_add(g, 0.21 * r))
}

/// The sums of the keys of a float32 view with `channels` channels (1 or 4).
fn sums_of<P: clpix::Pixel>(view: &ImageView<'_, P>, channels: usize) -> Sums {
    (0..view.height())
        .into_par_iter()
        .fold(Sums::new, |mut acc, y| {
            let row = view.row(y);
            let f = |i: usize| f32::from_ne_bytes([row[i], row[i + 1], row[i + 2], row[i + 3]]);
            for px in (0..row.len()).step_by(4 * channels) {
                let key = match channels {
                    1 => f(px),
                    _ => rgba_key(f(px), f(px + 4), f(px + 8)),
                };
                acc.add(key);
            }
            acc
        })
        .reduce(Sums::new, Sums::merge)
}

/// The exact sum of the keys of a float32 image (`(H, W)` or `(H, W, 4)`; NaN keys left
/// out), for `clpix.dask`: `(buckets, pos_inf, neg_inf)`, where the sum of the finite keys is
/// exactly `sum(s << e for e, s in enumerate(buckets)) / 2**149` and `pos_inf` / `neg_inf`
/// say whether +inf / −inf keys occur.
#[pyfunction]
pub(crate) fn _f32_key_sum(
    py: Python<'_>,
    img: &Bound<'_, PyAny>,
) -> PyResult<(Vec<i64>, bool, bool)> {
    let img = any_image(img)?;
    let sums = match &img {
        AnyImage::LumaF32(c) => {
            let view = c.view::<image::Luma<f32>>()?;
            py.detach(|| sums_of(&view, 1))
        }
        AnyImage::RgbaF32(c) => {
            let view = c.view::<image::Rgba<f32>>()?;
            py.detach(|| sums_of(&view, 4))
        }
        _ => {
            return Err(type_error(
                "expected a float32 image of shape (H, W) or (H, W, 4)".into(),
            ))
        }
    };
    Ok((sums.buckets, sums.pos_inf, sums.neg_inf))
}
