//! Kernel variants and settings given to engines through [`clpix::tuning::Tuning`] (what the
//! `CLPIX_*` tuning variables set), each against the CPU path, exactly, on every OpenCL device:
//! NVIDIA's warp compaction forced (refused elsewhere), emulated, and as the single pass with
//! its fallback forced; the sorted compaction's radix scatter in half tiles, as for 32 KiB of
//! local memory; the blur's tensor-core passes emulated; every per-radius GPU blur kernel and
//! shape; a per-radius program that does not build (the blur falls back); transfers through
//! small staging slots. One binary: each test gives its engines their own tuning, so no test
//! sets a process-wide variable.

#[path = "../common/mod.rs"]
mod common;

use clpix::GaussianBlur;
use clpix::tuning::{BlurBand, BlurKernel, CompactRelocation};
use clpix::tuning::{BlurF32Kernel, ScanKernel, Staging, Tuning};
use clpix::{Border, CompactOrder, Engine, Error};
use common::*;
mod blur;
mod blur_f32;

fn is_nvidia(e: &Engine) -> bool {
    e.device().is_some_and(|d| d.platform.contains("NVIDIA"))
}

fn relocate(mut t: Tuning, r: CompactRelocation) -> Tuning {
    t.compact_relocate = Some(r);
    t
}

/// NVIDIA's warp kernels forced: on an NVIDIA GPU they give the CPU path's result; on any
/// other device (without the emulated intrinsics) the call is an error that names the variable,
/// never a build by a compiler that does not know their PTX (PoCL 3.1 built it into wrong code,
/// PoCL 5 aborted).
#[test]
fn forced_warp_kernels_run_on_nvidia_and_are_refused_elsewhere() {
    let img = make_image(1024, 700, 0, Content::Random, 5);
    let expected = Engine::cpu()
        .compact(img.view(), 400, clpix::CompactOrder::ScanOrder)
        .unwrap();
    let tuning = relocate(env_tuning(), CompactRelocation::Warp);
    let engines = gpu_layout_engines_tuned(&tuning);
    assert!(!engines.is_empty() || std::env::var_os("CLPIX_REQUIRE_OPENCL").is_none());
    for e in &engines {
        let got = e.compact(img.view(), 400, clpix::CompactOrder::ScanOrder);
        native_or_refused(e, got, &expected, "compact_relocate", "hits");
    }
}

/// A call that forces one of NVIDIA's variants (`var`) without emulating it: on an NVIDIA GPU
/// its result is `expected`, on any other device an error naming `var`.
fn native_or_refused<T: PartialEq>(
    e: &Engine,
    got: Result<T, Error>,
    expected: &T,
    var: &str,
    what: &str,
) {
    match got {
        Ok(got) => {
            assert!(is_nvidia(e), "{}: ran {var}'s variant", e.backend());
            assert!(&got == expected, "{}: {what}", e.backend());
        }
        Err(Error::InvalidTuning { setting: v, .. }) => {
            assert!(!is_nvidia(e), "{}: refused", e.backend());
            assert_eq!(v, var);
        }
        Err(other) => panic!("{}: {other}", e.backend()),
    }
}

/// The warp relocation with its intrinsics emulated in local memory, on every device.
#[test]
fn emulated_warp_relocation_matches_cpu() {
    let tuning = relocate(emulated(), CompactRelocation::Warp);
    check_warp_compaction(&gpu_layout_engines_tuned(&tuning), |_| false, "emulated");
}

/// The single-pass scan-order compaction (a decoupled look-back with fallback): natively on
/// NVIDIA GPUs (refused elsewhere), then emulated on every device, first as it runs, then with
/// the words of odd tiles never trusted and no re-reads, so that the fallback (a group counting
/// a predecessor's tile itself) decides most offsets.
#[test]
fn single_pass_compaction_matches_cpu() {
    let native = relocate(env_tuning(), CompactRelocation::LookBack);
    check_warp_compaction(
        &gpu_layout_engines_tuned(&native),
        |e| !is_nvidia(e),
        "native",
    );
    let tuning = relocate(emulated(), CompactRelocation::LookBack);
    check_warp_compaction(&gpu_layout_engines_tuned(&tuning), |_| false, "emulated");
    let mut fallback = tuning;
    fallback.build_options = FALLBACK.into();
    check_warp_compaction(&gpu_layout_engines_tuned(&fallback), |_| false, "fallback");
}

/// The forced fallback of the single passes: no re-reads, odd tiles' words never trusted.
const FALLBACK: &str = "-D CLPIX_LOOKBACK_SPIN=0 -D CLPIX_LOOKBACK_DISTRUST_ODD=1";

