//! The kernels of `select.cl` that this operation launches, by name: typed, so that a
//! misspelt name fails to compile, and checked against the source by a test (`crate::ops`).

use crate::opencl::{Kernel, ProgramId, cl_file};

/// The program this operation declares: the k brightest pixels' helpers.
pub(crate) const PROGRAM: ProgramId = ProgramId::new("select", &[cl_file!("select/select.cl")]);

pub(crate) const INVERT_RGB: Kernel = Kernel::new(PROGRAM, "invert_rgb");

/// Every kernel above.
#[cfg(test)]
pub(crate) const ALL: &[Kernel] = &[INVERT_RGB];
