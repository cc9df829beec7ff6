//! Sub-pixel centres of given pixels (the k brightest's hits, say): the intensity-weighted
//! centroid of a square window around each, by the blobs' exact-sums rule.

use super::ratio;
use crate::device::{Any, IntoImage, RawSource, Storage};
use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::spec::Format;

/// The intensity-weighted centre of a window (see [`Engine::centroids`]).
///
/// ```
/// let c = clpix::Centroid { x: 1.5, y: 2.0, weight_sum: 40 };
/// assert_eq!((c.x, c.y), (1.5, 2.0));
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Centroid {
    /// `Σ w·x / Σ w` (the window's centre column where `weight_sum` is 0).
    pub x: f64,
    /// `Σ w·y / Σ w`.
    pub y: f64,
    /// `Σ w`, the window's pixels' `max(key − background, 0)`.
    pub weight_sum: u64,
}

impl Engine {
    /// The intensity-weighted centroid of the `(2 radius + 1)²` window around each of `at`
    /// (clipped to the image), each pixel weighing `max(key − background, 0)`: the sums exact
    /// in integers and the one division as [`Blob::centroid`](crate::Blob::centroid)'s. Where
    /// every weight is 0 the centre is the pixel itself. Integer-key formats; computed on the
    /// host from the windows' pixels (of an image an OpenCL engine holds, those pixels alone are
    /// gathered on its device and read back; an RGBA8 held image is read back whole).
    ///
    /// Errors: a float format, a place outside the image.
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
        if let Any::Typed(src @ RawSource::Held(held)) = any
            && let Storage::OpenCl(_) = held.storage
            && window_pixels <= src.pixel_count()
        {
            check(src.format(), (src.width(), src.height()), at)?;
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
            return Ok(window_centroids(
                src.format(),
                (src.width(), src.height()),
                pixel,
                at,
                radius,
                background,
            ));
        }
        let host = any.into_host()?;
        let view = host.raw();
        check(view.format, (view.width, view.height), at)?;
        let bpp = view.format.bytes_per_pixel();
        let pixel = |x: u32, y: u32| &view.row(y)[x as usize * bpp..(x as usize + 1) * bpp];
        Ok(window_centroids(
            view.format,
            (view.width, view.height),
            pixel,
            at,
            radius,
            background,
        ))
    }
}

/// An integer-key format and places inside the image, or the error that says which is not.
fn check(format: Format, (width, height): (u32, u32), at: &[(u32, u32)]) -> Result<()> {
    if format.max_key().is_none() {
        return Err(Error::invalid(
            "image format",
            format!("{format:?}"),
            "an integer-key format (mono8, mono16, RGB8, RGBA8, RGBA16)",
        ));
    }
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

/// The centroids of the windows (places checked), each pixel's bytes from `pixel(x, y)`.
fn window_centroids<'p>(
    format: Format,
    size: (u32, u32),
    pixel: impl Fn(u32, u32) -> &'p [u8],
    at: &[(u32, u32)],
    radius: u32,
    background: u32,
) -> Vec<Centroid> {
    at.iter()
        .map(|&(cx, cy)| {
            let ((x0, x1), (y0, y1)) = window((cx, cy), radius, size);
            let (mut ws, mut wx, mut wy) = (0u64, 0u128, 0u128);
            for y in y0..=y1 {
                for x in x0..=x1 {
                    let w = format
                        .order_key(pixel(x, y))
                        .unwrap_or(0)
                        .saturating_sub(background) as u64;
                    ws += w;
                    wx += w as u128 * x as u128;
                    wy += w as u128 * y as u128;
                }
            }
            match ws {
                0 => Centroid {
                    x: cx as f64,
                    y: cy as f64,
                    weight_sum: 0,
                },
                _ => Centroid {
                    x: ratio(wx, ws),
                    y: ratio(wy, ws),
                    weight_sum: ws,
                },
            }
        })
        .collect()
}
