//! The semantics every path shares, bit for bit: luminance and the pixel record. The CPU path
//! and the kernels both implement `docs/SPEC.md`; what is defined here is used by both.

mod hit;
mod luminance;

pub use hit::PixelHit;
pub(crate) use luminance::luma_u32;
pub use luminance::{luminance, MAX_LUMINANCE};
