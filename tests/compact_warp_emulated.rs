//! The GPU scan-order compaction a segment a warp, ranked by warp ballots (the `compact` program
//! variant that NVIDIA GPUs run), its intrinsics emulated through local memory and barriers
//! (`CLPIX_WARP_EMULATED`), so that its logic runs on every device, PoCL included; against the
//! CPU path, exactly. The PTX itself runs in the compaction parity tests on NVIDIA.
//! Its own test binary: the build options and the forced kernels are set before any engine
//! exists.

mod common;

use clpix::{CompactOrder, Engine};
use common::*;

#[test]
fn warp_relocation_matches_cpu() {
    emulate_nvidia_intrinsics();
    std::env::set_var("CLPIX_COMPACT_RELOCATE", "warp");
    let engines = gpu_layout_engines();
    let cpu = Engine::cpu();
    let mut cases: Vec<(TestImage, u16)> = compaction_edge_cases()
        .into_iter()
        .flat_map(|img| [(img.clone(), 0), (img.clone(), 400), (img, 1022)])
        .collect();
    cases.extend([
        (make_image(1, 1, 0, Content::White, 9), 1022),
        (make_image(4097, 3, 8, Content::Random, 10), 512),
        (make_image(517, 300, 0, Content::FewLevels, 11), 400),
        (make_image(9000, 1, 0, Content::Black, 12), 0),
        (
            make_image(
                2048,
                9,
                4,
                Content::TwoColours([0, 0, 0, 255], [250, 250, 250, 255]),
                13,
            ),
            512,
        ),
    ]);
    for (img, t) in &cases {
        let expected_hits = cpu.compact(img.view(), *t).unwrap();
        let expected_image = cpu
            .compacted_image(img.view(), *t, CompactOrder::ScanOrder)
            .unwrap();
        for e in &engines {
            let hits = e.compact(img.view(), *t).unwrap();
            assert!(hits == expected_hits, "{} {img:?} t {t}: hits", e.backend());
            let image = e
                .compacted_image(img.view(), *t, CompactOrder::ScanOrder)
                .unwrap();
            assert!(
                image == expected_image,
                "{} {img:?} t {t}: image",
                e.backend()
            );
        }
    }
}
