//! Every operation and kernel variant on small inputs, on every OpenCL device, against the CPU
//! path, exactly: light enough for the Oclgrind simulator, which interprets every work-item and
//! has 32 KiB of local memory (OpenCL's minimum). The NVIDIA variants run with their intrinsics
//! emulated. Where `OCLGRIND_LOG` names a file (CI runs this binary on Oclgrind with
//! `OCLGRIND_DATA_RACES=1` and `OCLGRIND_CHECK_API=1`), anything the simulator wrote there
//! fails the test: a data race, an invalid read or write, barrier divergence, an API error
//! (and an uninitialized value where `OCLGRIND_UNINITIALIZED=1`, whose plugin crashes on
//! `luma_stats` in Oclgrind 21.10). One test, so that the log is read after every kernel has
//! run.

mod common;

use clpix::tuning::{BlurF32Kernel, ScanKernel, Tuning};
use clpix::tuning::{BlurKernel, CompactRelocation};
use clpix::{Border, CompactOrder, Engine, GaussianBlur};
use common::*;

/// Every device in the GPU layout with `tuning`, and (for `both_layouts`) in its own layout.
fn engines(tuning: &Tuning, both_layouts: bool) -> Vec<Engine> {
    let mut all = gpu_layout_engines_tuned(tuning);
    if both_layouts {
        all.extend(opencl_engines_tuned(tuning).into_iter().filter(|e| {
            e.device()
                .is_some_and(|d| d.device_type == clpix::DeviceType::Cpu)
        }));
    }
    all
}

/// `what` on every engine equals `what` on the CPU engine.
fn same_as_cpu<T: PartialEq + std::fmt::Debug>(
    engines: &[Engine],
    label: &str,
    what: impl Fn(&Engine) -> clpix::Result<T>,
) {
    let expected = what(&Engine::cpu()).unwrap();
    for e in engines {
        let got = match what(e) {
            Ok(got) => got,
            Err(err) if refused_there(&err) => continue,
            Err(err) => panic!("{label} on {}: {err}", e.backend()),
        };
        assert!(got == expected, "{label} on {}", e.backend());
    }
}

/// The tuning `set` makes, with the radius-built programs at a radius's first call
/// (`build_wait`), so that each call here runs the kernels it names on every device; Oclgrind
/// builds them so without asking (see
/// `repeated_blurs_at_one_radius_on_the_default_tuning`).
fn tuned(set: impl Fn(&mut Tuning)) -> Tuning {
    let mut t = env_tuning();
    t.build_wait = true;
    set(&mut t);
    t
}

/// The default tuning, a radius called three times: the second call starts the radius-built
/// programs' build, which elsewhere builds and runs on a thread of its own beside the caller;
/// on Oclgrind clpix starts no threads (before, the second call crashed it). Part of the one
/// test: Oclgrind is not safe for two test threads at once either.
fn repeated_blurs_at_one_radius_on_the_default_tuning() {
    let img = make_image(41, 23, 3, Content::Random, 11);
    let es = engines(&env_tuning(), true);
    for w in [1u32, 3] {
        for border in [Border::Clamp, Border::Reflect, Border::Wrap] {
            let blur = GaussianBlur::new(w).border(border);
            same_as_cpu(&es, &format!("default tuning w = {w} {border:?}"), |e| {
                e.gaussian_blur(img.view(), &blur)
            });
        }
    }
    for e in &es {
        e.wait_for_builds();
    }
}

