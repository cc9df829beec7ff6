//! The kernels of `histogram.cl` that this operation launches, by name: typed, so that a
//! misspelt name fails to compile, and checked against the source by a test (`crate::ops`).

use crate::cl::{Kernel, ProgramId};

pub(crate) const HIST_LUMA: Kernel = Kernel::new(ProgramId::Histogram, "hist_luma");
pub(crate) const HIST_RGBA: Kernel = Kernel::new(ProgramId::Histogram, "hist_rgba");

/// Every kernel above.
#[cfg(test)]
pub(crate) const ALL: &[Kernel] = &[HIST_LUMA, HIST_RGBA];
