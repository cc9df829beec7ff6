//! Robustness: arbitrary dimensions, strides, lengths and parameters give an error or the
//! correct answer on every backend; one engine shared by 8 threads gives the single-threaded
//! results; 10,000 operations do not grow memory.

mod common;

use clpix::{Engine, Error, ImageInput, ImageView};
use common::*;
use proptest::prelude::*;
use std::sync::OnceLock;

fn engines() -> &'static [Engine] {
    static E: OnceLock<Vec<Engine>> = OnceLock::new();
    E.get_or_init(|| {
        let mut v = opencl_engines();
        v.extend(capped_opencl_engines(4096));
        v
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    /// Any width, height, stride and buffer length: either the view is refused with the error
    /// that names the cause, or every backend gives the CPU's answer.
    #[test]
    fn arbitrary_views_give_an_error_or_the_right_answer(
        width in prop_oneof![0..70u32, Just(u32::MAX), 1u32 << 30..u32::MAX],
        height in prop_oneof![0..70u32, Just(u32::MAX), 1u32 << 30..u32::MAX],
        stride_extra in -8i64..40,
        len in 0usize..(80 * 80 * 4 + 64),
        seed in any::<u64>(),
    ) {
        let mut s = seed;
        let data: Vec<u8> = (0..len).map(|_| splitmix(&mut s) as u8).collect();
        let min_stride = width as i64 * 4;
        let stride = (min_stride + stride_extra).max(0) as usize;
        match ImageView::with_stride(&data, width, height, stride) {
            Err(Error::StrideTooSmall { .. }) => prop_assert!((stride as i64) < min_stride),
            Err(Error::BufferTooShort { needed, .. }) => prop_assert!(needed > len),
            Err(Error::ImageTooLarge { .. }) => prop_assert!(width as u64 * height as u64 > 1 << 32 || stride as u64 * height as u64 > 1 << 40),
            Err(e) => prop_assert!(false, "unexpected error {e}"),
            Ok(view) => {
                prop_assert!(stride as i64 >= min_stride);
                let expected = every_op(&Engine::cpu(), ImageInput::Host(view));
                for e in engines() {
                    prop_assert_eq!(&every_op(e, ImageInput::Host(view)), &expected, "{}", e.backend());
                }
            }
        }
    }
}

#[test]
fn one_engine_shared_by_8_threads_gives_the_single_threaded_results() {
    let mut all = vec![Engine::cpu()];
    all.extend(opencl_engines());
    let images: Vec<TestImage> = (0..16)
        .map(|i| {
            make_image(
                17 + i * 13,
                9 + i * 7,
                (i % 3) as usize * 4,
                if i % 4 == 0 {
                    Content::Constant([9, 99, 199, 255])
                } else {
                    Content::Random
                },
                i as u64,
            )
        })
        .collect();
    let expected: Vec<Vec<String>> = images
        .iter()
        .map(|img| every_op(&Engine::cpu(), img.view().into()))
        .collect();
    for engine in &all {
        std::thread::scope(|scope| {
            for t in 0..8 {
                let (images, expected) = (&images, &expected);
                scope.spawn(move || {
                    for round in 0..100 {
                        let i = (t * 7 + round) % images.len();
                        let got = every_op(engine, images[i].view().into());
                        assert_eq!(
                            got,
                            expected[i],
                            "thread {t} round {round} on {}",
                            engine.backend()
                        );
                    }
                });
            }
        });
    }
}

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
                    0 => drop(e.brightest(&img).unwrap()),
                    1 => drop(e.luminance_stats(&e.upload(&img).unwrap()).unwrap()),
                    _ => drop(every_op(e, (&img).into())),
                }
            }
        };
        run(1000); // warm-up: programs, kernel pools, allocator high-water marks
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
