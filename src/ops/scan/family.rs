//! The scan's kernel family and its known-answer probe (see [`Family`]).

use super::kernels::PROGRAM;
use crate::engine::{Engine, Family};
use crate::error::Result;
use crate::ops::probe::{compare, probe_array, unknown};

/// `scan.cl` (with `lookback.cl`): the exclusive scan.
pub(crate) static FAMILY: Family = Family {
    name: "scan",
    program: PROGRAM,
    probe,
};

fn probe(e: &Engine, operation: &'static str, _: &dyn std::any::Any) -> Result<Option<String>> {
    // Small values: the scan wraps at 2^32 on every path, but its sums stay readable.
    let data: Vec<u32> = probe_array().into_iter().map(|v| v >> 16).collect();
    let cpu = Engine::cpu().exclusive_scan(&data);
    match operation {
        "exclusive_scan" => compare("the exclusive scan", e.exclusive_scan(&data), cpu),
        "exclusive_scan_device" => compare(
            "the exclusive scan on the device",
            e.exclusive_scan_device(&data)
                .and_then(|a| e.download_array(&a)),
            cpu,
        ),
        other => Err(unknown(other)),
    }
}
