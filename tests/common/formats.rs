//! Test support for the pixel formats: random channel values of each type, adversarial kinds
//! among them, and the comparison of hits by bits.

use clpix::{Hit, Pixel};

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
