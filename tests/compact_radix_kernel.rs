//! The GPU sorted compaction as two LSD radix passes (`CLPIX_COMPACT_SORT=radix`; GPUs take the
//! counting sort by default) against the CPU path, exactly: hits and compacted images, random
//! sizes and thresholds, and the edge cases (all ties, all kept, none kept, one kept pixel in
//! the last position, strided rows, images of several tiles and groups). Its own test binary:
//! the variable is set before any engine reads it.

mod common;

use clpix::{CompactOrder, Engine};
use common::*;
use proptest::prelude::*;

fn check(engines: &[Engine], img: &TestImage, t: u16) -> Result<(), TestCaseError> {
    let cpu = Engine::cpu();
    let hits = cpu.compact_sorted(img.view(), t).unwrap();
    let mush = cpu
        .compacted_image(img.view(), t, CompactOrder::LuminanceDescending)
        .unwrap();
    for e in engines {
        let got = e.compact_sorted(img.view(), t).unwrap();
        prop_assert!(got == hits, "hits: {} {:?} t {t}", e.backend(), img);
        let got = e
            .compacted_image(img.view(), t, CompactOrder::LuminanceDescending)
            .unwrap();
        prop_assert!(got == mush, "image: {} {:?} t {t}", e.backend(), img);
    }
    Ok(())
}

#[test]
fn radix_sorted_compaction_matches_cpu() {
    std::env::set_var("CLPIX_COMPACT_SORT", "radix");
    let engines = gpu_layout_engines();
    // A runner made by hand has no source file to persist failures beside: none kept.
    let config = ProptestConfig {
        cases: 60,
        failure_persistence: None,
        ..ProptestConfig::default()
    };
    let mut runner = proptest::test_runner::TestRunner::new(config);
    let threshold = prop_oneof![Just(0u16), Just(1), Just(1022), 0u16..1023];
    runner
        .run(&(test_image(), threshold), |(img, t)| {
            check(&engines, &img, t)
        })
        .unwrap();

    let mut cases = compaction_edge_cases();
    cases.push(make_image(2100, 1, 0, Content::Random, 7)); // a partial second tile
    for img in &cases {
        for t in [0u16, 1, 512, 1022] {
            check(&engines, img, t).unwrap();
        }
    }
}
