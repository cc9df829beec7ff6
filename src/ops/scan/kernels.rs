//! The kernels of `compact.cl` and `lookback.cl` that this operation launches, by name: typed, so that a
//! misspelt name fails to compile, and checked against the source by a test (`crate::ops`).

use crate::cl::{Kernel, ProgramId};

pub(crate) const SCAN_APPLY: Kernel = Kernel::new(ProgramId::Compact, "scan_apply");
pub(crate) const SCAN_LOOKBACK: Kernel = Kernel::new(ProgramId::Compact, "scan_lookback");
pub(crate) const SCAN_GROUPS: Kernel = Kernel::new(ProgramId::Compact, "scan_groups");
pub(crate) const SCAN_REDUCE: Kernel = Kernel::new(ProgramId::Compact, "scan_reduce");
pub(crate) const SCAN_SINGLE: Kernel = Kernel::new(ProgramId::Compact, "scan_single");

/// Every kernel above.
#[cfg(test)]
pub(crate) const ALL: &[Kernel] = &[
    SCAN_APPLY,
    SCAN_GROUPS,
    SCAN_LOOKBACK,
    SCAN_REDUCE,
    SCAN_SINGLE,
];