/// The portable single-pass scan-order compaction (`compact_lookback_group`: a range a
/// work-group, the decoupled look-back with fallback), the default on GPUs without NVIDIA's
/// warp kernels where the device has 64-bit atomics: as it runs, with its fallback forced, and
/// the two passes it replaced (`group`), all against the CPU path.
#[test]
fn portable_single_pass_compaction_matches_cpu() {
    let single = relocate(env_tuning(), CompactRelocation::GroupLookBack);
    let needs_atomics = |e: &Engine| {
        !e.device()
            .is_some_and(|d| d.has_extension("cl_khr_int64_base_atomics"))
    };
    check_warp_compaction(
        &gpu_layout_engines_tuned(&single),
        needs_atomics,
        "group-lookback",
    );
    let mut fallback = single;
    fallback.build_options = FALLBACK.into();
    check_warp_compaction(
        &gpu_layout_engines_tuned(&fallback),
        needs_atomics,
        "fallback",
    );
    let two = relocate(env_tuning(), CompactRelocation::Group);
    check_warp_compaction(&gpu_layout_engines_tuned(&two), |_| false, "group");
    // Fewer rounds a tile: 32 KiB of local memory (2 rounds, 1 with indices), and work-groups
    // of 64 (tiles of 2,048 pixels).
    let mut small = relocate(env_tuning(), CompactRelocation::GroupLookBack);
    small.max_local_memory = Some(32 << 10);
    check_warp_compaction(&gpu_layout_engines_tuned(&small), needs_atomics, "32 KiB");
    small.max_work_group = Some(64);
    check_warp_compaction(
        &gpu_layout_engines_tuned(&small),
        needs_atomics,
        "64 work-items",
    );
}

/// The exclusive scan's kernels on GPUs: the single pass (`scan_lookback`) as it runs and with
/// its fallback forced, and the three passes, on lengths around the tile (8,192 elements with
/// 256 work-items) and sums that wrap, from host and device arrays.
#[test]
fn scan_kernels_match_a_sequential_scan() {
    let mut single = env_tuning();
    single.scan = Some(ScanKernel::LookBack);
    let mut fallback = single.clone();
    fallback.build_options = FALLBACK.into();
    let mut three = env_tuning();
    three.scan = Some(ScanKernel::ThreePass);
    let mut s = 11u64;
    let lens = [
        1usize,
        2,
        8191,
        8192,
        8193,
        3 * 8192 + 5,
        40 * 8192 - 1,
        300_001,
    ];
    for (name, tuning) in [
        ("lookback", single),
        ("fallback", fallback),
        ("three-pass", three),
    ] {
        for e in &gpu_layout_engines_tuned(&tuning) {
            for &n in &lens {
                let v: Vec<u32> = (0..n)
                    .map(|i| match i % 3 {
                        0 => u32::MAX - (splitmix(&mut s) as u32 & 0xff),
                        _ => splitmix(&mut s) as u32,
                    })
                    .collect();
                let mut expected = Vec::with_capacity(n);
                let mut run = 0u32;
                for &x in &v {
                    expected.push(run);
                    run = run.wrapping_add(x);
                }
                let host = e.exclusive_scan(&v);
                if name != "three-pass"
                    && !e
                        .device()
                        .is_some_and(|d| d.has_extension("cl_khr_int64_base_atomics"))
                {
                    assert!(matches!(
                        host,
                        Err(Error::InvalidTuning {
                            setting: "scan",
                            ..
                        })
                    ));
                    continue;
                }
                let host = host.unwrap_or_else(|err| panic!("{name} {}: {err}", e.backend()));
                assert!(host == expected, "{name} {} n {n}: host", e.backend());
                let a = e.upload_array(&v).unwrap();
                let d = e
                    .download_array(&e.exclusive_scan_device(&a).unwrap())
                    .unwrap();
                assert!(d == expected, "{name} {} n {n}: device", e.backend());
            }
        }
    }
}

/// The sorted compaction's radix scatter with half tiles (`RADIX_PER=8`), as built for GPUs
/// with 32 KiB of local memory.
#[test]
fn sorted_compaction_with_half_tiles_matches_cpu() {
    // 32 KiB of local memory (OpenCL's minimum): the host plans 8 pixels a work-item.
    let mut tuning = env_tuning();
    tuning.max_local_memory = Some(32 << 10);
    let engines = gpu_layout_engines_tuned(&tuning);
    let cpu = Engine::cpu();
    let cases = [
        (333, 77, Content::Random, 100),
        (4097, 1, Content::Random, 0),
        (64, 64, Content::Constant([10, 200, 30, 255]), 0),
        (1, 1, Content::White, 1022),
        (517, 300, Content::FewLevels, 400),
        (
            2048,
            9,
            Content::TwoColours([0, 0, 0, 255], [250, 250, 250, 255]),
            512,
        ),
    ];
    for (w, h, content, t) in cases {
        let img = make_image(w, h, 8, content, 7);
        let expected_hits = cpu
            .compact(img.view(), t, clpix::CompactOrder::LuminanceDescending)
            .unwrap();
        let expected_image = cpu
            .compacted_image(img.view(), t, CompactOrder::LuminanceDescending)
            .unwrap();
        for e in &engines {
            let hits = e
                .compact(img.view(), t, clpix::CompactOrder::LuminanceDescending)
                .unwrap();
            assert!(hits == expected_hits, "{} {w}×{h} t {t}: hits", e.backend());
            let image = e
                .compacted_image(img.view(), t, CompactOrder::LuminanceDescending)
                .unwrap();
            assert!(
                image == expected_image,
                "{} {w}×{h} t {t}: image",
                e.backend()
            );
        }
    }
}

