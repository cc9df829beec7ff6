//! Distrust of drivers: a kernel family that answers its known-answer probe wrong (provoked here
//! by a kernel made wrong on purpose, read through the `kernel_dir` setting) costs the user a
//! warning and the CPU's answer, never a wrong result; the families that answer right keep
//! running on the device; with `trust_drivers=1` the wrong kernel's answer comes through (so
//! the probe is what stood in its way); a verdict is kept in the program cache for the next
//! engine.

mod common;

use clpix::tuning::Tuning;
use clpix::{Engine, Extreme};
use std::sync::Mutex;

/// The warnings logged in this process.
static WARNINGS: Mutex<Vec<String>> = Mutex::new(Vec::new());

struct Capture;

impl log::Log for Capture {
    fn enabled(&self, m: &log::Metadata<'_>) -> bool {
        m.level() <= log::Level::Warn
    }
    fn log(&self, r: &log::Record<'_>) {
        if self.enabled(r.metadata()) {
            WARNINGS.lock().unwrap().push(r.args().to_string());
        }
    }
    fn flush(&self) {}
}

static CAPTURE: Capture = Capture;

fn capture_warnings() {
    if log::set_logger(&CAPTURE).is_ok() {
        log::set_max_level(log::LevelFilter::Warn);
    }
}

/// A copy of the kernels whose brightest pixel is the wrong one of a tie's neighbours: the
/// reduction's keys take the index with its lowest bit flipped.
fn wrong_reduce_dir(label: &str) -> std::path::PathBuf {
    common::kernel_dir_copy(label, |name, text| {
        if name == "reduce/reduce.cl" {
            let right = "return ((ulong)l << 32) | (ulong)(~index); }";
            assert!(text.contains(right), "reduce.cl's make_key has moved");
            *text = text.replace(right, "return ((ulong)l << 32) | (ulong)(~(index ^ 1u)); }");
        }
    })
}

/// Images where the brightest pixel's neighbour matters: noise, and one bright pixel.
fn images() -> Vec<image::RgbaImage> {
    let mut seed = 7u32;
    let mut noise = || {
        seed = seed.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
        (seed >> 8).to_le_bytes()
    };
    let mut v = vec![image::RgbaImage::from_fn(97, 45, |_, _| {
        image::Rgba(noise())
    })];
    let mut one = image::RgbaImage::from_pixel(64, 64, image::Rgba([10, 10, 10, 255]));
    one.put_pixel(21, 30, image::Rgba([255, 255, 255, 255]));
    v.push(one);
    v
}

/// Every device in both kernel layouts (where the driver allows both) with `tuning` as given:
/// the test harness's engines trust their drivers (they test the kernels), these do not.
fn engines(tuning: &Tuning) -> Vec<Engine> {
    let mut v = Vec::new();
    for d in common::test_devices().unwrap_or_default() {
        for layout in [clpix::KernelLayout::Auto, clpix::KernelLayout::Coalesced] {
            let config = clpix::EngineConfig {
                layout,
                tuning: Some(tuning.clone()),
                ..Default::default()
            };
            v.push(Engine::with_device_config(&d, &config).expect("the device opens"));
        }
    }
    if std::env::var("CLPIX_REQUIRE_OPENCL").is_ok_and(|v| v != "0") {
        assert!(!v.is_empty(), "OpenCL is required here");
    }
    v
}

fn tuned(dir: &std::path::Path, extra: &[(&str, &str)]) -> Tuning {
    let mut t = Tuning::from_env().expect("the environment's tuning");
    t.set("kernel_dir", dir.to_str().unwrap()).unwrap();
    for (k, v) in extra {
        t.set(k, v).unwrap();
    }
    t
}

