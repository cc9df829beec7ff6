//! The kernels of `compact.cl`, `radix.cl`, `compact_lookback.cl` and `compact_nv.cl` that this
//! operation launches, by name: typed, so that a misspelt name fails to compile, and checked
//! against the source by a test (`crate::ops`).

use crate::opencl::{Kernel, ProgramId, cl_file};

/// The program this operation declares: the scan's files (whose group ranges, work-group scans and
/// passes it uses), the compaction (`compact.cl`), the GPU radix passes of the sorted compaction
/// (`radix.cl`), the portable single-pass compaction (`compact_lookback.cl`) and the NVIDIA-only
/// kernels (`compact_nv.cl`).
pub(crate) const PROGRAM: ProgramId = ProgramId::new(
    "compact",
    &[
        cl_file!("scan/scan.cl"),
        cl_file!("compact/compact.cl"),
        cl_file!("compact/radix.cl"),
        cl_file!("scan/lookback.cl"),
        cl_file!("compact/compact_lookback.cl"),
        cl_file!("compact/compact_nv.cl"),
    ],
);

/// The compaction of the other formats (`compact/typed.cl`), one program per format
/// (`CLPIX_FORMAT`).
pub(crate) const TYPED_PROGRAM: ProgramId = ProgramId::new(
    "compact_typed",
    &[cl_file!("formats.h"), cl_file!("compact/typed.cl")],
);

pub(crate) const TYPED_COUNT: Kernel = Kernel::new(TYPED_PROGRAM, "typed_count");
pub(crate) const TYPED_KEEP: Kernel = Kernel::new(TYPED_PROGRAM, "typed_keep");
pub(crate) const TYPED_GATHER: Kernel = Kernel::new(TYPED_PROGRAM, "typed_gather");
pub(crate) const COMPACT_COUNT: Kernel = Kernel::new(PROGRAM, "compact_count");
pub(crate) const COMPACT_COUNT_WARPS: Kernel = Kernel::new(PROGRAM, "compact_count_warps");
pub(crate) const COMPACT_HIST: Kernel = Kernel::new(PROGRAM, "compact_hist");
pub(crate) const COMPACT_LOOKBACK: Kernel = Kernel::new(PROGRAM, "compact_lookback");
pub(crate) const COMPACT_LOOKBACK_INDEXED: Kernel =
    Kernel::new(PROGRAM, "compact_lookback_indexed");
pub(crate) const COMPACT_LOOKBACK_GROUP: Kernel = Kernel::new(PROGRAM, "compact_lookback_group");
pub(crate) const COMPACT_LOOKBACK_GROUP_INDEXED: Kernel =
    Kernel::new(PROGRAM, "compact_lookback_group_indexed");
pub(crate) const COMPACT_RELOCATE: Kernel = Kernel::new(PROGRAM, "compact_relocate");
pub(crate) const COMPACT_RELOCATE_HITS: Kernel = Kernel::new(PROGRAM, "compact_relocate_hits");
pub(crate) const COMPACT_RELOCATE_WARPS: Kernel = Kernel::new(PROGRAM, "compact_relocate_warps");
pub(crate) const COMPACT_SCATTER: Kernel = Kernel::new(PROGRAM, "compact_scatter");
pub(crate) const COMPACT_SCATTER_HITS: Kernel = Kernel::new(PROGRAM, "compact_scatter_hits");
pub(crate) const RADIX_HIST: Kernel = Kernel::new(PROGRAM, "radix_hist");
pub(crate) const RADIX_SCATTER: Kernel = Kernel::new(PROGRAM, "radix_scatter");
pub(crate) const RADIX_SCATTER_INDEXED: Kernel = Kernel::new(PROGRAM, "radix_scatter_indexed");
pub(crate) const RADIX_SINGLE: Kernel = Kernel::new(PROGRAM, "radix_single");
pub(crate) const RADIX_SINGLE_INDEXED: Kernel = Kernel::new(PROGRAM, "radix_single_indexed");
/// Test only: the size of the scatter's local memory struct.
#[cfg(test)]
pub(crate) const RADIX_LOCAL_SIZE: Kernel = Kernel::new(PROGRAM, "radix_local_size");

/// Every kernel above.
#[cfg(test)]
pub(crate) const ALL: &[Kernel] = &[
    TYPED_COUNT,
    TYPED_KEEP,
    TYPED_GATHER,
    COMPACT_COUNT,
    COMPACT_COUNT_WARPS,
    COMPACT_HIST,
    COMPACT_LOOKBACK,
    COMPACT_LOOKBACK_INDEXED,
    COMPACT_LOOKBACK_GROUP,
    COMPACT_LOOKBACK_GROUP_INDEXED,
    COMPACT_RELOCATE,
    COMPACT_RELOCATE_HITS,
    COMPACT_RELOCATE_WARPS,
    COMPACT_SCATTER,
    COMPACT_SCATTER_HITS,
    RADIX_HIST,
    RADIX_SCATTER,
    RADIX_SCATTER_INDEXED,
    RADIX_SINGLE,
    RADIX_SINGLE_INDEXED,
    RADIX_LOCAL_SIZE,
];
