//! The selection's kernel family and its known-answer probe (see [`Family`]).

use super::kernels::PROGRAM;
use crate::engine::{Engine, Family};
use crate::error::Result;
use crate::ops::probe::{compare, probe_image, unknown};
use crate::spec::Extreme;

/// `select.cl`: the darkest pixels apart (the image inverted, then the brightest).
pub(crate) static FAMILY: Family = Family {
    name: "select",
    program: PROGRAM,
    probe,
};

fn probe(e: &Engine, operation: &'static str, _: &dyn std::any::Any) -> Result<Option<String>> {
    let (img, cpu) = (probe_image(), Engine::cpu());
    match operation {
        "darkest" => compare(
            "the 25 darkest pixels",
            e.extremes(&img, Extreme::Darkest, 25, 0.0),
            cpu.extremes(&img, Extreme::Darkest, 25, 0.0),
        ),
        other => Err(unknown(other)),
    }
}
