//! First calls, as a user meets them: each operation's first call in a fresh process, on a
//! 960×540 image (the demo's size), under three conditions, as a table of milliseconds:
//!
//! - **cold**: nothing cached (a fresh `CLPIX_CACHE_DIR`, a fresh `POCL_CACHE_DIR`,
//!   `CUDA_CACHE_DISABLE=1`): a new machine, container or CI job;
//! - **clpix warm**: clpix's program cache filled by an earlier process, the driver's cold;
//! - **warm**: both filled.
//!
//! The engine row is `Engine::new()` (it builds the reduction program); each operation row is
//! its first call in a process that has made the engine and nothing else, but the last: the
//! first blur at w = 11 after a blur at w = 3 (and its background builds) in the same process.
//!
//! The last column is the part of each cold first call that the known-answer probes took (each
//! kernel family's first call on a device and driver compares a small input with the CPU: see
//! `Engine::driver_verdicts`), from clpix's `log` records.
//!
//! The children set `CLPIX_HOST_WHILE_BUILDING=0`, so that each first call waits for its
//! builds and the rows time them; by default `Engine::new()` answers small first calls from the
//! CPU instead while it builds (as the demo runs).
//!
//! `cargo run --release --example cold_start [-- --device NAME] [--rounds N] [--trust-drivers]`

use clap::Parser;
use clpix::{CompactOrder, Engine, GaussianBlur};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

/// Each operation's first call in fresh processes: everything cold, clpix's cache warm, all warm.
#[derive(Parser, Debug)]
#[command(name = "cold_start", version)]
struct Cli {
    /// The OpenCL device (index or part of its name; sets CLPIX_DEVICE).
    #[arg(long, value_name = "NAME")]
    device: Option<String>,
    /// Runs of each cell (the table shows the smallest and the largest).
    #[arg(long, default_value_t = 2)]
    rounds: u32,
    /// Also list, per operation and condition, the programs its process made ready (kernel,
    /// variant, origin, ms).
    #[arg(long)]
    programs: bool,
    /// Open the engines with the known-answer probes off (the `trust_drivers` setting), to
    /// compare with the default.
    #[arg(long)]
    trust_drivers: bool,
    /// Internal: time one operation's first call and print it.
    #[arg(long, hide = true)]
    child: Option<String>,
}

/// The operations timed, by name.
const OPS: &[&str] = &[
    "brightest",
    "luminance_stats",
    "histogram_rgba",
    "brightest_k",
    "compact",
    "compacted_image_sorted",
    "exclusive_scan",
    "blur_w2",
    "blur_w8",
    "blur_w25",
    "blur_f32_w4",
    "blur_w11_after_w3",
];

/// Rows after the totals: three operations' first calls (three programs) one after another,
/// and the same in three threads at once (whether the driver builds programs in parallel).
const EXTRA: &[&str] = &["three_serial", "three_parallel"];
const THREE: [&str; 3] = ["histogram_rgba", "compact", "blur_w2"];

fn image() -> image::RgbaImage {
    image::RgbaImage::from_fn(960, 540, |x, y| {
        let v = ((x * 7 + y * 13) ^ (x * y)) % 256;
        image::Rgba([v as u8, (x % 256) as u8, (y % 256) as u8, 255])
    })
}

fn run_op(e: &Engine, op: &str, img: &image::RgbaImage) -> clpix::Result<()> {
    match op {
        "three_serial" => THREE.iter().try_for_each(|op| run_op(e, op, img)),
        "three_parallel" => std::thread::scope(|s| {
            let threads: Vec<_> = THREE
                .iter()
                .map(|op| s.spawn(move || run_op(e, op, img)))
                .collect();
            threads
                .into_iter()
                .try_for_each(|t| t.join().unwrap_or(Ok(())))
        }),
        "brightest" => e.extreme(img, clpix::Extreme::Brightest).map(drop),
        "luminance_stats" => e.luminance_stats(img).map(drop),
        "histogram_rgba" => e.histogram_rgba(img).map(drop),
        "brightest_k" => e
            .extremes(img, clpix::Extreme::Brightest, 8, 20.0)
            .map(drop),
        "compact" => e
            .compact(img, 600, clpix::CompactOrder::ScanOrder)
            .map(drop),
        "compacted_image_sorted" => e
            .compacted_image(img, 600, CompactOrder::LuminanceDescending)
            .map(drop),
        "exclusive_scan" => {
            let words: Vec<u32> = img.pixels().map(|p| u32::from_le_bytes(p.0)).collect();
            e.exclusive_scan(&words).map(drop)
        }
        "blur_f32_w4" => {
            let f = image::Rgba32FImage::from_fn(img.width(), img.height(), |x, y| {
                image::Rgba(img.get_pixel(x, y).0.map(|c| c as f32 / 255.0))
            });
            e.gaussian_blur_f32(&f, &GaussianBlur::new(4)).map(drop)
        }
        blur => {
            let w: u32 = blur.trim_start_matches("blur_w").parse().unwrap_or(2);
            e.gaussian_blur(img, &GaussianBlur::new(w)).map(drop)
        }
    }
}

