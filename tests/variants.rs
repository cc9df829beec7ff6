//! Kernel variants and settings given to engines through [`clpix::Tuning`] (what the
//! `CLPIX_*` tuning variables set), each against the CPU path, exactly, on every OpenCL device:
//! NVIDIA's warp compaction forced (refused elsewhere), emulated, and as the single pass with
//! its fallback forced; the sorted compaction's radix scatter in half tiles, as for 32 KiB of
//! local memory; the blur's tensor-core passes emulated; every per-radius GPU blur kernel and
//! shape; a per-radius program that does not build (the blur falls back); transfers through
//! small staging slots. One binary: each test gives its engines their own tuning, so no test
//! sets a process-wide variable.

mod common;

use clpix::{BlurBand, BlurKernel, Border, CompactOrder, CompactRelocation, Engine, Error};
use clpix::{BlurF32Kernel, GaussianBlur, ScanKernel, Staging, Tuning};
use common::*;

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
    let expected = Engine::cpu().compact(img.view(), 400).unwrap();
    let tuning = relocate(Tuning::default(), CompactRelocation::Warp);
    let engines = gpu_layout_engines_tuned(&tuning);
    assert!(!engines.is_empty() || std::env::var_os("CLPIX_REQUIRE_OPENCL").is_none());
    for e in &engines {
        let got = e.compact(img.view(), 400);
        native_or_refused(e, got, &expected, "CLPIX_COMPACT_RELOCATE", "hits");
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
        Err(Error::InvalidEnvironment { var: v, .. }) => {
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
    let native = relocate(Tuning::default(), CompactRelocation::LookBack);
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

/// The f32 blur on GPUs: the tile kernel (`blur_fused_f32`, forced up to w = 16), the
/// register kernel built per radius with 4, 2 and 1 channels and 2 columns a work-item, the two
/// passes built per radius with 8 and 16 rows a work-item of the vertical pass, the generic two
/// passes, and the tile kernel with 32 KiB of local memory (w = 16 then takes the two passes),
/// against the CPU, bit for bit, on groups cut by the image's edges, every border, specials
/// (NaN, infinities, denormals, signed zeros) in the data.
#[test]
fn f32_blur_kernels_match_cpu() {
    let kernel = |k: BlurF32Kernel, channels: Option<u32>| {
        let mut t = Tuning::default();
        t.blur.f32_kernel = Some(k);
        t.blur.f32_channels = channels;
        t
    };
    let mut small = kernel(BlurF32Kernel::Tile, None);
    small.max_local_memory = Some(32 << 10);
    let cpu = Engine::cpu();
    let mut s = 5u64;
    let specials = [f32::NAN, f32::INFINITY, -0.0, f32::from_bits(1000), -3.0e38];
    for (name, tuning) in [
        ("tile", kernel(BlurF32Kernel::Tile, None)),
        ("registers", kernel(BlurF32Kernel::Registers, None)),
        ("registers 1", kernel(BlurF32Kernel::Registers, Some(1))),
        ("registers 2", kernel(BlurF32Kernel::Registers, Some(2))),
        ("registers 2 columns", {
            let mut t = kernel(BlurF32Kernel::Registers, None);
            t.blur.f32_columns = Some(2);
            t
        }),
        ("band", kernel(BlurF32Kernel::Band, None)),
        ("radius", kernel(BlurF32Kernel::Radius, None)),
        ("radius, vertical in columns", {
            let mut t = kernel(BlurF32Kernel::Radius, None);
            t.blur.f32_vrows = Some(0);
            t
        }),
        ("radius, vertical in columns of 16 rows", {
            let mut t = kernel(BlurF32Kernel::Radius, None);
            t.blur.f32_vrows = Some(0);
            t.blur.f32_rows = Some(16);
            t
        }),
        ("radius, vertical in blocks of 4 rows", {
            let mut t = kernel(BlurF32Kernel::Radius, None);
            t.blur.f32_vrows = Some(4);
            t
        }),
        ("radius, vertical in blocks of 16 rows", {
            let mut t = kernel(BlurF32Kernel::Radius, None);
            t.blur.f32_vrows = Some(16);
            t
        }),
        ("two-pass", kernel(BlurF32Kernel::TwoPass, None)),
        ("32 KiB", small),
    ] {
        let engines = gpu_layout_engines_tuned(&tuning);
        for (w, h, r, border) in [
            (1u32, 1u32, 1u32, Border::Clamp),
            (33, 31, 2, Border::Reflect),
            (70, 65, 8, Border::Zero),
            (31, 97, 16, Border::Wrap),
            (64, 40, 15, Border::Zero),
            (5, 200, 3, Border::Reflect),
            (131, 90, 25, Border::Clamp),
            (300, 21, 20, Border::Reflect),
        ] {
            let img = image::Rgba32FImage::from_fn(w, h, |_, _| {
                let mut px = [0f32; 4];
                for v in &mut px {
                    let x = splitmix(&mut s);
                    *v = match x % 50 {
                        k @ 0..=4 => specials[k as usize],
                        _ => (x >> 20) as u16 as f32 / 311.0 - 100.0,
                    };
                }
                image::Rgba(px)
            });
            let blur = GaussianBlur::new(r).border(border);
            let expected = cpu.gaussian_blur_f32(&img, &blur).unwrap();
            // Bit for bit; a NaN is any NaN (NVIDIA's fma returns the canonical one).
            let bits = |i: &image::Rgba32FImage| {
                let bits = |v: &f32| {
                    if v.is_nan() {
                        f32::NAN.to_bits()
                    } else {
                        v.to_bits()
                    }
                };
                i.as_raw().iter().map(bits).collect::<Vec<_>>()
            };
            for e in &engines {
                let got = e.gaussian_blur_f32(&img, &blur).unwrap();
                assert!(
                    bits(&got) == bits(&expected),
                    "{name} {} {w}x{h} w {r} {border:?}",
                    e.backend()
                );
            }
        }
    }
}

/// The forced fallback of the single passes: no re-reads, odd tiles' words never trusted.
const FALLBACK: &str = "-D CLPIX_LOOKBACK_SPIN=0 -D CLPIX_LOOKBACK_DISTRUST_ODD=1";

/// The portable single-pass scan-order compaction (`compact_lookback_group`: a range a
/// work-group, the decoupled look-back with fallback), the default on GPUs without NVIDIA's
/// warp kernels where the device has 64-bit atomics: as it runs, with its fallback forced, and
/// the two passes it replaced (`group`), all against the CPU path.
#[test]
fn portable_single_pass_compaction_matches_cpu() {
    let single = relocate(Tuning::default(), CompactRelocation::GroupLookBack);
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
    let two = relocate(Tuning::default(), CompactRelocation::Group);
    check_warp_compaction(&gpu_layout_engines_tuned(&two), |_| false, "group");
    // Fewer rounds a tile: 32 KiB of local memory (2 rounds, 1 with indices), and work-groups
    // of 64 (tiles of 2,048 pixels).
    let mut small = relocate(Tuning::default(), CompactRelocation::GroupLookBack);
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
    let mut single = Tuning::default();
    single.scan = Some(ScanKernel::LookBack);
    let mut fallback = single.clone();
    fallback.build_options = FALLBACK.into();
    let mut three = Tuning::default();
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
                        Err(Error::InvalidEnvironment {
                            var: "CLPIX_SCAN",
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
    let mut tuning = Tuning::default();
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
        let expected_hits = cpu.compact_sorted(img.view(), t).unwrap();
        let expected_image = cpu
            .compacted_image(img.view(), t, CompactOrder::LuminanceDescending)
            .unwrap();
        for e in &engines {
            let hits = e.compact_sorted(img.view(), t).unwrap();
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
        let mut tuning = Tuning::default();
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
    let mut tuning = Tuning::default();
    tuning.max_local_memory = Some(16 << 10);
    let (explicit, fallback) = limited_engines(&tuning);
    let img = &images[0];
    let expected = cpu.compact_sorted(img.view(), 100).unwrap();
    for e in &explicit {
        match e.compact_sorted(img.view(), 100) {
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
        assert_eq!(e.brightest(img.view()), cpu.brightest(img.view()));
    }
    for e in &fallback {
        assert_eq!(e.compact_sorted(img.view(), 100).unwrap(), expected);
    }
}

/// The radius-built passes on the tensor cores, their intrinsics emulated, on every device.
#[test]
fn emulated_tensor_passes_match_cpu() {
    let mut tuning = emulated();
    tuning.blur.kernel = Some(BlurKernel::Radius);
    tuning.blur.tensor = Some((true, true));
    let engines = gpu_layout_engines_tuned(&tuning);
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

/// A kernel shape: the blur kernels forced and the settings beside them.
fn shape(kernel: BlurKernel, set: impl Fn(&mut Tuning)) -> Tuning {
    let mut t = Tuning::default();
    t.blur.kernel = Some(kernel);
    set(&mut t);
    t
}

/// The GPU blur kernels built per radius: the fused kernel (built for radii 1 to 16; by
/// default GPUs take it up to 2) with one and two blocks a work-item of one, two or four
/// adjacent columns, with shifts and masks and with NVIDIA's byte permute (emulated); the band kernel (1 to
/// 32; by default GPUs take it from 3 to 20) in its default shapes and two more; the
/// radius-specialised two passes (1 to 32) by default and with 1, 2 and 4 channels a work-item
/// of the vertical pass and 4 and 8 pixels a work-item of the horizontal pass, and with the
/// vertical pass as an unrolled ring of rows and in blocks of 8 rows, each at a few radii that
/// cover its shapes.
#[test]
fn per_radius_blur_kernels_match_cpu() {
    let cpu = Engine::cpu();
    // The fused kernel with one and two blocks of one column a work-item, one block of 4
    // adjacent columns and two of 2; the band kernel in its default
    // shapes and in two more (256 work-items with one channel each; 32 rows a step, which the
    // local memory of a GPU holds only halved at w = 25); the radius passes in their default
    // shapes and with 1, 2 and 4 channels a work-item of the vertical pass and 4 or 8 pixels a
    // work-item of the horizontal pass ((2, 8) and (4, 8) are no default; (1, 4) is one only
    // for 9 <= w <= 12), those with the ring of rows in registers for the vertical pass where
    // NVIDIA GPUs would take the tensor cores (their own test: blur_tensor_emulated). Each radius is a program of its own to build (seconds for the unrolled
    // kernels, on each driver): each shape takes a few radii that cover it (the smallest, either
    // side of the defaults' switches, the target's 8 and 25, the largest). About 46 programs:
    // with 70, the GPU machine's NVIDIA and PoCL 5 drivers took over 250 s to build them.
    let registers: &[u32] = &[1, 2, 3, 16];
    let adjacent: &[u32] = &[1, 2, 4];
    let band: &[u32] = &[1, 3, 8, 9, 13, 20, 32];
    let band_more: &[u32] = &[3, 8, 25];
    let radius: &[u32] = &[1, 8, 9, 13, 25, 32];
    let radius_more: &[u32] = &[1, 13, 25];
    let passes = |c: u32, p: u32| {
        shape(BlurKernel::Radius, move |t| {
            t.blur.channels = Some(c);
            t.blur.hpixels = Some(p);
            t.blur.tensor = Some((false, false));
        })
    };
    // The vertical pass as a ring of rows unrolled, and in blocks of 8 rows with 1 channel.
    let vertical = |c: u32, rows: u32| {
        shape(BlurKernel::Radius, move |t| {
            t.blur.channels = Some(c);
            t.blur.vrows = Some(rows);
            t.blur.tensor = Some((false, false));
        })
    };
    let band_shape = |s: &str| {
        let b = BlurBand::parse(s).expect("a band shape");
        shape(BlurKernel::Band, move |t| t.blur.band = Some(b))
    };
    let blocks = |columns: u32, adjacent: u32, permute: bool| {
        shape(BlurKernel::Registers, move |t| {
            t.blur.columns = Some(columns);
            t.blur.adjacent = Some(adjacent);
            t.blur.permute = Some(permute);
            t.emulate_nvidia = permute;
        })
    };
    let shapes: [(Tuning, &[u32]); 16] = [
        (blocks(1, 1, false), registers),
        (blocks(2, 1, false), registers),
        (blocks(1, 4, false), adjacent),
        (blocks(2, 2, false), adjacent),
        // NVIDIA's byte permute, emulated: the accumulators (w = 1) and the ring of rows.
        (blocks(1, 4, true), adjacent),
        (blocks(2, 1, true), &[2, 3]),
        (blocks(1, 2, true), &[2]),
        (shape(BlurKernel::Band, |_| {}), band),
        (band_shape("256,1,4,16"), band_more),
        (band_shape("128,2,8,32,64"), band_more),
        (shape(BlurKernel::Radius, |_| {}), radius),
        (passes(1, 4), radius_more),
        (passes(2, 8), radius_more),
        (passes(4, 8), radius_more),
        (vertical(2, 0), radius_more),
        (vertical(1, 8), radius_more),
    ];
    for (tuning, radii) in shapes {
        let engines = gpu_layout_engines_tuned(&tuning);
        let engines: Vec<&Engine> = engines.iter().collect();
        let label = format!("{:?}", tuning.blur);
        // Two radii of the shape's for the fixed image below: the largest and a middle one.
        let fixed = [radii[radii.len() - 1], radii[radii.len() / 2]];
        random_blurs_match_cpu(&engines, radii, 16, &label);
        // Rows of two horizontal tiles, strided, several strips of rows.
        let img = make_image(1100, 270, 3, Content::Random, 11);
        for (radius, border) in [(fixed[0], Border::Reflect), (fixed[1], Border::Zero)] {
            let blur = GaussianBlur::new(radius).border(border);
            let expected = cpu.gaussian_blur(img.view(), &blur).unwrap();
            for e in &engines {
                let got = e.gaussian_blur(img.view(), &blur).unwrap();
                assert!(got == expected, "{label} w = {radius}");
            }
        }
    }
}

/// The register blur's byte permutes forced, not emulated: on an NVIDIA GPU they give the CPU
/// path's bits; on any other device the call is an error that names the variable.
#[test]
fn forced_byte_permutes_run_on_nvidia_and_are_refused_elsewhere() {
    let img = make_image(300, 90, 1, Content::Random, 12);
    let tuning = shape(BlurKernel::Registers, |t| t.blur.permute = Some(true));
    let engines = gpu_layout_engines_tuned(&tuning);
    assert!(!engines.is_empty() || std::env::var_os("CLPIX_REQUIRE_OPENCL").is_none());
    for w in [1u32, 2, 3, 4] {
        let blur = GaussianBlur::new(w).border(Border::Reflect);
        let expected = Engine::cpu().gaussian_blur(img.view(), &blur).unwrap();
        for e in &engines {
            let got = e.gaussian_blur(img.view(), &blur);
            native_or_refused(e, got, &expected, "CLPIX_BLUR_PERMUTE", &format!("w = {w}"));
        }
    }
}

/// A compiler that cannot build the per-radius programs: the variant section of a copy of the
/// kernels made invalid. The blur falls back to the generic two passes, with the same bits.
#[test]
fn per_radius_programs_that_do_not_build_fall_back() {
    let cpu = Engine::cpu();
    let dir = kernel_dir_copy("broken-variant", |name, text| {
        if name == "blur_radius.cl" {
            let at = text.find("#ifdef BLUR_W").unwrap() + "#ifdef BLUR_W".len();
            text.insert_str(at, "\nthis does not compile;\n");
        }
    });
    let mut tuning = Tuning::default();
    tuning.kernel_dir = Some(dir.clone());
    let img = make_image(150, 40, 0, Content::Random, 7);
    for e in gpu_layout_engines_tuned(&tuning) {
        // The fused kernel (2), the band kernel (3, 9) and the radius-built passes (20) by
        // default.
        // Each radius three times: the first two calls run the generic passes (the second
        // starts the radius-built programs' builds, which fail in the background); the third
        // tries them and falls back.
        for radius in [2, 3, 9, 20] {
            let blur = GaussianBlur::new(radius);
            let expected = cpu.gaussian_blur(img.view(), &blur).unwrap();
            for _ in 0..3 {
                let got = e.gaussian_blur(img.view(), &blur);
                assert!(
                    got.as_ref().ok() == Some(&expected),
                    "{}: {:?}",
                    e.backend(),
                    got.err()
                );
                e.wait_for_builds();
            }
        }
        // Only the generic programs were made ready.
        assert!(
            e.programs().iter().all(|p| !p.variant.contains("BLUR_W")),
            "{:?}",
            e.programs()
        );
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// Large transfers through pinned staging slots forced to 64 KiB, so that images cross many
/// slots: round trips, blur, compaction, histogram and scan.
#[test]
fn staged_transfers_match_cpu() {
    let mut tuning = Tuning::default();
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
