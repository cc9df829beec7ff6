//! Large transfers through the pinned staging slots (GPUs' default), forced on every OpenCL
//! device with slots of 64 KiB (`CLPIX_STAGING=64`), so that images cross many slots and end
//! in a partial one: uploads and downloads give back the same bytes, and the operations that
//! read and write large buffers (compaction, histogram, blur, scan) give the CPU path's results.
//! Its own test binary: the variable is set before any engine exists.

mod common;

use clpix::{CompactOrder, Engine, GaussianBlur};
use common::*;

#[test]
fn staged_transfers_match_cpu() {
    std::env::set_var("CLPIX_STAGING", "64");
    let engines = opencl_engines();
    let cpu = Engine::cpu();
    let images = [
        make_image(1, 1, 0, Content::Random, 1),
        // 65 536 + 4 bytes: one whole slot and 4 bytes.
        make_image(16385, 1, 0, Content::Random, 2),
        make_image(517, 300, 0, Content::Random, 3),
        make_image(1031, 999, 12, Content::Random, 4),
    ];
    for img in &images {
        let blur = GaussianBlur::new(3);
        let expected_blur = cpu.gaussian_blur(img.view(), &blur).unwrap();
        let expected_compact = cpu
            .compacted_image(img.view(), 400, CompactOrder::LuminanceDescending)
            .unwrap();
        let expected_hits = cpu.compact(img.view(), 400).unwrap();
        let expected_hist = cpu.histogram_rgba(img.view()).unwrap();
        let packed = img.to_image();
        let words: Vec<u32> = packed
            .as_raw()
            .chunks(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect();
        let expected_scan = cpu.exclusive_scan(&words).unwrap();
        for e in &engines {
            let name = format!("{} {img:?}", e.backend());
            let on_device = e.upload(img.view()).unwrap();
            let back = e.download(&on_device).unwrap();
            assert!(back == packed, "{name}: round trip");
            let blurred = e.gaussian_blur(img.view(), &blur).unwrap();
            assert!(blurred == expected_blur, "{name}: blur");
            let compacted = e
                .compacted_image(&on_device, 400, CompactOrder::LuminanceDescending)
                .unwrap();
            assert!(compacted == expected_compact, "{name}: compacted image");
            assert!(
                e.compact(img.view(), 400).unwrap() == expected_hits,
                "{name}: hits"
            );
            assert_eq!(
                e.histogram_rgba(img.view()).unwrap(),
                expected_hist,
                "{name}: histogram"
            );
            assert_eq!(
                e.exclusive_scan(&words).unwrap(),
                expected_scan,
                "{name}: scan"
            );
        }
    }
}
