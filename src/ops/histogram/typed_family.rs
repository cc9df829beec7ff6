//! The kernel families of `histogram/typed.cl`, one per format, and their known-answer probe
//! (see [`Family`]): the probe image of each format, its channels and keys in 37 bins.

use super::bins::{Bins, Of};
use super::kernels::TYPED_PROGRAM as PROGRAM;
use crate::engine::{Engine, Family};
use crate::error::Result;
use crate::ops::probe::{compare, probe_raw, unknown};
use crate::spec::Format;

macro_rules! families {
    ($($name:ident: $label:literal),*) => {
        $(static $name: Family = Family { name: $label, program: PROGRAM, probe };)*
    };
}
families!(
    MONO8: "histogram_mono8",
    MONO16: "histogram_mono16",
    MONO_F32: "histogram_mono_f32",
    RGB8: "histogram_rgb8",
    RGBA8: "histogram_rgba8",
    RGBA16: "histogram_rgba16",
    RGBA_F32: "histogram_rgba_f32"
);

/// The family of a format's histograms with bins per call.
pub(super) fn family(format: Format) -> &'static Family {
    match format {
        Format::Luma8 => &MONO8,
        Format::Luma16 => &MONO16,
        Format::LumaF32 => &MONO_F32,
        Format::Rgb8 => &RGB8,
        Format::Rgba8 => &RGBA8,
        Format::Rgba16 => &RGBA16,
        Format::RgbaF32 => &RGBA_F32,
    }
}

fn probe(e: &Engine, operation: &'static str, call: &dyn std::any::Any) -> Result<Option<String>> {
    let Some(&format) = call.downcast_ref::<Format>() else {
        return Err(unknown(operation));
    };
    let raw = probe_raw(format);
    let view = raw.view();
    let bins = match format.is_float() {
        true => Bins::new(37, -20.0, 20.0)?,
        false => Bins::new(37, 3.0, format.max_key().unwrap_or(255).min(60_000) as f64)?,
    };
    let cpu = Engine::cpu();
    let of = match operation {
        "histogram" => Of::Channels,
        "histogram_keys" => Of::Key,
        other => return Err(unknown(other)),
    };
    compare(
        operation,
        e.raw_histogram(view, of, bins),
        cpu.raw_histogram(view, of, bins),
    )
}
