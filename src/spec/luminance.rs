//! Luminance, as `docs/SPEC.md` defines it, shared by every operation.

/// The largest luminance value.
pub const MAX_LUMINANCE: u16 = 1023;

/// Luminance of an RGB colour: `(1023 * (21 r + 72 g + 7 b)) / 25500`, in 0..=1023.
///
/// Integer arithmetic, so that every device computes exactly the same value; it equals
/// `floor(1023 * (0.21 r + 0.72 g + 0.07 b) / 255)` computed exactly. Alpha is ignored.
///
/// ```
/// assert_eq!(clpix::luminance(255, 255, 255), 1023);
/// assert_eq!(clpix::luminance(0, 0, 0), 0);
/// assert_eq!(clpix::luminance(0, 255, 0), 736);
/// ```
#[inline]
pub fn luminance(r: u8, g: u8, b: u8) -> u16 {
    luma_u32(u32::from_le_bytes([r, g, b, 0])) as u16
}

/// Luminance of a pixel packed little-endian as `r | g << 8 | b << 16 | a << 24`.
#[inline(always)]
pub(crate) fn luma_u32(p: u32) -> u32 {
    let r = p & 0xff;
    let g = (p >> 8) & 0xff;
    let b = (p >> 16) & 0xff;
    (1023 * (21 * r + 72 * g + 7 * b)) / 25500
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_the_real_valued_definition_everywhere() {
        for r in 0..=255u32 {
            for g in (0..=255u32).step_by(3) {
                for b in 0..=255u32 {
                    let exact = (1023 * (21 * r + 72 * g + 7 * b)) as f64 / 25500.0;
                    assert_eq!(luminance(r as u8, g as u8, b as u8) as f64, exact.floor());
                }
            }
        }
    }
}
