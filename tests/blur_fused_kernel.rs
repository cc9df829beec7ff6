//! The fused GPU blur kernel at every radius it accepts, forced with `CLPIX_BLUR_GPU=fused`
//! (by default GPUs take it only at small radii), against the CPU path, exactly. Its own test
//! binary with one test: the variable is set before any engine runs, with no other test
//! thread reading the environment.

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
    std::env::set_var("CLPIX_BLUR_GPU", "fused");
    let engines = gpu_layout_engines();
    let cpu = Engine::cpu();
    let mut runner = proptest::test_runner::TestRunner::new(ProptestConfig::with_cases(48));
    let strategy = (test_image(), 1..=70u32, border(), 0.3f64..30.0);
    runner
        .run(&strategy, |(img, radius, border, sigma)| {
            let blur = GaussianBlur::new(radius).sigma(sigma).border(border);
            let expected = cpu.gaussian_blur(img.view(), &blur).unwrap();
            for e in &engines {
                let got = e.gaussian_blur(img.view(), &blur).unwrap();
                prop_assert!(got == expected, "{} {:?} {:?}", e.backend(), img, blur);
            }
            Ok(())
        })
        .unwrap();
}
