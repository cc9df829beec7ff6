//! The engines the tests run: every OpenCL device in both kernel layouts, tuned as the test run
//! asks (`CLPIX_TEST_PROGRAMS`, `CLPIX_TEST_TUNING`), with the known-answer probes off; and the
//! refusals a device may give by its documented limits.

use clpix::Engine;

/// Every OpenCL device as an engine, plus each device with the other kernel layout forced (so
/// that the GPU-style kernels are tested on PoCL in CI, and the CPU-style ones on GPUs). With `CLPIX_REQUIRE_OPENCL=1` (set in CI) or `CI` set, a
/// machine with no usable OpenCL device fails the test instead of skipping it.
pub fn opencl_engines() -> Vec<Engine> {
    opencl_engines_with(None)
}

/// [`opencl_engines`] with `tuning` injected.
pub fn opencl_engines_tuned(tuning: &clpix::tuning::Tuning) -> Vec<Engine> {
    opencl_engines_with(Some(tuning.clone()))
}

/// `tuning` (else the environment's) as the tests run it: the kernels themselves, without the
/// known-answer probes (`trust_drivers=1`: a family that answered its probe wrong would answer
/// from the CPU, and its kernels would go untested; tests/distrust.rs tests the probes), and
/// with the test run's `CLPIX_TEST_PROGRAMS` (`kernel` or `file`, the `programs` setting)
/// applied where set: CI runs the kernel variants with one kernel a program on PoCL, as GPUs
/// build them. Test harness only; the library reads no such variable.
fn with_test_programs(tuning: Option<clpix::tuning::Tuning>) -> Option<clpix::tuning::Tuning> {
    let mut t = tuning.unwrap_or_else(env_tuning);
    t.set("trust_drivers", "1").expect("a setting");
    if let Ok(v) = std::env::var("CLPIX_TEST_PROGRAMS")
        && !v.trim().is_empty()
    {
        t.set("programs", &v)
            .expect("CLPIX_TEST_PROGRAMS: kernel or file");
    }
    // CLPIX_TEST_TUNING="name=value,...": any settings, for a run on a smaller device's shapes
    // (`max_work_group=32`: the groups a driver may allow a heavy kernel).
    if let Ok(v) = std::env::var("CLPIX_TEST_TUNING") {
        for pair in v.split(',').filter(|p| !p.trim().is_empty()) {
            let (name, value) = pair
                .split_once('=')
                .expect("CLPIX_TEST_TUNING: name=value,...");
            t.set(name.trim(), value.trim())
                .expect("CLPIX_TEST_TUNING: a setting");
        }
    }
    Some(t)
}

/// The OpenCL devices the tests run on: every device, or with `CLPIX_DEVICE` set only those it
/// names, so that a machine's GPUs are tested one process each: an index in `clpix::devices()`
/// or a name substring as `Engine::new` reads it, except that a substring here takes every
/// device whose name holds it (`Engine::new` the best of them), and a comma-separated list of
/// either. A query that names no device fails the test run.
pub fn test_devices() -> clpix::Result<Vec<clpix::DeviceInfo>> {
    let all = clpix::devices()?;
    let Ok(queries) = std::env::var("CLPIX_DEVICE") else {
        return Ok(all);
    };
    let mut out: Vec<clpix::DeviceInfo> = Vec::new();
    for q in queries.split(',').map(str::trim).filter(|q| !q.is_empty()) {
        let found: Vec<&clpix::DeviceInfo> = match q.parse::<usize>() {
            Ok(i) => all.get(i).into_iter().collect(),
            Err(_) => all
                .iter()
                .filter(|d| d.name.to_lowercase().contains(&q.to_lowercase()))
                .collect(),
        };
        assert!(
            !found.is_empty(),
            "CLPIX_DEVICE={queries}: {q} names no device"
        );
        for d in found {
            if !out.contains(d) {
                out.push(d.clone());
            }
        }
    }
    Ok(out)
}

/// [`test_devices`], failing the test where OpenCL is required (`CLPIX_REQUIRE_OPENCL=1`, set
/// in CI, or `CI` set) and none can be listed; elsewhere none, said on stderr.
pub fn required_devices() -> Vec<clpix::DeviceInfo> {
    let required = std::env::var("CLPIX_REQUIRE_OPENCL").is_ok_and(|v| v != "0")
        || std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "false");
    match test_devices() {
        Ok(list) => list,
        Err(e) if required => panic!("OpenCL is required here (CLPIX_REQUIRE_OPENCL/CI) but: {e}"),
        Err(e) => {
            eprintln!("SKIPPING OpenCL parity: {e}");
            Vec::new()
        }
    }
}

