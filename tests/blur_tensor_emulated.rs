//! The GPU blur's passes on tensor cores (the radius-built variant that NVIDIA GPUs run,
//! `mma.sync` on 8-bit integers), the instruction emulated through local memory and barriers
//! (`CLPIX_WARP_EMULATED`), so that their logic (the weights' band, the byte planes, the
//! sliding windows of pixels and rows, the borders) runs on every device, PoCL included;
//! against the CPU path, exactly. The PTX itself runs in the blur parity tests on NVIDIA.
//! Its own test binary: the build options and the forced kernels are set before any engine
//! exists.

mod common;

use clpix::{Border, Engine, GaussianBlur};
use common::*;

#[test]
fn tensor_passes_match_cpu() {
    emulate_nvidia_intrinsics();
    std::env::set_var("CLPIX_BLUR_GPU", "radius");
    let engines = gpu_layout_engines();
    let cpu = Engine::cpu();
    // Radii whose blocks read 2 to 9 halves of 16 rows (w = 1, 8; 17; 25, 32; 40; 48; 64: the
    // largest the passes take; from 33 their programs hold no CUDA-core passes), each a
    // program of its own to build (about 10 s on PoCL 3.1); images shorter than a block, than a
    // half, rows not a multiple of 16, widths not a multiple of a warp's 8 pixels or a group's
    // 32, strided.
    let radii = [1u32, 8, 17, 25, 32, 40, 48, 64];
    let fixed = [
        (make_image(1, 1, 0, Content::White, 1), 1, Border::Clamp),
        (
            make_image(37, 5, 0, Content::Random, 2),
            17,
            Border::Reflect,
        ),
        (make_image(70, 83, 3, Content::Random, 3), 25, Border::Zero),
        (make_image(33, 200, 0, Content::Random, 4), 32, Border::Wrap),
        (
            make_image(50, 130, 2, Content::Random, 7),
            48,
            Border::Reflect,
        ),
        (make_image(20, 3, 0, Content::Random, 8), 40, Border::Clamp),
        (make_image(90, 150, 0, Content::Random, 9), 64, Border::Wrap),
        (
            make_image(
                64,
                48,
                0,
                Content::TwoColours([0, 0, 0, 255], [255, 255, 255, 255]),
                5,
            ),
            8,
            Border::Clamp,
        ),
        (make_image(9, 300, 1, Content::Random, 6), 8, Border::Clamp),
    ];
    std::env::set_var("CLPIX_BLUR_TENSOR", "1");
    for (img, radius, border) in &fixed {
        let blur = GaussianBlur::new(*radius).border(*border);
        let expected = cpu.gaussian_blur(img.view(), &blur).unwrap();
        for e in &engines {
            let got = e.gaussian_blur(img.view(), &blur).unwrap();
            assert!(got == expected, "{} {img:?} {blur:?}", e.backend());
        }
    }
    let engines: Vec<&Engine> = engines.iter().collect();
    random_blurs_match_cpu(&engines, &radii, 12, "tensor passes, emulated");
}
