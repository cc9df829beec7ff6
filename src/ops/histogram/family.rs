//! The histograms' kernel family and its known-answer probe (see [`Family`]).

use super::kernels::PROGRAM;
use crate::engine::{Engine, Family};
use crate::error::Result;
use crate::ops::probe::{compare, probe_image, unknown};

/// `histogram.cl`: the RGBA and luminance histograms.
pub(crate) static FAMILY: Family = Family {
    name: "histogram",
    program: PROGRAM,
    probe,
};

fn probe(e: &Engine, operation: &'static str, _: &dyn std::any::Any) -> Result<Option<String>> {
    let (img, cpu) = (probe_image(), Engine::cpu());
    match operation {
        "histogram_rgba" => compare(
            "the RGBA histogram",
            e.histogram_rgba(&img),
            cpu.histogram_rgba(&img),
        ),
        "histogram_luminance" => compare(
            "the luminance histogram",
            e.histogram_luminance(&img),
            cpu.histogram_luminance(&img),
        ),
        other => Err(unknown(other)),
    }
}
