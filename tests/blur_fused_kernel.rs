//! The fused GPU blur kernel at every radius it is built for (1 to 16; by default GPUs take it
//! up to 6) and with one and two columns a work-item, forced with `CLPIX_BLUR_GPU=registers`
//! and `CLPIX_BLUR_COLUMNS`, against the CPU path, exactly. Its own test binary with one test:
//! the variables are set with no other test thread reading the environment.

mod common;

use clpix::{Border, Engine, GaussianBlur};
use common::*;
use proptest::prelude::*;

/// Every OpenCL device in the coalesced (GPU) layout: PoCL runs the GPU kernels too.
fn gpu_layout_engines() -> Vec<Engine> {
    let config = clpix::EngineConfig {
        layout: clpix::KernelLayout::Coalesced,
        ..Default::default()
    };
    let mut engines = opencl_engines(); // fails loudly in CI when no device is found
    engines.retain(|e| e.device().is_some());
    let mut out = Vec::new();
    for e in &engines {
        if let Some(d) = e.device() {
            if !out.iter().any(|o: &Engine| o.device() == Some(d)) {
                out.push(Engine::with_device_config(d, &config).expect("device opens"));
            }
        }
    }
    out
}

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
        let mut runner = proptest::test_runner::TestRunner::new(ProptestConfig::with_cases(30));
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
}
