//! Sub-pixel centres of given pixels (the k brightest's hits, say): the intensity-weighted
//! centroid of a square window around each, by the blobs' exact-sums rule.

use super::ratio;
use super::weights::{blob_weight_exponent, fixed};
use crate::device::{IntoImage, RawSource, Storage};
use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::spec::{Format, f32_of_order};

/// The intensity-weighted centre of a window (see [`Engine::centroids`]).
///
/// ```
/// let c = clpix::Centroid { x: 1.5, y: 2.0, weight_sum: 40, weight_exponent: 0 };
/// assert_eq!((c.x, c.y), (1.5, 2.0));
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Centroid {
    /// `Σ w·x / Σ w` (the window's centre column where `weight_sum` is 0).
    pub x: f64,
    /// `Σ w·y / Σ w`.
    pub y: f64,
    /// `Σ w`, the window's pixels' `max(key − background, 0)` (of an f32 image in units of
    /// `2^-weight_exponent`).
    pub weight_sum: u64,
    /// The weights' unit is `2^-weight_exponent`: 0 for integer keys; of an f32 image one unit
    /// for the call, from the largest key of all the windows (as the blobs' weights).
    pub weight_exponent: i32,
}

impl Engine {
    /// The intensity-weighted centroid of the `(2 radius + 1)²` window around each of `at`
    /// (clipped to the image), each pixel weighing `max(key − background, 0)`: the sums exact
    /// in integers and the one division as [`Blob::centroid`](crate::Blob::centroid)'s. Where
    /// every weight is 0 the centre is the pixel itself. Of an f32 image (`background` the bits
    /// of an f32, `f32::to_bits`; 0 is 0.0) each weight is `max(⌊k·2^s⌋ − ⌊b·2^s⌋, 0)`, exact
    /// from the floats' bits, `s` from the largest key of all the windows as
    /// [`blob_weight_exponent`](crate::blob_weight_exponent) gives it (NaN and −inf weigh 0).
    /// Computed on the host from the windows' pixels (of an image an OpenCL engine holds, those
    /// pixels alone are gathered on its device and read back).
    ///
    /// Errors: a place outside the image; of an f32 image, a background that is not finite or
    /// a window's key of +inf above it.
    ///
    /// ```
    /// use clpix::Extreme;
    /// let img = image::GrayImage::from_fn(20, 20, |x, y| image::Luma([match (x, y) {
    ///     (10, 10) => 200, (11, 10) => 100, _ => 0 }]));
    /// let engine = clpix::Engine::new()?;
    /// let top = engine.extremes(&img, Extreme::Brightest, 1, 0.0)?;
    /// let c = engine.centroids(&img, &[(top[0].x, top[0].y)], 2, 0)?;
    /// assert_eq!((c[0].x, c[0].y), (10.0 + 100.0 / 300.0, 10.0));
    /// # Ok::<(), clpix::Error>(())
    /// ```
    pub fn centroids<'a, I: IntoImage<'a>>(
        &self,
        img: I,
        at: &[(u32, u32)],
        radius: u32,
        background: u32,
    ) -> Result<Vec<Centroid>> {
        let any = img.into_any().0;
        // The windows' pixels, counted with their overlaps: beyond the image's, read it whole.
        let size = any.size();
        let window_pixels: u64 = at
            .iter()
            .filter(|&&(x, y)| x < size.0 && y < size.1)
            .map(|&c| {
                let ((x0, x1), (y0, y1)) = window(c, radius, size);
                (x1 - x0 + 1) as u64 * (y1 - y0 + 1) as u64
            })
            .sum();
        any.with_source(|src| {
            if let RawSource::Held(held) = src
                && let Storage::OpenCl(_) = held.storage
                && window_pixels <= src.pixel_count()
            {
                check((src.width(), src.height()), at)?;
                // The windows' pixels alone, gathered where the image is.
                let mut indices: Vec<u32> = at
                    .iter()
                    .flat_map(|&c| {
                        let ((x0, x1), (y0, y1)) = window(c, radius, (src.width(), src.height()));
                        (y0..=y1).flat_map(move |y| (x0..=x1).map(move |x| y * src.width() + x))
                    })
                    .collect();
                indices.sort_unstable();
                indices.dedup();
                let values = crate::ops::compact::typed::gather_values(&src, &indices)?;
                let bpp = src.format().bytes_per_pixel();
                let pixel = |x: u32, y: u32| -> &[u8] {
                    let i = y * src.width() + x;
                    let j = indices.binary_search(&i).unwrap_or(0);
                    &values[j * bpp..(j + 1) * bpp]
                };
                return window_centroids(
                    src.format(),
                    (src.width(), src.height()),
                    pixel,
                    at,
                    radius,
                    background,
                );
            }
            let host = src.host()?;
            let view = host.raw();
            check((view.width, view.height), at)?;
            let bpp = view.format.bytes_per_pixel();
            let pixel = |x: u32, y: u32| &view.row(y)[x as usize * bpp..(x as usize + 1) * bpp];
            window_centroids(
                view.format,
                (view.width, view.height),
                pixel,
                at,
                radius,
                background,
            )
        })
    }
}

