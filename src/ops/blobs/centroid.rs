//! Sub-pixel centres of given pixels (the k brightest's hits, say): the intensity-weighted
//! centroid of a square window around each, by the blobs' exact-sums rule.

use super::ratio;
use crate::device::IntoImage;
use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::image::RawView;

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
    /// host (an image held by an engine is read back first).
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
        let host = img.into_any().0.into_host()?;
        let raw = host.raw();
        window_centroids(&raw, at, radius, background)
    }
}

fn window_centroids(
    view: &RawView<'_>,
    at: &[(u32, u32)],
    radius: u32,
    background: u32,
) -> Result<Vec<Centroid>> {
    if view.format.max_key().is_none() {
        return Err(Error::invalid(
            "image format",
            format!("{:?}", view.format),
            "an integer-key format (mono8, mono16, RGB8, RGBA8, RGBA16)",
        ));
    }
    let bpp = view.format.bytes_per_pixel();
    at.iter()
        .map(|&(cx, cy)| {
            if cx >= view.width || cy >= view.height {
                return Err(Error::invalid(
                    "centroid place",
                    format!("({cx}, {cy})"),
                    "a pixel of the image",
                ));
            }
            let (x0, x1) = (
                cx.saturating_sub(radius),
                cx.saturating_add(radius).min(view.width - 1),
            );
            let (y0, y1) = (
                cy.saturating_sub(radius),
                cy.saturating_add(radius).min(view.height - 1),
            );
            let (mut ws, mut wx, mut wy) = (0u64, 0u128, 0u128);
            for y in y0..=y1 {
                let row = view.row(y);
                for x in x0..=x1 {
                    let px = &row[x as usize * bpp..(x as usize + 1) * bpp];
                    let w = view
                        .format
                        .order_key(px)
                        .unwrap_or(0)
                        .saturating_sub(background) as u64;
                    ws += w;
                    wx += w as u128 * x as u128;
                    wy += w as u128 * y as u128;
                }
            }
            Ok(match ws {
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
            })
        })
        .collect()
}
