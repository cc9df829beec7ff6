//! First calls of an automatic engine: a small call whose programs are not built yet is answered
//! from the CPU path while they build on a thread of the engine's own (issue 28), with the same
//! bits; a large call, or an engine asked for by device, waits for its builds and runs on the
//! device.

mod common;

use clpix::tuning::{ProgramCache, Tuning};
use clpix::{CompactOrder, Engine, EngineConfig, GaussianBlur};
use common::{Content, every_op, make_image};

/// An engine on `d` that answers from the CPU when its kernels fail, as `Engine::new` does,
/// with calls of up to `limit` pixels answered from the CPU while their programs build, and no
/// program cache (every program is built).
fn automatic(d: &clpix::DeviceInfo, limit: u64) -> Engine {
    automatic_cached(d, limit, ProgramCache::Off, None)
}

/// [`automatic`] with the program cache `cache` in `dir`.
fn automatic_cached(
    d: &clpix::DeviceInfo,
    limit: u64,
    cache: ProgramCache,
    dir: Option<&std::path::Path>,
) -> Engine {
    let mut tuning = Tuning::default();
    tuning.host_while_building = Some(limit);
    tuning.cache = cache;
    tuning.cache_dir = dir.map(|d| d.to_path_buf());
    let config = EngineConfig {
        tuning: Some(tuning),
        cpu_fallback: true,
        ..Default::default()
    };
    Engine::with_device_config(d, &config).unwrap_or_else(|e| panic!("{}: {e}", d.name))
}

/// Oclgrind and rusticl take no threads of clpix's own: there every call waits for its builds.
fn defers(d: &clpix::DeviceInfo) -> bool {
    !d.platform.contains("Oclgrind") && d.platform != "rusticl"
}

/// Blurs `img` on `e`, checks the result against `want`, and says whether a kernel ran.
fn blur_ran_a_kernel(
    e: &Engine,
    img: &common::TestImage,
    blur: &GaussianBlur,
    want: &image::RgbaImage,
) -> bool {
    assert_eq!(e.gaussian_blur(img.view(), blur).ok().as_ref(), Some(want));
    e.last_kernel_time().is_some()
}

#[test]
fn small_first_calls_answer_from_the_cpu_while_their_programs_build() {
    let cpu = Engine::cpu();
    let img = make_image(97, 61, 8, Content::Random, 28);
    let blur = GaussianBlur::new(3);
    for d in common::required_devices() {
        let engine = automatic(&d, 1 << 20);
        let want = cpu.gaussian_blur(img.view(), &blur).expect("cpu blur");
        let first = engine.gaussian_blur(img.view(), &blur);
        assert_eq!(first.as_ref().ok(), Some(&want), "{}: first blur", d.name);
        assert_eq!(
            engine.last_kernel_time().is_none(),
            defers(&d),
            "{}: the first blur ran on {}",
            d.name,
            if defers(&d) { "the device" } else { "the CPU" }
        );
        // Every operation, round after round, equals the CPU; the programs build meanwhile.
        let reference = every_op(&cpu, img.view().into());
        let mut on_device = false;
        for round in 0..40 {
            assert_eq!(
                every_op(&engine, img.view().into()),
                reference,
                "{}: round {round}",
                d.name
            );
            engine.wait_for_builds();
            let blurred = engine.gaussian_blur(img.view(), &blur).expect("blur");
            assert_eq!(blurred, want, "{}: round {round}", d.name);
            let blurred_on_device = engine.last_kernel_time().is_some();
            let stats = engine.luminance_stats(img.view()).expect("stats");
            assert_eq!(stats, cpu.luminance_stats(img.view()).expect("stats"));
            let sorted = engine.compacted_image(img.view(), 300, CompactOrder::LuminanceDescending);
            let want_sorted =
                cpu.compacted_image(img.view(), 300, CompactOrder::LuminanceDescending);
            assert_eq!(sorted.ok(), want_sorted.ok(), "{}: round {round}", d.name);
            if blurred_on_device {
                on_device = true;
                break;
            }
        }
        assert!(on_device, "{}: the calls never reached the device", d.name);
        let built = engine.programs();
        assert!(
            built.iter().any(|p| p.program == "blur"),
            "{}: no blur program built: {built:?}",
            d.name
        );
    }
}

#[test]
fn large_calls_and_engines_asked_for_by_device_wait_for_their_programs() {
    let cpu = Engine::cpu();
    let img = make_image(64, 40, 0, Content::Gradient, 7);
    let blur = GaussianBlur::new(2);
    let want = cpu.gaussian_blur(img.view(), &blur).expect("cpu blur");
    for d in common::required_devices() {
        // 2,560 pixels, over a limit of 2,559: built on the caller's path.
        let large = automatic(&d, 64 * 40 - 1);
        assert!(
            blur_ran_a_kernel(&large, &img, &blur, &want),
            "{}: large call",
            d.name
        );
        // A limit of 0: every call waits.
        let off = automatic(&d, 0);
        assert!(
            blur_ran_a_kernel(&off, &img, &blur, &want),
            "{}: limit 0",
            d.name
        );
        // An engine asked for by device never answers from the CPU.
        let explicit = Engine::with_device(&d).expect("device opens");
        assert!(
            blur_ran_a_kernel(&explicit, &img, &blur, &want),
            "{}: explicit",
            d.name
        );
    }
}

