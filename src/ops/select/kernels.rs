//! The kernels of `select.cl` that this operation launches, by name: typed, so that a
//! misspelt name fails to compile, and checked against the source by a test (`crate::ops`).

use crate::cl::{Kernel, ProgramId};

pub(crate) const INVERT_RGB: Kernel = Kernel::new(ProgramId::Select, "invert_rgb");

/// Every kernel above.
#[cfg(test)]
pub(crate) const ALL: &[Kernel] = &[INVERT_RGB];
