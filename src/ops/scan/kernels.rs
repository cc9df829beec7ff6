//! The scan's program and the kernels of it that this operation launches, by name: typed, so
//! that a misspelt name fails to compile, and checked against the source by a test
//! (`crate::ops`). The compaction's program holds the same files: it launches the passes from
//! there ([`Kernel::in_program`]).

use crate::opencl::{Kernel, ProgramId, cl_file};

/// The program this operation declares: the exclusive scan's passes (`scan.cl`) and its single pass
/// with a look-back (`lookback.cl`).
pub(crate) const PROGRAM: ProgramId = ProgramId::new(
    "scan",
    &[cl_file!("scan/scan.cl"), cl_file!("scan/lookback.cl")],
);

pub(crate) const SCAN_APPLY: Kernel = Kernel::new(PROGRAM, "scan_apply");
pub(crate) const SCAN_LOOKBACK: Kernel = Kernel::new(PROGRAM, "scan_lookback");
pub(crate) const SCAN_GROUPS: Kernel = Kernel::new(PROGRAM, "scan_groups");
pub(crate) const SCAN_REDUCE: Kernel = Kernel::new(PROGRAM, "scan_reduce");
pub(crate) const SCAN_SINGLE: Kernel = Kernel::new(PROGRAM, "scan_single");

/// Every kernel above.
#[cfg(test)]
pub(crate) const ALL: &[Kernel] = &[
    SCAN_APPLY,
    SCAN_GROUPS,
    SCAN_LOOKBACK,
    SCAN_REDUCE,
    SCAN_SINGLE,
];