/// The known-answer probes' time in this process, in microseconds (from clpix's debug records).
static PROBE_MICROS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

struct ProbeTimes;

impl log::Log for ProbeTimes {
    fn enabled(&self, m: &log::Metadata<'_>) -> bool {
        m.target().starts_with("clpix")
    }
    fn log(&self, r: &log::Record<'_>) {
        let text = r.args().to_string();
        if !text.starts_with("clpix: known-answer probe") {
            return;
        }
        // "... in 12.3 ms: ..."
        let ms = text
            .split(" in ")
            .nth(1)
            .and_then(|t| t.split(" ms").next())
            .and_then(|t| t.parse::<f64>().ok())
            .unwrap_or(0.0);
        PROBE_MICROS.fetch_add((ms * 1e3) as u64, std::sync::atomic::Ordering::Relaxed);
    }
    fn flush(&self) {}
}

static PROBE_TIMES: ProbeTimes = ProbeTimes;

/// In a child: "<engine ms> <first call ms> <of which probes ms> <backend>". `blur_w11_after_w3` times the first
/// blur at a radius never used before in a process that has already run another blur.
fn child(op: &str, trusting: bool) -> Result<(), Box<dyn std::error::Error>> {
    if log::set_logger(&PROBE_TIMES).is_ok() {
        log::set_max_level(log::LevelFilter::Debug);
    }
    let img = image();
    let t = Instant::now();
    let e = match trusting {
        false => Engine::new()?,
        // As Engine::new() opens it (the device CLPIX_DEVICE names, answering from the CPU
        // while building), with the known-answer probes off.
        true => {
            let name = std::env::var("CLPIX_DEVICE")
                .unwrap_or_default()
                .to_lowercase();
            let d = clpix::devices()?
                .into_iter()
                .find(|d| {
                    format!("{} {}", d.platform, d.name)
                        .to_lowercase()
                        .contains(&name)
                })
                .ok_or("no such device")?;
            let mut tuning = clpix::tuning::Tuning::from_env()?;
            tuning.set("trust_drivers", "1")?;
            let config = clpix::EngineConfig {
                tuning: Some(tuning),
                cpu_fallback: true,
                ..Default::default()
            };
            Engine::with_device_config(&d, &config)?
        }
    };
    let engine_ms = t.elapsed().as_secs_f64() * 1e3;
    let op = match op {
        "blur_w11_after_w3" => {
            e.gaussian_blur(&img, &GaussianBlur::new(3))?;
            e.wait_for_builds();
            "blur_w11"
        }
        op => op,
    };
    PROBE_MICROS.store(0, std::sync::atomic::Ordering::Relaxed);
    let t = Instant::now();
    run_op(&e, op, &img)?;
    let op_ms = t.elapsed().as_secs_f64() * 1e3;
    let probe_ms = PROBE_MICROS.load(std::sync::atomic::Ordering::Relaxed) as f64 / 1e3;
    println!("{engine_ms:.1} {op_ms:.1} {probe_ms:.1} {}", e.backend());
    for p in e.programs() {
        eprintln!(
            "program {} {} {} {:?} {:.1} ms",
            p.program,
            p.kernel.unwrap_or("(every kernel)"),
            p.variant,
            p.origin,
            p.millis
        );
    }
    Ok(())
}

fn fresh(root: &Path, label: &str) -> PathBuf {
    let d = root.join(label);
    let _ = std::fs::remove_dir_all(&d);
    let _ = std::fs::create_dir_all(&d);
    d
}

/// Runs the child for `op` with the cache folders given; (engine ms, first call ms, backend).
/// `list`: print the programs the child made ready (`--programs`).
fn measure(
    op: &str,
    (device, list, trusting): (Option<&str>, bool, bool),
    clpix_dir: &Path,
    driver_dir: Option<&Path>,
) -> Result<(f64, f64, f64, String), Box<dyn std::error::Error>> {
    let mut cmd = Command::new(std::env::current_exe()?);
    cmd.args(["--child", op])
        .args(trusting.then_some("--trust-drivers"))
        .env("CLPIX_BACKEND", "opencl")
        .env("CLPIX_HOST_WHILE_BUILDING", "0")
        .env("CLPIX_CACHE_DIR", clpix_dir);
    if let Some(d) = device {
        cmd.env("CLPIX_DEVICE", d);
    }
    match driver_dir {
        Some(d) => {
            cmd.env("POCL_CACHE_DIR", d)
                .env("CUDA_CACHE_PATH", d)
                .env_remove("CUDA_CACHE_DISABLE");
        }
        None => {
            cmd.env("CUDA_CACHE_DISABLE", "1");
        }
    }
    let out = cmd.output()?;
    let text = String::from_utf8_lossy(&out.stdout);
    if !out.status.success() {
        return Err(format!("{op}: {}", String::from_utf8_lossy(&out.stderr)).into());
    }
    if list {
        let condition = match driver_dir {
            Some(_) => "driver cache on",
            None => "driver cache off",
        };
        for line in String::from_utf8_lossy(&out.stderr).lines() {
            if let Some(p) = line.strip_prefix("program ") {
                println!("  {op} ({condition}): {p}");
            }
        }
    }
    let mut it = text.trim().splitn(4, ' ');
    let engine: f64 = it.next().unwrap_or("0").parse()?;
    let first: f64 = it.next().unwrap_or("0").parse()?;
    let probes: f64 = it.next().unwrap_or("0").parse()?;
    Ok((engine, first, probes, it.next().unwrap_or("").to_string()))
}

