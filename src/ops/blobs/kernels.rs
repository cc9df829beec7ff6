//! The kernels of `blobs/blobs.cl` that this operation launches, by name (checked against the
//! source by a test in `crate::ops`).

use crate::opencl::{Kernel, ProgramId, cl_file};

/// The blobs of the integer-key formats, one program per format (`CLPIX_FORMAT`).
pub(crate) const PROGRAM: ProgramId = ProgramId::new(
    "blobs",
    &[cl_file!("formats.h"), cl_file!("blobs/blobs.cl")],
);

pub(crate) const BLOB_INIT: Kernel = Kernel::new(PROGRAM, "blob_init");
pub(crate) const BLOB_TILES: Kernel = Kernel::new(PROGRAM, "blob_tiles");
pub(crate) const BLOB_BORDERS: Kernel = Kernel::new(PROGRAM, "blob_borders");
pub(crate) const BLOB_JUMP: Kernel = Kernel::new(PROGRAM, "blob_jump");
pub(crate) const BLOB_ROOTS: Kernel = Kernel::new(PROGRAM, "blob_roots");
pub(crate) const BLOB_STATS_INIT: Kernel = Kernel::new(PROGRAM, "blob_stats_init");
pub(crate) const BLOB_STATS: Kernel = Kernel::new(PROGRAM, "blob_stats");
pub(crate) const BLOB_PEAKS: Kernel = Kernel::new(PROGRAM, "blob_peaks");
pub(crate) const BLOB_LABELS: Kernel = Kernel::new(PROGRAM, "blob_labels");

/// Every kernel above.
#[cfg(test)]
pub(crate) const ALL: &[Kernel] = &[
    BLOB_INIT,
    BLOB_TILES,
    BLOB_BORDERS,
    BLOB_JUMP,
    BLOB_ROOTS,
    BLOB_STATS_INIT,
    BLOB_STATS,
    BLOB_PEAKS,
    BLOB_LABELS,
];