#[test]
fn an_engine_dropped_with_builds_queued_waits_only_for_the_one_in_progress() {
    let img = make_image(50, 30, 0, Content::Random, 3);
    for d in common::required_devices() {
        let engine = automatic(&d, 1 << 20);
        // Several first calls queue several programs; the drop forgets those not started.
        let cpu = Engine::cpu();
        assert_eq!(
            engine.histogram_rgba(img.view()).ok(),
            cpu.histogram_rgba(img.view()).ok()
        );
        assert_eq!(
            engine.exclusive_scan(&[3, 1, 4, 1, 5]).ok(),
            Some(vec![0, 3, 4, 8, 9])
        );
        assert_eq!(
            engine.gaussian_blur(img.view(), &GaussianBlur::new(5)).ok(),
            cpu.gaussian_blur(img.view(), &GaussianBlur::new(5)).ok()
        );
        drop(engine);
    }
}

#[test]
fn a_program_in_the_persistent_cache_loads_on_the_callers_path() {
    let img = make_image(40, 20, 0, Content::FewLevels, 11);
    let blur = GaussianBlur::new(4);
    let want = Engine::cpu()
        .gaussian_blur(img.view(), &blur)
        .expect("cpu blur");
    for d in common::required_devices().into_iter().filter(defers) {
        let dir = std::env::temp_dir().join(format!("clpix-first-calls-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let engine =
            |dir: &std::path::Path| automatic_cached(&d, 1 << 20, ProgramCache::All, Some(dir));
        // The first engine answers from the CPU until every program the blur needs (one a
        // kernel on GPUs) has been built, and stored, off the caller's path.
        let first = engine(&dir);
        assert_eq!(
            first.gaussian_blur(img.view(), &blur).ok(),
            Some(want.clone())
        );
        assert!(first.last_kernel_time().is_none(), "{}: built", d.name);
        let mut rounds = 0;
        while first.last_kernel_time().is_none() {
            first.wait_for_builds();
            assert_eq!(
                first.gaussian_blur(img.view(), &blur).ok(),
                Some(want.clone())
            );
            rounds += 1;
            assert!(rounds < 20, "{}: the blur never reached the device", d.name);
        }
        let first_verdicts = first.driver_verdicts();
        drop(first);
        let second = engine(&dir);
        assert_eq!(
            second.gaussian_blur(img.view(), &blur).ok(),
            Some(want.clone())
        );
        assert!(
            second.last_kernel_time().is_some(),
            "{}: the cached program was not loaded: {:?}; verdicts {:?}, first engine's {:?}",
            d.name,
            second.programs(),
            second.driver_verdicts(),
            first_verdicts
        );
        assert!(
            second
                .programs()
                .iter()
                .any(|p| p.program == "blur" && p.origin == clpix::ProgramOrigin::Cache)
        );
        drop(second);
        let _ = std::fs::remove_dir_all(&dir);
    }
}

#[test]
fn device_inputs_and_results_answered_from_the_cpu_stay_usable() {
    let cpu = Engine::cpu();
    let img = make_image(83, 29, 4, Content::Random, 5);
    let blur = GaussianBlur::new(6);
    let words: Vec<u32> = (0..3000u32)
        .map(|i| i.wrapping_mul(2_654_435_761))
        .collect();
    for d in common::required_devices() {
        let engine = automatic(&d, 1 << 20);
        let dev = engine.upload(img.view()).expect("upload");
        assert_eq!(
            every_op(&engine, (&dev).into()),
            every_op(&cpu, img.view().into()),
            "{}: device input",
            d.name
        );
        // Results that stay on the engine, whichever path made them, feed the next call.
        let blurred = engine.gaussian_blur_device(&dev, &blur).expect("blur");
        let want = cpu.gaussian_blur(img.view(), &blur).expect("cpu blur");
        assert_eq!(engine.download(&blurred).ok(), Some(want.clone()));
        assert_eq!(
            engine.luminance_stats(&blurred).ok(),
            cpu.luminance_stats(&want).ok(),
            "{}",
            d.name
        );
        let array = engine.upload_array(&words).expect("upload array");
        let scanned = engine.exclusive_scan_device(&array).expect("scan");
        let again = engine.exclusive_scan_device(&scanned).expect("scan again");
        let want_once = cpu.exclusive_scan(&words).expect("cpu scan");
        let want_twice = cpu.exclusive_scan(&want_once).expect("cpu scan");
        assert_eq!(engine.download_array(&again).ok(), Some(want_twice));
        engine.wait_for_builds();
    }
}