fn range(v: &[f64]) -> String {
    let lo = v.iter().cloned().fold(f64::INFINITY, f64::min);
    let hi = v.iter().cloned().fold(0.0, f64::max);
    if hi - lo < 0.05 * hi.max(1.0) {
        format!("{lo:.1}")
    } else {
        format!("{lo:.1}–{hi:.1}")
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let cli = Cli::parse();
    if let Some(op) = &cli.child {
        return child(op, cli.trust_drivers);
    }
    let root = std::env::temp_dir().join(format!("clpix-cold-{}", std::process::id()));
    let run = (cli.device.as_deref(), cli.programs, cli.trust_drivers);
    // rows: engine, then each op; columns: cold, clpix warm, warm.
    let all: Vec<&str> = OPS.iter().chain(EXTRA).copied().collect();
    let mut cells: Vec<[Vec<f64>; 3]> = vec![Default::default(); all.len() + 1];
    // The probes' part of each cold first call.
    let mut probes: Vec<Vec<f64>> = vec![Vec::new(); all.len() + 1];
    let mut backend = String::new();
    for round in 0..cli.rounds {
        for (i, op) in all.iter().enumerate() {
            // Cold: fresh folders for both caches.
            let c = fresh(&root, &format!("cold-clpix-{round}-{i}"));
            let d = fresh(&root, &format!("cold-driver-{round}-{i}"));
            let (e0, f0, p0, b) = measure(op, run, &c, Some(&d))?;
            probes[i + 1].push(p0);
            probes[0].push(0.0);
            backend = b;
            // clpix warm: its cache filled above; the driver's fresh (CUDA: off).
            let d2 = fresh(&root, &format!("cold-driver2-{round}-{i}"));
            let (e1, f1, _, _) = match backend.contains("NVIDIA") {
                true => measure(op, run, &c, None)?,
                false => measure(op, run, &c, Some(&d2))?,
            };
            // Warm: both filled (the first run filled the driver's folder too).
            let (e2, f2, _, _) = measure(op, run, &c, Some(&d))?;
            for (k, (e, f)) in [(e0, f0), (e1, f1), (e2, f2)].into_iter().enumerate() {
                cells[0][k].push(e);
                cells[i + 1][k].push(f);
            }
        }
    }
    let _ = std::fs::remove_dir_all(&root);
    println!(
        "{backend}; 960×540 RGBA8; ms, {} rounds{}",
        cli.rounds,
        if cli.trust_drivers {
            "; known-answer probes off"
        } else {
            ""
        }
    );
    println!("| first call of | cold | clpix cache warm | warm | of cold: probes |");
    println!("|---|---|---|---|---|");
    let names = std::iter::once("Engine::new").chain(OPS.iter().copied());
    for ((name, row), p) in names.zip(&cells[..=OPS.len()]).zip(&probes) {
        println!(
            "| {name} | {} | {} | {} | {} |",
            range(&row[0]),
            range(&row[1]),
            range(&row[2]),
            range(p)
        );
    }
    // Totals: the engine once and every operation's first call, per round.
    let mut totals = [Vec::new(), Vec::new(), Vec::new()];
    for r in 0..cli.rounds as usize {
        for (k, t) in totals.iter_mut().enumerate() {
            t.push(cells[..=OPS.len()].iter().map(|row| row[k][r]).sum::<f64>());
        }
    }
    let probe_totals: Vec<f64> = (0..cli.rounds as usize)
        .map(|r| probes[..=OPS.len()].iter().map(|p| p[r]).sum())
        .collect();
    println!(
        "| total (engine + every first call) | {} | {} | {} | {} |",
        range(&totals[0]),
        range(&totals[1]),
        range(&totals[2]),
        range(&probe_totals)
    );
    for (name, row) in EXTRA.iter().zip(&cells[OPS.len() + 1..]) {
        let name = name.replace('_', " ");
        println!(
            "| {name}: {} | {} | {} | {} | |",
            THREE.join(", "),
            range(&row[0]),
            range(&row[1]),
            range(&row[2])
        );
    }
    Ok(())
}
