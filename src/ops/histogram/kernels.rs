//! The kernels of `histogram.cl` that this operation launches, by name: typed, so that a
//! misspelt name fails to compile, and checked against the source by a test (`crate::ops`).

use crate::opencl::{Kernel, ProgramId, cl_file};

/// The program this operation declares: the RGBA and luminance histograms.
pub(crate) const PROGRAM: ProgramId =
    ProgramId::new("histogram", &[cl_file!("histogram/histogram.cl")]);

/// The program of every format's histograms with bins per call (`typed.cl`): a build per
/// format and kind (`CLPIX_FORMAT`, `HIST_KEY`, `HIST_LOCAL`).
pub(crate) const TYPED_PROGRAM: ProgramId = ProgramId::new(
    "histogram_typed",
    &[cl_file!("formats.h"), cl_file!("histogram/typed.cl")],
);

pub(crate) const TYPED_HIST: Kernel = Kernel::new(TYPED_PROGRAM, "typed_hist");
pub(crate) const HIST_LUMA: Kernel = Kernel::new(PROGRAM, "hist_luma");
pub(crate) const HIST_RGBA: Kernel = Kernel::new(PROGRAM, "hist_rgba");

/// Every kernel above.
#[cfg(test)]
pub(crate) const ALL: &[Kernel] = &[HIST_LUMA, HIST_RGBA, TYPED_HIST];
