//! The semantics every path shares, bit for bit: luminance and the pixel record. The CPU path
//! and the kernels both implement `docs/SPEC.md`; what is defined here is used by both.

mod hit;
mod luminance;
mod pixel;

pub use hit::PixelHit;
pub(crate) use luminance::luma_u32;
pub use luminance::{MAX_LUMINANCE, luminance};
pub use pixel::{FloatStats, Format, Hit, LuminanceStats, Pixel, RawHit, RawStats};
pub(crate) use pixel::{f32_of_order, order_of_f32, pixel_of_bytes, rgba_f32_key};

/// Which end of the luminance order: the brightest pixels (largest luminance first) or the
/// darkest (smallest first). Ties go to the first pixel in scan order either way.
///
/// ```
/// use clpix::Extreme;
/// let img = image::RgbaImage::from_fn(4, 1, |x, _| image::Rgba([0, 60 * x as u8, 0, 255]));
/// let engine = clpix::Engine::new()?;
/// assert_eq!(engine.extreme(&img, Extreme::Brightest)?.x, 3);
/// assert_eq!(engine.extreme(&img, Extreme::Darkest)?.x, 0);
/// # Ok::<(), clpix::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Extreme {
    /// Largest luminance first.
    Brightest,
    /// Smallest luminance first.
    Darkest,
}

impl Extreme {
    /// The name an error or a log line gives the operation (`"brightest"`, `"darkest"`).
    pub(crate) fn name(self) -> &'static str {
        match self {
            Extreme::Brightest => "brightest",
            Extreme::Darkest => "darkest",
        }
    }
}