#[test]
fn a_kernel_made_wrong_costs_a_warning_and_the_cpu_answer() {
    capture_warnings();
    let dir = wrong_reduce_dir("distrust");
    let cache = std::env::temp_dir().join(format!("clpix-distrust-cache-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&cache);
    let t = tuned(
        &dir,
        &[("cache", "all"), ("cache_dir", cache.to_str().unwrap())],
    );
    let cpu = Engine::cpu();
    let engines = engines(&t);
    for e in &engines {
        for img in images() {
            assert_eq!(
                e.extreme(&img, Extreme::Brightest).unwrap(),
                cpu.extreme(&img, Extreme::Brightest).unwrap(),
                "{}",
                e.backend()
            );
            assert_eq!(
                e.luminance_stats(&img).unwrap(),
                cpu.luminance_stats(&img).unwrap(),
                "{}",
                e.backend()
            );
            assert_eq!(
                e.histogram_luminance(&img).unwrap(),
                cpu.histogram_luminance(&img).unwrap()
            );
        }
        let verdicts = e.driver_verdicts();
        let reduce = verdicts.iter().find(|v| v.operation == "reduce/brightest");
        assert!(
            reduce.is_some_and(|v| !v.trusted && v.detail.is_some()),
            "{}: {verdicts:?}",
            e.backend()
        );
        // Other operations, of the family and of others, answered right and stay on the device.
        for trusted in ["reduce/luminance_stats", "histogram/histogram_luminance"] {
            assert!(
                verdicts.iter().any(|v| v.operation == trusted && v.trusted),
                "{}: {trusted}: {verdicts:?}",
                e.backend()
            );
        }
    }
    let warnings = WARNINGS.lock().unwrap().clone();
    for d in common::test_devices().unwrap_or_default() {
        let says = format!(
            "the reduce/brightest kernels answered wrong on {} ({}",
            d.name, d.platform
        );
        assert!(
            warnings.iter().any(|w| w.contains(&says)),
            "no warning naming {}: {warnings:?}",
            d.name
        );
    }

    // The verdict is kept in the program cache: a new engine on the same kernels distrusts
    // them at its first call without a probe of its own, and says so.
    if let Some(d) = common::test_devices()
        .ok()
        .and_then(|l| l.into_iter().next())
    {
        let config = clpix::EngineConfig {
            tuning: Some(t.clone()),
            ..Default::default()
        };
        let again = Engine::with_device_config(&d, &config).unwrap();
        let img = &images()[1];
        assert_eq!(
            again.extreme(img, Extreme::Brightest).unwrap(),
            cpu.extreme(img, Extreme::Brightest).unwrap()
        );
        assert!(
            again
                .driver_verdicts()
                .iter()
                .any(|v| v.operation == "reduce/brightest" && !v.trusted),
            "{:?}",
            again.driver_verdicts()
        );
    }
    let _ = std::fs::remove_dir_all(&cache);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn trusting_the_driver_lets_the_wrong_kernel_answer() {
    // The same wrong kernels with the probes off: the answer is wrong, so the test above
    // passes because of the probe, not by chance.
    let dir = wrong_reduce_dir("trusted");
    let t = tuned(&dir, &[("trust_drivers", "1"), ("cache", "off")]);
    let cpu = Engine::cpu();
    let img = &images()[1];
    for e in engines(&t) {
        assert_ne!(
            e.extreme(img, Extreme::Brightest).unwrap(),
            cpu.extreme(img, Extreme::Brightest).unwrap(),
            "{}",
            e.backend()
        );
        assert!(e.driver_verdicts().is_empty());
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn right_kernels_are_trusted_and_answer_on_the_device() {
    let img = &images()[0];
    for e in engines(&Tuning::from_env().unwrap()) {
        e.extreme(img, Extreme::Brightest).unwrap();
        assert!(e.last_kernel_time().is_some(), "{}", e.backend());
        let v = e.driver_verdicts();
        assert!(
            v.iter()
                .any(|v| v.operation == "reduce/brightest" && v.trusted),
            "{}: {v:?}",
            e.backend()
        );
    }
}

#[test]
fn a_driver_that_stops_long_loops_refuses_the_contiguous_layout_by_name() {
    // rusticl on llvmpipe stops a work-item's loops after 65,535 iterations: the engine asks
    // every driver it does not know when it opens, and the contiguous layout (a long range a
    // work-item) is then an error that says why and what to use; the automatic layout works
    // (compact_parity's long arrays and scans run there).
    for d in common::test_devices().unwrap_or_default() {
        let config = clpix::EngineConfig {
            layout: clpix::KernelLayout::Contiguous,
            ..Default::default()
        };
        match Engine::with_device_config(&d, &config) {
            Ok(e) => {
                let n = 300_007usize;
                let data: Vec<u32> = (0..n as u32)
                    .map(|i| i.wrapping_mul(2_654_435_761))
                    .collect();
                assert_eq!(
                    e.array_stats(&data).unwrap(),
                    Engine::cpu().array_stats(&data).unwrap()
                );
            }
            Err(e) => {
                assert!(
                    matches!(e, clpix::Error::Unsupported { .. })
                        && e.to_string().contains("stops a work-item's loops")
                        && e.to_string().contains("KernelLayout::Auto"),
                    "{}: {e}",
                    d.name
                );
                assert!(d.platform.contains("rusticl"), "{}: {e}", d.platform);
            }
        }
    }
}
