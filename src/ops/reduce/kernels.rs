//! The kernels of `reduce.cl` that this operation launches, by name: typed, so that a
//! misspelt name fails to compile, and checked against the source by a test (`crate::ops`).

use crate::cl::{Kernel, ProgramId};

pub(crate) const LUMA_ARGBEST: Kernel = Kernel::new(ProgramId::Reduce, "luma_argbest");
pub(crate) const LUMA_STATS: Kernel = Kernel::new(ProgramId::Reduce, "luma_stats");
pub(crate) const U32_STATS: Kernel = Kernel::new(ProgramId::Reduce, "u32_stats");

/// Every kernel above.
#[cfg(test)]
pub(crate) const ALL: &[Kernel] = &[LUMA_ARGBEST, LUMA_STATS, U32_STATS];