/// Engines on every device in the GPU layout, planning with `tuning`'s smaller limits: as
/// asked (an explicit OpenCL engine) and answering from the CPU where a kernel does not fit.
fn limited_engines(tuning: &Tuning) -> (Vec<Engine>, Vec<Engine>) {
    let explicit = gpu_layout_engines_tuned(tuning);
    let fallback = explicit
        .iter()
        .filter_map(|e| e.device().cloned())
        .map(|d| {
            let config = clpix::EngineConfig {
                layout: clpix::KernelLayout::Coalesced,
                tuning: Some(tuning.clone()),
                cpu_fallback: true,
                ..Default::default()
            };
            Engine::with_device_config(&d, &config).unwrap()
        })
        .collect();
    (explicit, fallback)
}

/// Smaller devices, as the tuning's limits make this one (the plans and the launch checks read
/// them): work-groups of at most 128 or 64 and 32 KiB of local memory. Every operation gives
/// the CPU's bits where its kernels fit. The blur's tiles take 128 work-items: with 64, an
/// explicit engine's blur (but the register kernels', of 64) is a DeviceLimit error naming the
/// kernel, what it needed and the limit, and an engine with `cpu_fallback` answers from the
/// CPU. With 16 KiB of local
/// memory (below OpenCL's minimum) the sorted compaction's scatter does not fit: the same.
#[test]
fn smaller_devices_fit_or_say_why() {
    let images = [
        make_image(45, 31, 4, Content::Random, 11),
        make_image(300, 2, 0, Content::FewLevels, 12),
    ];
    let cpu = Engine::cpu();
    for (wg, local) in [(128usize, 32u64 << 10), (64, 32 << 10)] {
        let mut tuning = env_tuning();
        tuning.max_work_group = Some(wg);
        tuning.max_local_memory = Some(local);
        // The register kernel on the first call (not the generic passes while it builds).
        tuning.build_wait = true;
        let (explicit, fallback) = limited_engines(&tuning);
        for img in &images {
            let expected = every_op(&cpu, img.view().into());
            for e in &fallback {
                let got = every_op(e, img.view().into());
                assert!(got == expected, "{} wg {wg}: fallback", e.backend());
            }
            for e in &explicit {
                let got = every_op(e, img.view().into());
                let mut refused = 0;
                for (i, (g, x)) in got.iter().zip(&expected).enumerate() {
                    // The first four entries are the blurs: the register kernels (RGBA8 at
                    // radius 2, f32 at radius 4) take groups of 64, the others 128.
                    if wg < 128 && i < 4 && g != x {
                        assert!(
                            g.contains("Err(DeviceLimit")
                                && g.contains("kernel: \"blur/")
                                && g.contains("needed: 128")
                                && g.contains(&format!("limit: {wg}")),
                            "{} wg {wg}: op {i}: {}",
                            e.backend(),
                            &g[..g.len().min(300)]
                        );
                        refused += 1;
                    } else {
                        assert!(g == x, "{} wg {wg}: op {i}", e.backend());
                    }
                }
                assert_eq!(refused, if wg < 128 { 2 } else { 0 }, "{}", e.backend());
            }
        }
    }
    let mut tuning = env_tuning();
    tuning.max_local_memory = Some(16 << 10);
    let (explicit, fallback) = limited_engines(&tuning);
    let img = &images[0];
    let expected = cpu
        .compact(img.view(), 100, clpix::CompactOrder::LuminanceDescending)
        .unwrap();
    for e in &explicit {
        match e.compact(img.view(), 100, clpix::CompactOrder::LuminanceDescending) {
            Err(Error::DeviceLimit {
                kernel,
                what,
                needed,
                limit,
                ..
            }) => {
                assert!(kernel.starts_with("compact/radix_scatter"), "{kernel}");
                assert_eq!((what, limit), ("bytes of local memory", 16 << 10));
                assert!(needed > limit);
            }
            other => panic!("{}: {other:?}", e.backend()),
        }
        // Operations whose kernels fit still run.
        assert_eq!(
            e.extreme(img.view(), clpix::Extreme::Brightest),
            cpu.extreme(img.view(), clpix::Extreme::Brightest)
        );
    }
    for e in &fallback {
        assert_eq!(
            e.compact(img.view(), 100, clpix::CompactOrder::LuminanceDescending)
                .unwrap(),
            expected
        );
    }
}

/// Large transfers through pinned staging slots forced to 64 KiB, so that images cross many
/// slots: round trips, blur, compaction, histogram and scan.
#[test]
fn staged_transfers_match_cpu() {
    let mut tuning = env_tuning();
    tuning.staging = Staging::SlotKib(64);
    let engines = opencl_engines_tuned(&tuning);
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
        let expected_hits = cpu
            .compact(img.view(), 400, clpix::CompactOrder::ScanOrder)
            .unwrap();
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
                e.compact(img.view(), 400, clpix::CompactOrder::ScanOrder)
                    .unwrap()
                    == expected_hits,
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
