//! The kernel families of `typed.cl`, one per format (each a build of its own), and their
//! known-answer probe (see [`Family`]): the probe image of each format.

use super::kernels::TYPED_PROGRAM as PROGRAM;
use crate::engine::{Engine, Family};
use crate::error::Result;
use crate::ops::probe::{compare, probe_raw, unknown};
use crate::spec::{Extreme, Format};

macro_rules! families {
    ($($name:ident: $label:literal),*) => {
        $(static $name: Family = Family { name: $label, program: PROGRAM, probe };)*
    };
}
families!(
    MONO8: "reduce_mono8",
    MONO16: "reduce_mono16",
    MONO_F32: "reduce_mono_f32",
    RGB8: "reduce_rgb8",
    RGBA16: "reduce_rgba16",
    RGBA_F32: "reduce_rgba_f32"
);

/// The family of a format's reductions (RGBA8's is `reduce.cl`'s; asked for, it gets RGB8's).
pub(super) fn family(format: Format) -> &'static Family {
    match format {
        Format::Luma8 => &MONO8,
        Format::Luma16 => &MONO16,
        Format::LumaF32 => &MONO_F32,
        Format::Rgb8 | Format::Rgba8 => &RGB8,
        Format::Rgba16 => &RGBA16,
        Format::RgbaF32 => &RGBA_F32,
    }
}

fn probe(e: &Engine, operation: &'static str, call: &dyn std::any::Any) -> Result<Option<String>> {
    let Some(&format) = call.downcast_ref::<Format>() else {
        return Err(unknown(operation));
    };
    let words = probe_raw(format);
    let view = words.view();
    let cpu = Engine::cpu();
    match operation {
        "brightest" | "darkest" => {
            let which = match operation {
                "brightest" => Extreme::Brightest,
                _ => Extreme::Darkest,
            };
            compare(
                operation,
                e.typed_extreme(view, which),
                cpu.typed_extreme(view, which),
            )
        }
        "luminance_stats" => {
            // By the sum's bits: a NaN sum (both infinities) equals itself.
            let bits =
                |s: crate::spec::RawStats| (s.sum.to_bits(), s.int_sum, s.count, s.min, s.max);
            compare(
                "the statistics",
                e.typed_stats(view).map(bits),
                cpu.typed_stats(view).map(bits),
            )
        }
        other => Err(unknown(other)),
    }
}
