//! The scan's plan: which kernels scan on this device, from its capabilities and the engine's
//! tuning (the `scan` setting).

use crate::config::ScanKernel;
use crate::error::{Error, Result};
use crate::opencl::ClEngine;

/// Whether this device scans in one pass (`scan_lookback`, a decoupled look-back with
/// fallback): GPUs (the coalesced layout) whose driver has `cl_khr_int64_base_atomics`, unless
/// `scan=three-pass`. `scan=lookback` where the atomics are missing is an error,
/// so that a measurement never runs the other kernels unnoticed.
pub(super) fn single_pass(cl: &ClEngine) -> Result<bool> {
    if cl.grid.contiguous {
        return Ok(false);
    }
    let atomics = cl.info.has_extension("cl_khr_int64_base_atomics");
    match cl.tuning.scan {
        Some(ScanKernel::ThreePass) => Ok(false),
        Some(ScanKernel::LookBack) if !atomics => Err(Error::InvalidTuning {
            setting: "scan",
            value: "lookback".into(),
            expected: "three-pass on this device: the single pass needs \
                       cl_khr_int64_base_atomics",
        }),
        _ => Ok(atomics),
    }
}
