//! The reductions' kernel family and its known-answer probe (see [`Family`]).

use super::kernels::PROGRAM;
use crate::engine::{Engine, Family};
use crate::error::Result;
use crate::ops::probe::{compare, probe_array, probe_image, unknown};
use crate::spec::Extreme;

/// `reduce.cl`: the extremes, the luminance statistics and the array statistics.
pub(crate) static FAMILY: Family = Family {
    name: "reduce",
    program: PROGRAM,
    probe,
};

fn probe(e: &Engine, operation: &'static str, _: &dyn std::any::Any) -> Result<Option<String>> {
    let (img, cpu) = (probe_image(), Engine::cpu());
    match operation {
        "brightest" | "darkest" => {
            let which = match operation {
                "brightest" => Extreme::Brightest,
                _ => Extreme::Darkest,
            };
            compare(operation, e.extreme(&img, which), cpu.extreme(&img, which))
        }
        "luminance_stats" => compare(
            "the luminance statistics",
            e.luminance_stats(&img),
            cpu.luminance_stats(&img),
        ),
        "array_stats" => {
            let data = probe_array();
            compare(
                "the array statistics",
                e.array_stats(&data),
                cpu.array_stats(&data),
            )
        }
        other => Err(unknown(other)),
    }
}
