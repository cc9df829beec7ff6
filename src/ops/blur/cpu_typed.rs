//! The CPU path of the blur of every format other than RGBA8 and RGBA f32 (whose paths are
//! `cpu.rs`'s): one, three or four channels of u8, u16 or f32, each channel blurred alone by
//! its element type's rule (docs/SPEC.md, "The blur of every format").

use super::cpu::{h_row, kern, two_pass};
use super::*;
use crate::cpu::multiversion;
use crate::image::RawView;
use crate::spec::Format;
use std::borrow::Cow;

/// A channel's element type, which chooses the blur's rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Rule {
    /// 8-bit channels: 16-bit weights, a u16 intermediate with 8 fractional bits (RGBA8's rule).
    U8,
    /// 16-bit channels: 24-bit weights, a u32 intermediate with 8 fractional bits, u64 sums.
    U16,
    /// f32 channels: f32 weights, one fused multiply-add a tap in tap order.
    F32,
}

impl Rule {
    pub(super) fn of(format: Format) -> Rule {
        match format {
            Format::Luma8 | Format::Rgb8 | Format::Rgba8 => Rule::U8,
            Format::Luma16 | Format::Rgba16 => Rule::U16,
            Format::LumaF32 | Format::RgbaF32 => Rule::F32,
        }
    }

    /// The weights the rule multiplies by, as u32 words (f32 weights as their bits).
    pub(super) fn weights(self, blur: &GaussianBlur) -> Result<Vec<u32>> {
        match self {
            Rule::U8 => blur.weights_fixed(),
            Rule::U16 => blur.weights_fixed24(),
            Rule::F32 => Ok(blur.weights_f32()?.iter().map(|w| w.to_bits()).collect()),
        }
    }
}

/// Values of 16-bit channels a block of the row loops takes (u64 sums: half of [`BLK`]).
const BLK16: usize = 32;

/// [`BLK16`] values at `j0` of a slice (zeros where it is too short, which no caller passes).
#[inline(always)]
fn at16(s: &[u16], j0: usize) -> &[u16; BLK16] {
    s.get(j0..j0 + BLK16)
        .and_then(|a| a.try_into().ok())
        .unwrap_or(&[0; BLK16])
}

/// [`at16`] of u32 values.
#[inline(always)]
fn at32(s: &[u32], j0: usize) -> &[u32; BLK16] {
    s.get(j0..j0 + BLK16)
        .and_then(|a| a.try_into().ok())
        .unwrap_or(&[0; BLK16])
}

/// Blocks of [`BLK16`] values from `j0` over `0..n`, the last one ending at `n` (overlapping
/// the one before, its values written twice, the same); `None` once done. Plain loops, no
/// closures: a closure is compiled without its caller's target features.
#[inline(always)]
fn next_block(j0: usize, n: usize) -> Option<usize> {
    if j0 >= n || n < BLK16 {
        return None;
    }
    Some(j0.min(n - BLK16))
}

multiversion! {
    fn h_u16(pad: &[u16], q: &[u32], c: usize, out: &mut [u32]) -> () {
        // out[j] = (Σ_i q[i] · pad[j + c i] + 2^15) >> 16 in u64, symmetric weights paired
        // (q below 2^24, a pair's sum below 2^17: every product a 32 × 32-bit multiply).
        let w = q.len() / 2;
        let n = out.len();
        let mut j = 0;
        while let Some(j0) = next_block(j, n) {
            let centre: &[u16; BLK16] = at16(pad, j0 + c * w);
            let mut acc = [0u64; BLK16];
            for k in 0..BLK16 {
                acc[k] = q[w] as u64 * centre[k] as u64;
            }
            for d in 1..=w {
                let a: &[u16; BLK16] = at16(pad, j0 + c * (w - d));
                let b: &[u16; BLK16] = at16(pad, j0 + c * (w + d));
                let qd = q[w + d] as u64;
                for k in 0..BLK16 {
                    acc[k] += qd * (a[k] as u32 + b[k] as u32) as u64;
                }
            }
            for k in 0..BLK16 {
                out[j0 + k] = ((acc[k] + (1 << 15)) >> 16) as u32;
            }
            j = j0 + BLK16;
        }
        if n < BLK16 {
            for j in 0..n {
                let mut acc = q[w] as u64 * pad[j + c * w] as u64;
                for d in 1..=w {
                    let pair = pad[j + c * (w - d)] as u32 + pad[j + c * (w + d)] as u32;
                    acc += q[w + d] as u64 * pair as u64;
                }
                out[j] = ((acc + (1 << 15)) >> 16) as u32;
            }
        }
    }
}

