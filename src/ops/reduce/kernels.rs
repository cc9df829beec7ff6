//! The kernels of `reduce.cl` that this operation launches, by name: typed, so that a
//! misspelt name fails to compile, and checked against the source by a test (`crate::ops`).

use crate::opencl::{Kernel, ProgramId, cl_file};

/// The program this operation declares: arg-reductions, luminance and array statistics.
pub(crate) const PROGRAM: ProgramId = ProgramId::new("reduce", &[cl_file!("reduce/reduce.cl")]);

pub(crate) const LUMA_ARGBEST: Kernel = Kernel::new(PROGRAM, "luma_argbest");
pub(crate) const LUMA_STATS: Kernel = Kernel::new(PROGRAM, "luma_stats");
pub(crate) const U32_STATS: Kernel = Kernel::new(PROGRAM, "u32_stats");

/// Every kernel above.
#[cfg(test)]
pub(crate) const ALL: &[Kernel] = &[LUMA_ARGBEST, LUMA_STATS, U32_STATS];
