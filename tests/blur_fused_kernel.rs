//! The fused GPU blur kernel at every radius it is built for (1 to 16; by default GPUs take it
//! up to 6) and with one and two columns a work-item, forced with `CLPIX_BLUR_GPU=registers`
//! and `CLPIX_BLUR_COLUMNS`, against the CPU path, exactly. Its own test binary with one test:
//! the variables are set with no other test thread reading the environment. Last, a fused
//! kernel that does not build: the blur falls back to the two passes.

mod common;

use clpix::{Border, Engine, GaussianBlur};
use common::*;
use proptest::prelude::*;

fn border() -> impl Strategy<Value = Border> {
    prop_oneof![
        Just(Border::Clamp),
        Just(Border::Reflect),
        Just(Border::Wrap),
        Just(Border::Zero)
    ]
}

#[test]
fn fused_kernel_matches_cpu_at_every_radius() {
    let engines = gpu_layout_engines();
    let cpu = Engine::cpu();
    for (kernel, columns, max_radius) in [("registers", "1", 16u32), ("registers", "2", 16)] {
        std::env::set_var("CLPIX_BLUR_GPU", kernel);
        std::env::set_var("CLPIX_BLUR_COLUMNS", columns);
        // A runner made by hand has no source file to persist failures beside: none kept.
        let config = ProptestConfig {
            cases: 30,
            failure_persistence: None,
            ..ProptestConfig::default()
        };
        let mut runner = proptest::test_runner::TestRunner::new(config);
        let strategy = (test_image(), 1..=max_radius, border(), 0.3f64..30.0);
        runner
            .run(&strategy, |(img, radius, border, sigma)| {
                let blur = GaussianBlur::new(radius).sigma(sigma).border(border);
                let expected = cpu.gaussian_blur(img.view(), &blur).unwrap();
                for e in &engines {
                    let got = e.gaussian_blur(img.view(), &blur).unwrap();
                    prop_assert!(
                        got == expected,
                        "{kernel}: {} {:?} {:?}",
                        e.backend(),
                        img,
                        blur
                    );
                }
                Ok(())
            })
            .unwrap();
    }

    // A compiler that cannot build the fused kernel: the variant section of a copy of cl/ made
    // invalid. The blur falls back to the two passes, with the same bits.
    let dir = std::env::temp_dir().join(format!("clpix-broken-variant-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let cl = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("cl");
    for f in std::fs::read_dir(&cl).unwrap() {
        let f = f.unwrap().path();
        let mut text = std::fs::read_to_string(&f).unwrap();
        if f.file_name().is_some_and(|n| n == "blur.cl") {
            let at = text.find("#ifdef CLPIX_VARIANT").unwrap() + "#ifdef CLPIX_VARIANT".len();
            text.insert_str(at, "\nthis does not compile;\n");
        }
        std::fs::write(dir.join(f.file_name().unwrap()), text).unwrap();
    }
    std::env::set_var("CLPIX_KERNEL_DIR", &dir);
    std::env::remove_var("CLPIX_BLUR_GPU");
    std::env::remove_var("CLPIX_BLUR_COLUMNS");
    let img = make_image(150, 40, 0, Content::Random, 7);
    for e in gpu_layout_engines() {
        for radius in [2, 3] {
            let blur = GaussianBlur::new(radius);
            let got = e.gaussian_blur(img.view(), &blur);
            let expected = cpu.gaussian_blur(img.view(), &blur).unwrap();
            assert!(
                got.as_ref().ok() == Some(&expected),
                "{}: {:?}",
                e.backend(),
                got.err()
            );
        }
    }
    std::fs::remove_dir_all(&dir).ok();
}
