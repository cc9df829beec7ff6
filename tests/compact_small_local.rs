//! The GPU sorted compaction built as for a device with 32 KiB of local memory: the radix
//! scatter with 8 pixels a work-item (`RADIX_PER`, which the host passes where the default's
//! 38 KiB would not fit; see `radix_per` in src/compact.rs), against the CPU path, exactly.
//! Its own test binary: the build options are set before any engine exists.

mod common;

use clpix::{CompactOrder, Engine};
use common::*;

#[test]
fn sorted_compaction_with_half_tiles_matches_cpu() {
    std::env::set_var("CLPIX_BUILD_OPTIONS", "-D RADIX_PER=8u");
    let engines = gpu_layout_engines();
    let cpu = Engine::cpu();
    let cases = [
        (333, 77, Content::Random, 100),
        (4097, 1, Content::Random, 0),
        (64, 64, Content::Constant([10, 200, 30, 255]), 0),
        (1, 1, Content::White, 1022),
        (517, 300, Content::FewLevels, 400),
        (
            2048,
            9,
            Content::TwoColours([0, 0, 0, 255], [250, 250, 250, 255]),
            512,
        ),
    ];
    for (w, h, content, t) in cases {
        let img = make_image(w, h, 8, content, 7);
        let expected_hits = cpu.compact_sorted(img.view(), t).unwrap();
        let expected_image = cpu
            .compacted_image(img.view(), t, CompactOrder::LuminanceDescending)
            .unwrap();
        for e in &engines {
            let hits = e.compact_sorted(img.view(), t).unwrap();
            assert!(hits == expected_hits, "{} {w}×{h} t {t}: hits", e.backend());
            let image = e
                .compacted_image(img.view(), t, CompactOrder::LuminanceDescending)
                .unwrap();
            assert!(
                image == expected_image,
                "{} {w}×{h} t {t}: image",
                e.backend()
            );
        }
    }
}