#[test]
fn every_operation_and_variant_on_small_inputs() {
    let images = [
        make_image(37, 23, 12, Content::Random, 1),
        make_image(1, 1, 0, Content::White, 2),
        make_image(16, 9, 0, Content::Constant([200, 10, 90, 255]), 3),
    ];
    let cpu = Engine::cpu();

    // Every operation with the default kernels, in both layouts.
    let defaults = engines(&tuned(|_| {}), true);
    for img in &images {
        let expected = every_op(&cpu, img.view().into());
        for e in &defaults {
            assert_eq!(
                every_op(e, img.view().into()),
                expected,
                "{} {img:?}",
                e.backend()
            );
        }
    }

    // Every other pixel format through the reductions, in both layouts; the exact f32 sums also
    // as devices without f64 run them (a 128-bit integer a work-item).
    let no_f64 = engines(
        &tuned(|t| t.build_options = "-D CLPIX_FSTATS_NO_F64".into()),
        true,
    );
    for img in &images {
        let expected = every_format_op(&cpu, img);
        for e in defaults.iter().chain(&no_f64) {
            assert_eq!(every_format_op(e, img), expected, "{} {img:?}", e.backend());
        }
    }
    // The same on images the engines hold (their parts read in place, the kept pixels' values
    // gathered on the device).
    let expected = every_format_op(&cpu, &images[0]);
    for e in &defaults {
        let got = every_format_op_held(e, &images[0]);
        assert_eq!(got, expected, "held, {}", e.backend());
    }

    let img = &images[0];
    let strip = make_image(70, 40, 4, Content::FewLevels, 4);
    // NVIDIA's scan-order compaction, emulated: the warp kernels, the single pass, and the
    // single pass with its fallback forced (odd tiles' words never trusted, no re-reads).
    let warp = tuned(|t| {
        t.emulate_nvidia = true;
        t.compact_relocate = Some(CompactRelocation::Warp);
    });
    let lookback = tuned(|t| {
        t.emulate_nvidia = true;
        t.compact_relocate = Some(CompactRelocation::LookBack);
    });
    let fallback = tuned(|t| {
        t.emulate_nvidia = true;
        t.compact_relocate = Some(CompactRelocation::LookBack);
        t.build_options = "-D CLPIX_LOOKBACK_SPIN=0 -D CLPIX_LOOKBACK_DISTRUST_ODD=1".into();
    });
    // The portable passes: the single pass with its fallback forced, and the two passes (the
    // single pass as it runs is the default above, on devices with 64-bit atomics).
    let group_fallback = tuned(|t| {
        t.compact_relocate = Some(CompactRelocation::GroupLookBack);
        t.scan = Some(ScanKernel::LookBack);
        t.build_options = "-D CLPIX_LOOKBACK_SPIN=0 -D CLPIX_LOOKBACK_DISTRUST_ODD=1".into();
    });
    let two_passes = tuned(|t| {
        t.compact_relocate = Some(CompactRelocation::Group);
        t.scan = Some(ScanKernel::ThreePass);
    });
    let words: Vec<u32> = (0..20_000u32)
        .map(|i| i.wrapping_mul(2_654_435_761))
        .collect();
    for (name, tuning) in [
        ("warp", warp),
        ("lookback", lookback),
        ("fallback", fallback),
        ("group-lookback fallback", group_fallback),
        ("group", two_passes),
    ] {
        let es = engines(&tuning, false);
        for im in [img, &strip] {
            same_as_cpu(&es, name, |e| {
                e.compact(im.view(), 300, clpix::CompactOrder::ScanOrder)
            });
            same_as_cpu(&es, name, |e| {
                e.compacted_image(im.view(), 300, CompactOrder::ScanOrder)
            });
        }
        if name.starts_with("group") {
            same_as_cpu(&es, name, |e| e.exclusive_scan(&words));
        }
    }

    // The sorted compaction's scatter in half tiles (as for 32 KiB of local memory).
    let half = engines(&tuned(|t| t.max_local_memory = Some(32 << 10)), false);
    for im in [img, &strip] {
        same_as_cpu(&half, "half tiles", |e| {
            e.compact(im.view(), 100, clpix::CompactOrder::LuminanceDescending)
        });
        same_as_cpu(&half, "half tiles", |e| {
            e.compacted_image(im.view(), 100, CompactOrder::LuminanceDescending)
        });
    }

    // Work-groups of 128 and 64 (devices that allow no more): the streaming kernels, the
    // histograms, both compactions and the scan (the blur's tiles take 128: tests/variants.rs).
    for wg in [128, 64] {
        let es = engines(&tuned(|t| t.max_work_group = Some(wg)), false);
        let label = format!("work-groups of {wg}");
        for im in [img, &strip] {
            same_as_cpu(&es, &label, |e| e.luminance_stats(im.view()));
            same_as_cpu(&es, &label, |e| {
                e.extremes(im.view(), clpix::Extreme::Brightest, 4, 2.0)
            });
            same_as_cpu(&es, &label, |e| {
                e.extremes(im.view(), clpix::Extreme::Darkest, 4, 2.0)
            });
            same_as_cpu(&es, &label, |e| e.histogram_rgba(im.view()));
            same_as_cpu(&es, &label, |e| {
                e.compact(im.view(), 300, clpix::CompactOrder::ScanOrder)
            });
            same_as_cpu(&es, &label, |e| {
                e.compact(im.view(), 100, clpix::CompactOrder::LuminanceDescending)
            });
        }
        same_as_cpu(&es, &label, |e| e.exclusive_scan(&words));
        same_as_cpu(&es, &label, |e| e.array_stats(&words));
    }

    // The per-radius blur kernels at small radii, and NVIDIA's variants of them emulated (the
    // register kernel's byte permutes, the tensor-core passes).
    let blurs = [
        (BlurKernel::Registers, false, [1u32, 2]),
        (BlurKernel::Registers, true, [1, 2]),
        (BlurKernel::Band, false, [3, 8]),
        (BlurKernel::Radius, false, [1, 5]),
        (BlurKernel::Radius, true, [2, 8]),
        (BlurKernel::TwoPass, false, [4, 7]),
    ];
    for (kernel, nvidia, radii) in blurs {
        let tuning = tuned(|t| {
            t.blur.kernel = Some(kernel);
            t.emulate_nvidia = nvidia;
            match kernel {
                BlurKernel::Registers => t.blur.permute = Some(nvidia),
                _ if nvidia => t.blur.tensor = Some((true, true)),
                _ => {}
            }
        });
        let es = engines(&tuning, false);
        for (w, border) in radii.into_iter().zip([Border::Reflect, Border::Zero]) {
            let blur = GaussianBlur::new(w).border(border);
            let label = format!("{kernel:?} NVIDIA's variant {nvidia} w = {w}");
            same_as_cpu(&es, &label, |e| e.gaussian_blur(img.view(), &blur));
        }
    }

    // The f32 blur in one kernel (the tile kernel forced beyond its default radius; the
    // register kernel) and in two passes.
    let f = image::Rgba32FImage::from_fn(45, 37, |x, y| {
        image::Rgba([x as f32 / 3.0, y as f32 * 1e-3, -(x as f32), 1.0])
    });
    for kernel in [
        BlurF32Kernel::Tile,
        BlurF32Kernel::Registers,
        BlurF32Kernel::Band,
        BlurF32Kernel::Radius,
        BlurF32Kernel::TwoPass,
    ] {
        let es = engines(&tuned(|t| t.blur.f32_kernel = Some(kernel)), false);
        for (w, border) in [(2u32, Border::Zero), (9, Border::Reflect)] {
            let blur = GaussianBlur::new(w).border(border);
            let label = format!("f32 {kernel:?} w = {w}");
            same_as_cpu(&es, &label, |e| e.gaussian_blur_f32(&f, &blur));
        }
    }

    repeated_blurs_at_one_radius_on_the_default_tuning();

    // Windows of held images: crops and an assembly from tiles (the device's rectangle copies).
    let es = engines(&tuned(|_| {}), true);
    let mono = image::ImageBuffer::from_fn(29, 23, |x, y| image::Luma([(x * 977 + y * 31) as u16]));
    same_as_cpu(&es, "crop and assemble", |e| {
        let held = e.upload(&mono)?;
        let (a, b) = (e.crop(&held, 0, 0, 10, 23)?, e.crop(&held, 10, 0, 19, 23)?);
        let c = e.crop(&held, 3, 4, 20, 11)?;
        let whole = e.assemble(&[[&a, &b]])?;
        Ok((e.download(&c)?, e.download(&whole)?))
    });

    // What the simulator reported, if it wrote a log.
    if let Some(log) = std::env::var_os("OCLGRIND_LOG") {
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        assert!(
            text.trim().is_empty(),
            "Oclgrind reported errors:\n{}",
            text.chars().take(4000).collect::<String>()
        );
    }
}
