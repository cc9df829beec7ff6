//! The single-pass scan-order compaction (`CLPIX_COMPACT_RELOCATE=lookback`: a decoupled
//! look-back with fallback) against the CPU path, exactly: natively on NVIDIA GPUs (refused
//! elsewhere, never built by a compiler that does not know its PTX), then with the warp
//! intrinsics emulated on every device, first as it runs, then with the words of odd tiles
//! never trusted and no re-reads (`CLPIX_LOOKBACK_DISTRUST_ODD`, `CLPIX_LOOKBACK_SPIN=0`), so
//! that the fallback (a group counting a predecessor's tile itself) decides most offsets.
//! One test, its own binary: the build options change between the phases, before each phase's
//! engines exist.

mod common;

use clpix::Engine;
use common::*;

#[test]
fn single_pass_compaction_matches_cpu() {
    std::env::set_var("CLPIX_COMPACT_RELOCATE", "lookback");
    std::env::remove_var("CLPIX_BUILD_OPTIONS");
    let is_nvidia = |e: &Engine| e.device().is_some_and(|d| d.platform.contains("NVIDIA"));
    check_warp_compaction(&gpu_layout_engines(), |e| !is_nvidia(e), "native");

    emulate_nvidia_intrinsics();
    check_warp_compaction(&gpu_layout_engines(), |_| false, "emulated");

    std::env::set_var(
        "CLPIX_BUILD_OPTIONS",
        "-D CLPIX_WARP_EMULATED=1 -D CLPIX_LOOKBACK_SPIN=0 -D CLPIX_LOOKBACK_DISTRUST_ODD=1",
    );
    check_warp_compaction(&gpu_layout_engines(), |_| false, "fallback");
}
