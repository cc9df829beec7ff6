//! The kernel families of `histogram/typed.cl`, one per format, and their known-answer probe
//! (see [`Family`]): the probe image of each format, its channels and keys in 37 bins.

use super::bins::{Bins, Of};
use super::kernels::TYPED_PROGRAM as PROGRAM;
use crate::engine::Engine;
use crate::error::Result;
use crate::ops::probe::{compare, probe_raw, unknown};
use crate::spec::Format;

crate::ops::common::format_families!(pub(super) fn family, "histogram", PROGRAM, probe);

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
        e.raw_histogram(crate::device::RawSource::Host(view), of, bins),
        cpu.raw_histogram(crate::device::RawSource::Host(view), of, bins),
    )
}
