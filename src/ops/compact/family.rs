//! The compaction's kernel family and its known-answer probe (see [`Family`]).

use super::CompactOrder;
use super::kernels::PROGRAM;
use crate::engine::{Engine, Family};
use crate::error::Result;
use crate::ops::probe::{compare, probe_image, unknown};

/// `compact.cl` and the files of its program: the compaction in scan and luminance order.
pub(crate) static FAMILY: Family = Family {
    name: "compact",
    program: PROGRAM,
    probe,
};

fn probe(e: &Engine, operation: &'static str, _: &dyn std::any::Any) -> Result<Option<String>> {
    let (img, cpu) = (probe_image(), Engine::cpu());
    let order = match operation {
        "compact" | "compacted_image" => CompactOrder::ScanOrder,
        _ => CompactOrder::LuminanceDescending,
    };
    match operation {
        "compact" | "compact_sorted" => compare(
            operation,
            e.compact(&img, 400, order),
            cpu.compact(&img, 400, order),
        ),
        "compacted_image" | "compacted_image_sorted" => compare(
            operation,
            e.compacted_image(&img, 400, order),
            cpu.compacted_image(&img, 400, order),
        ),
        other => Err(unknown(other)),
    }
}
