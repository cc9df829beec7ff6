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
//! The children set `CLPIX_HOST_WHILE_BUILDING=0`, so that each first call waits for its
//! builds and the rows time them; by default `Engine::new()` answers small first calls from the
//! CPU instead while it builds (as the demo runs).
//!
//! `cargo run --release --example cold_start [-- --device NAME] [--rounds N]`

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

/// In a child: "<engine ms> <first call ms> <backend>". `blur_w11_after_w3` times the first
/// blur at a radius never used before in a process that has already run another blur.
fn child(op: &str) -> Result<(), Box<dyn std::error::Error>> {
    let img = image();
    let t = Instant::now();
    let e = Engine::new()?;
    let engine_ms = t.elapsed().as_secs_f64() * 1e3;
    let op = match op {
        "blur_w11_after_w3" => {
            e.gaussian_blur(&img, &GaussianBlur::new(3))?;
            e.wait_for_builds();
            "blur_w11"
        }
        op => op,
    };
    let t = Instant::now();
    run_op(&e, op, &img)?;
    let op_ms = t.elapsed().as_secs_f64() * 1e3;
    println!("{engine_ms:.1} {op_ms:.1} {}", e.backend());
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
    (device, list): (Option<&str>, bool),
    clpix_dir: &Path,
    driver_dir: Option<&Path>,
) -> Result<(f64, f64, String), Box<dyn std::error::Error>> {
    let mut cmd = Command::new(std::env::current_exe()?);
    cmd.args(["--child", op])
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
    let mut it = text.trim().splitn(3, ' ');
    let engine: f64 = it.next().unwrap_or("0").parse()?;
    let first: f64 = it.next().unwrap_or("0").parse()?;
    Ok((engine, first, it.next().unwrap_or("").to_string()))
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
        return child(op);
    }
    let root = std::env::temp_dir().join(format!("clpix-cold-{}", std::process::id()));
    let run = (cli.device.as_deref(), cli.programs);
    // rows: engine, then each op; columns: cold, clpix warm, warm.
    let all: Vec<&str> = OPS.iter().chain(EXTRA).copied().collect();
    let mut cells: Vec<[Vec<f64>; 3]> = vec![Default::default(); all.len() + 1];
    let mut backend = String::new();
    for round in 0..cli.rounds {
        for (i, op) in all.iter().enumerate() {
            // Cold: fresh folders for both caches.
            let c = fresh(&root, &format!("cold-clpix-{round}-{i}"));
            let d = fresh(&root, &format!("cold-driver-{round}-{i}"));
            let (e0, f0, b) = measure(op, run, &c, Some(&d))?;
            backend = b;
            // clpix warm: its cache filled above; the driver's fresh (CUDA: off).
            let d2 = fresh(&root, &format!("cold-driver2-{round}-{i}"));
            let (e1, f1, _) = match backend.contains("NVIDIA") {
                true => measure(op, run, &c, None)?,
                false => measure(op, run, &c, Some(&d2))?,
            };
            // Warm: both filled (the first run filled the driver's folder too).
            let (e2, f2, _) = measure(op, run, &c, Some(&d))?;
            for (k, (e, f)) in [(e0, f0), (e1, f1), (e2, f2)].into_iter().enumerate() {
                cells[0][k].push(e);
                cells[i + 1][k].push(f);
            }
        }
    }
    let _ = std::fs::remove_dir_all(&root);
    println!("{backend}; 960×540 RGBA8; ms, {} rounds", cli.rounds);
    println!("| first call of | cold | clpix cache warm | warm |");
    println!("|---|---|---|---|");
    let names = std::iter::once("Engine::new").chain(OPS.iter().copied());
    for (name, row) in names.zip(&cells[..=OPS.len()]) {
        println!(
            "| {name} | {} | {} | {} |",
            range(&row[0]),
            range(&row[1]),
            range(&row[2])
        );
    }
    // Totals: the engine once and every operation's first call, per round.
    let mut totals = [Vec::new(), Vec::new(), Vec::new()];
    for r in 0..cli.rounds as usize {
        for (k, t) in totals.iter_mut().enumerate() {
            t.push(cells[..=OPS.len()].iter().map(|row| row[k][r]).sum::<f64>());
        }
    }
    println!(
        "| total (engine + every first call) | {} | {} | {} |",
        range(&totals[0]),
        range(&totals[1]),
        range(&totals[2])
    );
    for (name, row) in EXTRA.iter().zip(&cells[OPS.len() + 1..]) {
        let name = name.replace('_', " ");
        println!(
            "| {name}: {} | {} | {} | {} |",
            THREE.join(", "),
            range(&row[0]),
            range(&row[1]),
            range(&row[2])
        );
    }
    Ok(())
}
