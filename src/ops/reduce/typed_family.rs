//! The kernel families of `typed.cl`, one per format (each a build of its own), and their
//! known-answer probe (see [`Family`]): the probe image of each format.

use super::kernels::TYPED_PROGRAM as PROGRAM;
use crate::device::RawSource;
use crate::engine::Engine;
use crate::error::Result;
use crate::ops::probe::{compare, probe_raw, unknown};
use crate::spec::{Extreme, Format};

crate::ops::common::format_families!(pub(super) fn family, "reduce", PROGRAM, probe);

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
                e.typed_extreme(RawSource::Host(view), which),
                cpu.typed_extreme(RawSource::Host(view), which),
            )
        }
        "luminance_stats" => {
            // By the sum's bits: a NaN sum (both infinities) equals itself.
            let bits =
                |s: crate::spec::RawStats| (s.sum.to_bits(), s.int_sum, s.count, s.min, s.max);
            compare(
                "the statistics",
                e.typed_stats(RawSource::Host(view)).map(bits),
                cpu.typed_stats(RawSource::Host(view)).map(bits),
            )
        }
        other => Err(unknown(other)),
    }
}
