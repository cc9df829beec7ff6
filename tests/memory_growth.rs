//! 10,000 operations do not grow memory. Its own test binary: tests running beside it in one
//! process would move the resident set size.

mod common;

use clpix::Engine;
use common::*;

fn rss_bytes() -> Option<u64> {
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: u64 = statm.split_whitespace().nth(1)?.parse().ok()?;
    Some(pages * 4096)
}

/// On PoCL device buffers are host memory, so a leaked buffer, kernel or event shows in RSS.
#[test]
fn ten_thousand_operations_do_not_grow_memory() {
    let img = make_image(64, 48, 0, Content::Random, 5).to_image();
    let mut all = vec![Engine::cpu()];
    all.extend(opencl_engines());
    for e in &all {
        let run = |n: usize| {
            for i in 0..n {
                match i % 3 {
                    0 => drop(e.extreme(&img, clpix::Extreme::Brightest).unwrap()),
                    1 => drop(e.luminance_stats(&e.upload(&img).unwrap()).unwrap()),
                    _ => drop(every_op(e, (&img).into())),
                }
            }
        };
        // Warm-up: programs, kernel pools, allocator high-water marks. The blur's radius-built
        // programs build in the background (from the second call at a radius): a build
        // finishing during the count below would show as growth.
        run(1000);
        e.wait_for_builds();
        let before = rss_bytes();
        run(10_000);
        let after = rss_bytes();
        if let (Some(b), Some(a)) = (before, after) {
            let growth = a.saturating_sub(b);
            eprintln!(
                "{}: RSS {} KiB -> {} KiB over 10,000 operations",
                e.backend(),
                b >> 10,
                a >> 10
            );
            assert!(
                growth < 8 << 20,
                "{}: RSS grew by {} KiB over 10,000 operations",
                e.backend(),
                growth >> 10
            );
        }
    }
}