fn opencl_engines_with(tuning: Option<clpix::tuning::Tuning>) -> Vec<Engine> {
    let tuning = with_test_programs(tuning);
    required_devices()
        .iter()
        .flat_map(|d| {
            let other = if d.device_type == clpix::DeviceType::Cpu {
                clpix::KernelLayout::Coalesced
            } else {
                clpix::KernelLayout::Contiguous
            };
            let forced = clpix::EngineConfig {
                layout: other,
                tuning: tuning.clone(),
                ..Default::default()
            };
            let auto = clpix::EngineConfig {
                tuning: tuning.clone(),
                ..Default::default()
            };
            let first = match tuning {
                None => Engine::with_device(d),
                Some(_) => Engine::with_device_config(d, &auto),
            };
            [
                first.unwrap_or_else(|e| panic!("{}: {e}", d.name)),
                Engine::with_device_config(d, &forced)
                    .unwrap_or_else(|e| panic!("{}: {e}", d.name)),
            ]
        })
        .collect()
}

/// Every OpenCL device in the coalesced (GPU) layout: PoCL runs the GPU kernels too.
pub fn gpu_layout_engines() -> Vec<Engine> {
    gpu_layout_engines_where(None, |_| true)
}

/// [`gpu_layout_engines`] with `tuning` injected (`None`: the environment's).
pub fn gpu_layout_engines_tuned(tuning: &clpix::tuning::Tuning) -> Vec<Engine> {
    gpu_layout_engines_where(Some(tuning.clone()), |_| true)
}

/// [`gpu_layout_engines`] of the devices `keep` takes, with `tuning` injected (`None`: the
/// environment's).
pub fn gpu_layout_engines_where(
    tuning: Option<clpix::tuning::Tuning>,
    keep: impl Fn(&clpix::DeviceInfo) -> bool,
) -> Vec<Engine> {
    let config = clpix::EngineConfig {
        layout: clpix::KernelLayout::Coalesced,
        tuning: with_test_programs(tuning),
        ..Default::default()
    };
    required_devices()
        .iter()
        .filter(|d| keep(d))
        .map(|d| Engine::with_device_config(d, &config).expect("device opens"))
        .collect()
}

/// Engines whose single buffers are capped small, so every image is processed in many parts.
pub fn capped_opencl_engines(cap: u64) -> Vec<Engine> {
    match test_devices() {
        Ok(list) => list
            .iter()
            .map(|d| {
                let config = clpix::EngineConfig {
                    max_buffer_bytes: Some(cap),
                    tuning: with_test_programs(None),
                    ..Default::default()
                };
                Engine::with_device_config(d, &config).unwrap_or_else(|e| panic!("{}: {e}", d.name))
            })
            .collect(),
        Err(_) => Vec::new(),
    }
}

/// An owned test image, possibly with padded rows.
/// Whether `err` is a refusal a device may give by its documented limits, where a test forces
/// a variant it cannot run: a single pass without 64-bit atomics (`InvalidTuning`), the f32
/// blur where f32 denormals are flushed, the band and radius-built blur kernels on rusticl 22
/// (`Unsupported`). Each refusal has a test of its own (tests/variants, blur_parity,
/// tests/distrust).
pub fn refused_there(err: &clpix::Error) -> bool {
    match err {
        clpix::Error::InvalidTuning { expected, .. } => expected.contains("int64"),
        clpix::Error::DeviceLimit { what, .. } => what.contains("denormals"),
        clpix::Error::Unsupported { what, .. } => what.contains("blur kernels"),
        _ => false,
    }
}

/// The tuning the environment gives (the program cache's settings, where a run sets them: CI's
/// Intel run keeps every program it builds there, so that each is compiled once), for tests to
/// force their variants on.
pub fn env_tuning() -> clpix::tuning::Tuning {
    clpix::tuning::Tuning::from_env().expect("the environment's tuning")
}

/// Tuning that builds NVIDIA's program variants with their PTX intrinsics (warp ballots,
/// tensor products) emulated, so that their logic runs on any device.
pub fn emulated() -> clpix::tuning::Tuning {
    let mut t = env_tuning();
    t.emulate_nvidia = true;
    t
}

/// The CPU engine, every OpenCL device, and every OpenCL device with single buffers capped to
/// 4 KiB (images in parts of a few rows), each made once for the test binary: where held
/// images are tested.
pub fn cpu_opencl_and_capped_engines() -> impl Iterator<Item = &'static Engine> {
    static CPU: std::sync::OnceLock<Engine> = std::sync::OnceLock::new();
    static WHOLE: super::SharedEngines = super::SharedEngines::new();
    static CAPPED: super::SharedEngines = super::SharedEngines::new();
    std::iter::once(CPU.get_or_init(Engine::cpu))
        .chain(WHOLE.get(opencl_engines))
        .chain(CAPPED.get(|| capped_opencl_engines(4096)))
}
