//! The pixel record that reductions, selections and compactions return.

/// One pixel found by an operation: its position, luminance and colour.
///
/// ```
/// let img = image::RgbaImage::from_fn(3, 2, |x, y| image::Rgba([(x * 50 + y * 10) as u8, 0, 0, 255]));
/// let hit = clpix::Engine::cpu().extreme(&img, clpix::Extreme::Brightest)?;
/// assert_eq!((hit.x, hit.y, hit.rgba), (2, 1, [110, 0, 0, 255]));
/// assert_eq!(hit.luminance, clpix::luminance(110, 0, 0));
/// # Ok::<(), clpix::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
// C layout (x, y, luminance, rgba, 2 bytes of padding): CPU OpenCL devices write hits whole.
#[repr(C)]
pub struct PixelHit {
    /// Column.
    pub x: u32,
    /// Row.
    pub y: u32,
    /// Luminance, 0..=1023.
    pub luminance: u16,
    /// The pixel's RGBA.
    pub rgba: [u8; 4],
}
