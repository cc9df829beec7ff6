//! The kernels of `reduce.cl` that this operation launches, by name: typed, so that a
//! misspelt name fails to compile, and checked against the source by a test (`crate::ops`).

use crate::opencl::{Kernel, ProgramId, cl_file};

/// The program this operation declares: arg-reductions, luminance and array statistics.
pub(crate) const PROGRAM: ProgramId = ProgramId::new("reduce", &[cl_file!("reduce/reduce.cl")]);

/// The program of every other format (`typed.cl`): one source, a build per format
/// (`CLPIX_FORMAT`, see `typed::variant`).
pub(crate) const TYPED_PROGRAM: ProgramId = ProgramId::new(
    "reduce_typed",
    &[cl_file!("formats.h"), cl_file!("reduce/typed.cl")],
);

pub(crate) const LUMA_ARGBEST: Kernel = Kernel::new(PROGRAM, "luma_argbest");
pub(crate) const LUMA_STATS: Kernel = Kernel::new(PROGRAM, "luma_stats");
pub(crate) const U32_STATS: Kernel = Kernel::new(PROGRAM, "u32_stats");

pub(crate) const TYPED_ARGBEST: Kernel = Kernel::new(TYPED_PROGRAM, "typed_argbest");
pub(crate) const TYPED_STATS: Kernel = Kernel::new(TYPED_PROGRAM, "typed_stats");
pub(crate) const TYPED_FSTATS: Kernel = Kernel::new(TYPED_PROGRAM, "typed_fstats");

/// Every kernel above.
#[cfg(test)]
pub(crate) const ALL: &[Kernel] = &[
    LUMA_ARGBEST,
    LUMA_STATS,
    U32_STATS,
    TYPED_ARGBEST,
    TYPED_STATS,
    TYPED_FSTATS,
];