multiversion! {
    fn v_u16(rows: &[&[u32]], q: &[u32], out: &mut [u16]) -> () {
        // out[j] = (Σ_i q[i] · rows[i][j] + 2^31) >> 32 in u64, symmetric weights paired (an
        // intermediate is below 2^24, a pair's sum below 2^25).
        let w = q.len() / 2;
        let n = out.len();
        let mut j = 0;
        while let Some(j0) = next_block(j, n) {
            let centre: &[u32; BLK16] = at32(rows[w], j0);
            let mut acc = [0u64; BLK16];
            for k in 0..BLK16 {
                acc[k] = q[w] as u64 * centre[k] as u64;
            }
            for d in 1..=w {
                let a: &[u32; BLK16] = at32(rows[w - d], j0);
                let b: &[u32; BLK16] = at32(rows[w + d], j0);
                let qd = q[w + d] as u64;
                for k in 0..BLK16 {
                    acc[k] += qd * (a[k] + b[k]) as u64;
                }
            }
            for k in 0..BLK16 {
                out[j0 + k] = ((acc[k] + (1 << 31)) >> 32) as u16;
            }
            j = j0 + BLK16;
        }
        if n < BLK16 {
            for j in 0..n {
                let mut acc = q[w] as u64 * rows[w][j] as u64;
                for d in 1..=w {
                    acc += q[w + d] as u64 * (rows[w - d][j] + rows[w + d][j]) as u64;
                }
                out[j] = ((acc + (1 << 31)) >> 32) as u16;
            }
        }
    }
}

/// The values of row `y` of `view` as `T`s: in place when aligned, else a copy.
fn row_of<'a, T: bytemuck::Pod>(view: &RawView<'a>, y: usize) -> Cow<'a, [T]> {
    let bytes = view.row(y as u32);
    match bytemuck::try_cast_slice(bytes) {
        Ok(v) => Cow::Borrowed(v),
        Err(_) => Cow::Owned(
            bytes
                .chunks_exact(std::mem::size_of::<T>())
                .map(bytemuck::pod_read_unaligned)
                .collect(),
        ),
    }
}

/// The blur of `view` (any format) into `out`: its channel values, rows packed, as bytes (a
/// buffer of the format's element type, so aligned for it).
pub(super) fn cpu_blur_raw(view: &RawView<'_>, blur: &GaussianBlur, out: &mut [u8]) -> Result<()> {
    let (width, height) = (view.width as usize, view.height as usize);
    let c = view.format.channels();
    if width == 0 || height == 0 {
        return Ok(());
    }
    if blur.radius == 0 {
        blur.check()?;
        let n = view.row_bytes();
        for (y, row) in out.chunks_exact_mut(n).enumerate() {
            row.copy_from_slice(view.row(y as u32));
        }
        return Ok(());
    }
    let q = Rule::of(view.format).weights(blur)?;
    let w = blur.radius as usize;
    let border = blur.border;
    let dims = (width, c);
    let bad_out = || Error::invalid("out", "a buffer", "one aligned for the format's channels");
    match Rule::of(view.format) {
        Rule::U8 => two_pass::<u16, u8, u8, _, _, _>(
            dims,
            height,
            w,
            border,
            0,
            out,
            |y, xs, pad, dst| {
                let row = row_of::<u8>(view, y);
                h_row(&row, dims, xs, w, border, pad, dst, |i, o| {
                    kern::h_u8(i, &q, c, o)
                })
            },
            (
                |rows: &[&[u16]], o: &mut [u8]| kern::v_u8(rows, &q, o),
                |rows: &[&[u16]], o0: &mut [u8], o1: &mut [u8]| {
                    kern::v_u8(&rows[..2 * w + 1], &q, o0);
                    kern::v_u8(&rows[1..], &q, o1);
                },
            ),
        ),
        Rule::U16 => two_pass::<u32, u16, u16, _, _, _>(
            dims,
            height,
            w,
            border,
            0,
            bytemuck::try_cast_slice_mut(out).map_err(|_| bad_out())?,
            |y, xs, pad, dst| {
                let row = row_of::<u16>(view, y);
                h_row(&row, dims, xs, w, border, pad, dst, |i, o| {
                    h_u16(i, &q, c, o)
                })
            },
            (
                |rows: &[&[u32]], o: &mut [u16]| v_u16(rows, &q, o),
                |rows: &[&[u32]], o0: &mut [u16], o1: &mut [u16]| {
                    v_u16(&rows[..2 * w + 1], &q, o0);
                    v_u16(&rows[1..], &q, o1);
                },
            ),
        ),
        Rule::F32 => {
            let wt: Vec<f32> = q.iter().map(|&b| f32::from_bits(b)).collect();
            two_pass::<f32, f32, f32, _, _, _>(
                dims,
                height,
                w,
                border,
                0.0,
                bytemuck::try_cast_slice_mut(out).map_err(|_| bad_out())?,
                |y, xs, pad, dst| {
                    let row = row_of::<f32>(view, y);
                    h_row(&row, dims, xs, w, border, pad, dst, |i, o| {
                        super::cpu_f32::h_f32(i, &wt, c, o)
                    })
                },
                (
                    |rows: &[&[f32]], o: &mut [f32]| super::cpu_f32::v_f32(rows, &wt, o),
                    |rows: &[&[f32]], o0: &mut [f32], o1: &mut [f32]| {
                        super::cpu_f32::v2_f32(rows, &wt, o0, o1)
                    },
                ),
            )
        }
    }
    Ok(())
}
