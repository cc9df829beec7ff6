//! The GPU blur kernels built per radius, against the CPU path, exactly: the fused kernel
//! (built for radii 1 to 16; by default GPUs take it up to 2) with one and two columns a
//! work-item (`CLPIX_BLUR_GPU=registers`, `CLPIX_BLUR_COLUMNS`); the band kernel (1 to 32; by
//! default GPUs take it from 3 to 20) in its default shapes and two more (`CLPIX_BLUR_GPU=band`,
//! `CLPIX_BLUR_BAND`); the radius-specialised two passes (1 to 32) by default and with 1, 2
//! and 4 channels a work-item of the vertical pass and 4 and 8 pixels a work-item of the
//! horizontal pass beside the defaults (`CLPIX_BLUR_GPU=radius`, `CLPIX_BLUR_CHANNELS`,
//! `CLPIX_BLUR_HPIXELS`), each at a few radii that cover its shapes. Its own test binary with
//! one test: the variables are set with no other test thread reading the environment. Last,
//! kernels that do not build: the blur falls back to the generic two passes.

mod common;

use clpix::{Border, Engine, GaussianBlur};
use common::*;

/// Environment variables a kernel shape sets.
type Settings = &'static [(&'static str, &'static str)];

#[test]
fn fused_kernel_matches_cpu_at_every_radius() {
    let engines = gpu_layout_engines();
    let cpu = Engine::cpu();
    // The fused kernel with one and two columns a work-item; the band kernel in its default
    // shapes and in two more (256 work-items with one channel each; 32 rows a step, which the
    // local memory of a GPU holds only halved at w = 25); the radius passes in their default
    // shapes and with 1, 2 and 4 channels a work-item of the vertical pass and 4 or 8 pixels a
    // work-item of the horizontal pass ((2, 8) and (4, 8) are no default; (1, 4) is one only
    // for 9 <= w <= 12), those with the ring of rows in registers for the vertical pass where
    // NVIDIA GPUs would take the tensor cores (their own test: blur_tensor_emulated). Each radius is a program of its own to build (seconds for the unrolled
    // kernels, on each driver): each shape takes a few radii that cover it (the smallest, either
    // side of the defaults' switches, the target's 8 and 25, the largest). About 40 programs:
    // with 70, the GPU machine's NVIDIA and PoCL 5 drivers took over 250 s to build them.
    let registers: &[u32] = &[1, 2, 3, 16];
    let band: &[u32] = &[1, 3, 8, 9, 13, 20, 32];
    let band_more: &[u32] = &[3, 8, 25];
    let radius: &[u32] = &[1, 8, 9, 13, 25, 32];
    let radius_more: &[u32] = &[1, 13, 25];
    let shapes: [(&str, Settings, &[u32]); 9] = [
        ("registers", &[("CLPIX_BLUR_COLUMNS", "1")], registers),
        ("registers", &[("CLPIX_BLUR_COLUMNS", "2")], registers),
        ("band", &[], band),
        ("band", &[("CLPIX_BLUR_BAND", "256,1,4,16")], band_more),
        ("band", &[("CLPIX_BLUR_BAND", "128,2,8,32,64")], band_more),
        ("radius", &[], radius),
        (
            "radius",
            &[
                ("CLPIX_BLUR_CHANNELS", "1"),
                ("CLPIX_BLUR_HPIXELS", "4"),
                ("CLPIX_BLUR_TENSOR", "0"),
            ],
            radius_more,
        ),
        (
            "radius",
            &[
                ("CLPIX_BLUR_CHANNELS", "2"),
                ("CLPIX_BLUR_HPIXELS", "8"),
                ("CLPIX_BLUR_TENSOR", "0"),
            ],
            radius_more,
        ),
        (
            "radius",
            &[
                ("CLPIX_BLUR_CHANNELS", "4"),
                ("CLPIX_BLUR_HPIXELS", "8"),
                ("CLPIX_BLUR_TENSOR", "0"),
            ],
            radius_more,
        ),
    ];
    for (kernel, settings, radii) in shapes {
        for v in [
            "CLPIX_BLUR_COLUMNS",
            "CLPIX_BLUR_BAND",
            "CLPIX_BLUR_CHANNELS",
            "CLPIX_BLUR_HPIXELS",
            "CLPIX_BLUR_TENSOR",
        ] {
            std::env::remove_var(v);
        }
        std::env::set_var("CLPIX_BLUR_GPU", kernel);
        for (variable, value) in settings {
            std::env::set_var(variable, value);
        }
        let engines: Vec<&Engine> = engines.iter().collect();
        // Two radii of the shape's for the fixed image below: the largest and a middle one.
        let fixed = [radii[radii.len() - 1], radii[radii.len() / 2]];
        random_blurs_match_cpu(&engines, radii, 16, &format!("{kernel} {settings:?}"));
        // Rows of two horizontal tiles, strided, several strips of rows.
        let img = make_image(1100, 270, 3, Content::Random, 11);
        for (radius, border) in [(fixed[0], Border::Reflect), (fixed[1], Border::Zero)] {
            let blur = GaussianBlur::new(radius).border(border);
            let expected = cpu.gaussian_blur(img.view(), &blur).unwrap();
            for e in &engines {
                let got = e.gaussian_blur(img.view(), &blur).unwrap();
                assert!(got == expected, "{kernel} {settings:?} w = {radius}");
            }
        }
    }

    // A compiler that cannot build the fused kernel: the variant section of a copy of the kernels made
    // invalid. The blur falls back to the two passes, with the same bits.
    let dir = kernel_dir_copy("broken-variant", |name, text| {
        if name == "blur.cl" {
            let at = text.find("#ifdef CLPIX_VARIANT").unwrap() + "#ifdef CLPIX_VARIANT".len();
            text.insert_str(at, "\nthis does not compile;\n");
        }
    });
    std::env::set_var("CLPIX_KERNEL_DIR", &dir);
    for v in [
        "CLPIX_BLUR_GPU",
        "CLPIX_BLUR_BAND",
        "CLPIX_BLUR_CHANNELS",
        "CLPIX_BLUR_HPIXELS",
    ] {
        std::env::remove_var(v);
    }
    let img = make_image(150, 40, 0, Content::Random, 7);
    for e in gpu_layout_engines() {
        // The fused kernel (2), the band kernel (3, 9) and the radius-built passes (20) by
        // default.
        for radius in [2, 3, 9, 20] {
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
    std::env::remove_var("CLPIX_KERNEL_DIR");

    // A tuning variable with a value the kernels cannot take is an error that names it (a
    // misspelt kernel must not measure the default kernels unnoticed, nor turn off their
    // fallback); blank is the default.
    let bad: Settings = &[
        ("CLPIX_BLUR_GPU", "regsiters"),
        ("CLPIX_BLUR_COLUMNS", "3"),
        ("CLPIX_BLUR_BAND", "128,4,8"),
        ("CLPIX_BLUR_BAND", "128,3,8,8"),
        ("CLPIX_BLUR_BAND", "128,4,8,8,0"),
        ("CLPIX_BLUR_CHANNELS", "3"),
        ("CLPIX_BLUR_HPIXELS", "16"),
        ("CLPIX_BLUR_TENSOR", "yes"),
    ];
    let blur = GaussianBlur::new(3);
    let expected = cpu.gaussian_blur(img.view(), &blur).unwrap();
    for e in gpu_layout_engines() {
        for (variable, value) in bad {
            std::env::set_var(variable, value);
            match e.gaussian_blur(img.view(), &blur).map(|_| ()) {
                Err(clpix::Error::InvalidEnvironment { var, .. }) => assert_eq!(&var, variable),
                other => panic!("{variable}={value} on {}: {other:?}", e.backend()),
            }
            std::env::set_var(variable, " ");
            let got = e.gaussian_blur(img.view(), &blur);
            assert!(got.as_ref().ok() == Some(&expected), "{variable} blank");
            std::env::remove_var(variable);
        }
    }
}