/// Places inside the image, or the error that says which is not.
fn check((width, height): (u32, u32), at: &[(u32, u32)]) -> Result<()> {
    match at.iter().find(|&&(x, y)| x >= width || y >= height) {
        Some((x, y)) => Err(Error::invalid(
            "centroid place",
            format!("({x}, {y})"),
            "a pixel of the image",
        )),
        None => Ok(()),
    }
}

/// The columns and rows `(x0, x1), (y0, y1)` (inclusive) of the window around `(cx, cy)`,
/// clipped to the image.
fn window(
    (cx, cy): (u32, u32),
    radius: u32,
    (width, height): (u32, u32),
) -> ((u32, u32), (u32, u32)) {
    (
        (
            cx.saturating_sub(radius),
            cx.saturating_add(radius).min(width - 1),
        ),
        (
            cy.saturating_sub(radius),
            cy.saturating_add(radius).min(height - 1),
        ),
    )
}

/// How a window pixel's key weighs: `max(key − background, 0)`, of f32 keys (order keys) in
/// units of `2^-s`.
#[derive(Clone, Copy)]
enum Unit {
    Int(u32),
    /// `base` = `⌊b·2^s⌋`; `None` where no key is above the background (nothing weighs).
    F32 {
        s: i32,
        base: Option<i64>,
    },
}

impl Unit {
    /// The unit of `format`'s keys, the largest key of the windows `largest` (an order key).
    fn of(format: Format, background: u32, largest: u32) -> Result<Unit> {
        if !format.is_float() {
            return Ok(Unit::Int(background));
        }
        let b = f32::from_bits(background);
        if !b.is_finite() {
            return Err(Error::invalid(
                "background",
                format!("{b}"),
                "a finite f32 (as its bits: f32::to_bits)",
            ));
        }
        let k = f32_of_order(largest);
        if largest == 0 || k <= b {
            return Ok(Unit::F32 { s: 0, base: None });
        }
        let s = blob_weight_exponent(k, b)?;
        let base = fixed(background, s).and_then(|v| i64::try_from(v).ok());
        Ok(Unit::F32 { s, base })
    }

    #[inline]
    fn weight(self, key: u32) -> u64 {
        match self {
            Unit::Int(b) => key.saturating_sub(b) as u64,
            Unit::F32 { base: None, .. } => 0,
            // NaN (order key 0) and −inf have no floor: they weigh 0, as keys below b.
            Unit::F32 {
                s,
                base: Some(base),
            } => match fixed(f32_of_order(key).to_bits(), s) {
                Some(v) if key != 0 => (v as i64 - base).max(0) as u64,
                _ => 0,
            },
        }
    }

    fn exponent(self) -> i32 {
        match self {
            Unit::Int(_) => 0,
            Unit::F32 { s, .. } => s,
        }
    }
}

/// The centroids of the windows (places checked), each pixel's bytes from `pixel(x, y)`.
fn window_centroids<'p>(
    format: Format,
    size: (u32, u32),
    pixel: impl Fn(u32, u32) -> &'p [u8],
    at: &[(u32, u32)],
    radius: u32,
    background: u32,
) -> Result<Vec<Centroid>> {
    let key = |x: u32, y: u32| format.order_key(pixel(x, y)).unwrap_or(0);
    let each = |(cx, cy): (u32, u32)| {
        let ((x0, x1), (y0, y1)) = window((cx, cy), radius, size);
        (y0..=y1).flat_map(move |y| (x0..=x1).map(move |x| (x, y)))
    };
    // f32: the unit from the largest key of all the windows first.
    let largest = match format.is_float() {
        true => at
            .iter()
            .flat_map(|&c| each(c))
            .map(|(x, y)| key(x, y))
            .max(),
        false => None,
    };
    let unit = Unit::of(format, background, largest.unwrap_or(0))?;
    Ok(at
        .iter()
        .map(|&(cx, cy)| {
            let (mut ws, mut wx, mut wy) = (0u64, 0u128, 0u128);
            for (x, y) in each((cx, cy)) {
                let w = unit.weight(key(x, y));
                ws += w;
                wx += w as u128 * x as u128;
                wy += w as u128 * y as u128;
            }
            let weight_exponent = unit.exponent();
            match ws {
                0 => Centroid {
                    x: cx as f64,
                    y: cy as f64,
                    weight_sum: 0,
                    weight_exponent,
                },
                _ => Centroid {
                    x: ratio(wx, ws),
                    y: ratio(wy, ws),
                    weight_sum: ws,
                    weight_exponent,
                },
            }
        })
        .collect())
}
