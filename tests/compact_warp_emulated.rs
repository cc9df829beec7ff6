//! The GPU scan-order compaction a segment a warp, ranked by warp ballots (the `compact` program
//! variant that NVIDIA GPUs run), its intrinsics emulated through local memory and barriers
//! (`CLPIX_WARP_EMULATED`), so that its logic runs on every device, PoCL included; against the
//! CPU path, exactly. The PTX itself runs in the compaction parity tests on NVIDIA.
//! Its own test binary: the build options and the forced kernels are set before any engine
//! exists.

mod common;

use common::*;

#[test]
fn warp_relocation_matches_cpu() {
    emulate_nvidia_intrinsics();
    std::env::set_var("CLPIX_COMPACT_RELOCATE", "warp");
    check_warp_compaction(&gpu_layout_engines(), |_| false, "emulated");
}
