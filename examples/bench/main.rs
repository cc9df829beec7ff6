//! Prints a table of measured speeds: every operation on every backend (rayon and each OpenCL
//! device), median wall time, Gpix/s and GB/s, kernel-only time from profiling events (device
//! image input) and end to end (host image, upload included).
//!
//! `cargo run --release --example bench -- [--size 4096] [--reps 15] [--ops brightest,histogram_rgba]
//!  [--backends cpu,opencl] [--device NAME] [--tune blur.kernel=band] [--out table.md]`

use clap::{CommandFactory, Parser, ValueEnum};
use clpix::{Engine, ImageInput};
use std::path::PathBuf;
use std::time::{Duration, Instant};
mod blobs;
mod cases;
mod formats;
use cases::*;

/// Prints a table of measured speeds: every operation on every backend (rayon and each OpenCL
/// device), median wall time, Gpix/s and GB/s, kernel-only time from profiling events and end to
/// end (upload included). Markdown rows on stdout, and in --out.
#[derive(Parser, Debug)]
#[command(name = "bench", version)]
pub struct Cli {
    /// The side of the square test images, in pixels (the array operations take size² u32).
    #[arg(long, default_value_t = 4096, value_parser = clap::value_parser!(u32).range(1..))]
    pub size: u32,
    /// Timed runs per operation and backend (after one warm-up); the median is shown.
    #[arg(long, default_value_t = 15, value_parser = clap::value_parser!(u32).range(1..))]
    pub reps: u32,
    /// Only these operations, comma separated (a name runs all its image contents); without it,
    /// every operation but the extra blur radii (blur_w1, blur_w3, …, blur_w64), which run only
    /// when named.
    #[arg(long, value_delimiter = ',', value_name = "OP,...")]
    pub ops: Option<Vec<String>>,
    /// The backends to measure, comma separated: the CPU (rayon) and every OpenCL device
    /// (default: cpu,opencl).
    #[arg(
        long,
        value_enum,
        value_delimiter = ',',
        default_values = ["cpu", "opencl"],
        hide_default_value = true,
        value_name = "BACKEND,...",
        ignore_case = true
    )]
    pub backends: Vec<BackendArg>,
    /// Only the OpenCL devices whose name contains NAME (ignoring case).
    #[arg(long, value_name = "NAME")]
    pub device: Option<String>,
    /// A tuning setting for the OpenCL engines, `NAME=VALUE` (repeatable; the names are
    /// `clpix::tuning::SETTINGS`, such as `blur.kernel=band` or `compact_relocate=lookback`):
    /// to measure a kernel variant. The environment's user variables apply first.
    #[arg(long, value_name = "NAME=VALUE")]
    pub tune: Vec<String>,
    /// Also writes the table (Markdown) to this file.
    #[arg(long, value_name = "PATH")]
    pub out: Option<PathBuf>,
}

/// `--backends`: a backend kind.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum BackendArg {
    /// The rayon path
    Cpu,
    /// Every OpenCL device (or those --device names)
    Opencl,
}

/// Every name `--ops` accepts.
pub fn op_names() -> Vec<&'static str> {
    let mut names: Vec<&'static str> = cases()
        .iter()
        .chain(radius_cases().iter())
        .map(|c| c.name)
        .chain(array_ops().iter().map(|o| o.name))
        .chain([
            "formats",
            "format_blur",
            "format_compact",
            "format_held",
            "blobs",
        ])
        .collect();
    names.dedup();
    names
}

fn image(size: u32, content: Content) -> image::RgbaImage {
    if content == Content::Spots {
        return image::RgbaImage::from_fn(size, size, |x, y| {
            let spot = (x % 256).abs_diff(128) <= 2 && (y % 256).abs_diff(128) <= 2;
            image::Rgba(if spot { [255; 4] } else { [0, 0, 0, 255] })
        });
    }
    let mut s = 0x1234_5678_9abc_def0u64;
    let mut img = image::RgbaImage::new(size, size);
    for p in img.as_mut().chunks_exact_mut(8) {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        p.copy_from_slice(&match content {
            Content::Random => s.to_le_bytes(),
            // (Spots returned above.)
            Content::Constant | Content::Spots => [90, 140, 200, 255, 90, 140, 200, 255],
        });
    }
    img
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn time(
    e: &Engine,
    reps: usize,
    mut f: impl FnMut() -> clpix::Result<()>,
) -> clpix::Result<Duration> {
    f()?; // warm-up: program build, first-enqueue compilation, page faults
    f()?; // the second blur at a radius starts its radius-built programs' builds
    e.wait_for_builds(); // which run in the background
    f()?;
    let mut t = Vec::with_capacity(reps);
    for _ in 0..reps {
        let s = Instant::now();
        f()?;
        t.push(s.elapsed());
    }
    Ok(median(t))
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let cli = Cli::parse();
    let known = op_names();
    if let Some(unknown) = cli
        .ops
        .iter()
        .flatten()
        .find(|n| !known.contains(&n.as_str()))
    {
        Cli::command()
            .error(
                clap::error::ErrorKind::InvalidValue,
                format!(
                    "unknown operation {unknown:?} in --ops; the operations: {}",
                    known.join(", ")
                ),
            )
            .exit();
    }
    let size = cli.size;
    let reps = cli.reps as usize;
    let ops = cli.ops;

    let mut tuning = clpix::tuning::Tuning::from_env()?;
    for t in &cli.tune {
        let Some((name, value)) = t.split_once('=') else {
            return Err(format!("--tune {t}: NAME=VALUE").into());
        };
        tuning.set(name.trim(), value)?;
    }
    let config = clpix::EngineConfig {
        tuning: Some(tuning),
        ..Default::default()
    };
    let mut engines = Vec::new();
    if cli.backends.contains(&BackendArg::Cpu) {
        engines.push(Engine::cpu());
    }
    if cli.backends.contains(&BackendArg::Opencl) {
        let only = cli.device.as_ref().map(|s| s.to_lowercase());
        for d in clpix::devices().unwrap_or_default() {
            if only
                .as_ref()
                .is_some_and(|o| !d.name.to_lowercase().contains(o))
            {
                continue;
            }
            match Engine::with_device_config(&d, &config) {
                Ok(e) => engines.push(e),
                Err(e) => eprintln!("skipping {}: {e}", d.name),
            }
        }
    }
    let mut lines = vec![
        format!("size {size}×{size} RGBA8, median of {reps} runs"),
        String::new(),
        "| operation | content | backend | median | Gpix/s | GB/s | kernel only | end to end (with upload) |".into(),
        "|---|---|---|---|---|---|---|---|".into(),
    ];
    println!("{}", lines[0]);
    let pixels = size as f64 * size as f64;
    let named = |name: &str| ops.as_ref().is_some_and(|o| o.iter().any(|n| n == name));
    let selected = cases()
        .into_iter()
        .filter(|c| ops.is_none() || named(c.name))
        .chain(radius_cases().into_iter().filter(|c| named(c.name)));
    for case in selected {
        let img = image(size, case.content);
        for e in &engines {
            let is_cl = e.device().is_some();
            let name = match e.device() {
                Some(d) => format!("OpenCL {}", d.name),
                None => format!("rayon {} threads", rayon::current_num_threads()),
            };
            let result = (|| -> clpix::Result<String> {
                let dev = e.upload(&img)?;
                let wall = time(e, reps, || (case.run)(e, (&dev).into()))?;
                let (kernel, e2e) = if is_cl {
                    let mut ks = Vec::new();
                    for _ in 0..reps {
                        (case.run)(e, (&dev).into())?;
                        ks.push(kernel_times(e));
                    }
                    let e2e = time(e, reps.min(7), || (case.run)(e, (&img).into()))?;
                    (
                        kernel_cell(ks),
                        format!("{:.3} ms", e2e.as_secs_f64() * 1e3),
                    )
                } else {
                    ("-".into(), format!("{:.3} ms", wall.as_secs_f64() * 1e3))
                };
                let s = wall.as_secs_f64();
                Ok(format!(
                    "| {} | {:?} | {} | {:.3} ms | {:.2} | {:.1} | {} | {} |",
                    case.name,
                    case.content,
                    name,
                    s * 1e3,
                    pixels / s / 1e9,
                    pixels * case.bytes_per_pixel / s / 1e9,
                    kernel,
                    e2e
                ))
            })();
            let line = result.unwrap_or_else(|err| {
                format!(
                    "| {} | {:?} | {} | error: {err} | | | | |",
                    case.name, case.content, name
                )
            });
            println!("{line}");
            lines.push(line);
        }
    }
    if named("formats") {
        lines.extend(formats::format_rows(&engines, size, reps));
    }
    if named("format_blur") {
        lines.extend(formats::format_blur_rows(&engines, size, reps));
    }
    if named("format_compact") {
        lines.extend(formats::format_compact_rows(&engines, size, reps));
    }
    if named("format_held") {
        lines.extend(formats::format_held_rows(&engines, size, reps));
    }
    if named("blobs") {
        lines.extend(blobs::blob_rows(&engines, size, reps));
    }
    for op in array_ops() {
        if ops
            .as_ref()
            .is_some_and(|o| !o.iter().any(|n| n == op.name))
        {
            continue;
        }
        for line in array_rows(&engines, size, reps, &op) {
            println!("{line}");
            lines.push(line);
        }
    }
    if let Some(out) = cli.out {
        std::fs::write(out, lines.join("\n") + "\n")?;
    }
    Ok(())
}

/// An operation on a u32 array: its name, the bytes it moves per element (for GB/s), how to
/// run it on an array the engine holds, and end to end from a host slice.
struct ArrayOp {
    name: &'static str,
    bytes_per_element: f64,
    device: fn(&Engine, &clpix::DeviceArray<u32>) -> clpix::Result<()>,
    host: fn(&Engine, &[u32]) -> clpix::Result<()>,
}

fn array_ops() -> Vec<ArrayOp> {
    vec![
        // Bytes read and written, as the CUB anchor counts them.
        ArrayOp {
            name: "exclusive_scan",
            bytes_per_element: 8.0,
            device: |e, a| e.exclusive_scan_device(a).map(drop),
            host: |e, d| e.exclusive_scan(d).map(drop),
        },
        // Bytes read; the per-group partials are negligible.
        ArrayOp {
            name: "array_stats",
            bytes_per_element: 4.0,
            device: |e, a| e.array_stats(a).map(drop),
            host: |e, d| e.array_stats(d).map(drop),
        },
    ]
}

/// An array operation on `size * size` u32 (64 Mi at 8192, as the CUB anchor) held by the
/// engine; "Gpix/s" is G elements/s, end to end is from a host slice (upload included).
fn array_rows(engines: &[Engine], size: u32, reps: usize, op: &ArrayOp) -> Vec<String> {
    let n = size as usize * size as usize;
    let data: Vec<u32> = (0..n as u32)
        .map(|i| i.wrapping_mul(2654435761) >> 8)
        .collect();
    let mut out = Vec::new();
    for e in engines {
        let name = match e.device() {
            Some(d) => format!("OpenCL {}", d.name),
            None => format!("rayon {} threads", rayon::current_num_threads()),
        };
        let result = (|| -> clpix::Result<String> {
            let arr = e.upload_array(&data)?;
            let wall = time(e, reps, || (op.device)(e, &arr))?;
            let kernel = if e.device().is_some() {
                let mut ks = Vec::new();
                for _ in 0..reps {
                    (op.device)(e, &arr)?;
                    ks.push(kernel_times(e));
                }
                kernel_cell(ks)
            } else {
                "-".into()
            };
            let e2e = time(e, reps.min(7), || (op.host)(e, &data))?;
            let s = wall.as_secs_f64();
            Ok(format!(
                "| {} ({n} u32) | Random | {} | {:.3} ms | {:.2} | {:.1} | {} | {:.3} ms |",
                op.name,
                name,
                s * 1e3,
                n as f64 / s / 1e9,
                n as f64 * op.bytes_per_element / s / 1e9,
                kernel,
                e2e.as_secs_f64() * 1e3
            ))
        })();
        out.push(result.unwrap_or_else(|err| {
            format!("| {} | Random | {name} | error: {err} | | | | |", op.name)
        }));
    }
    out
}

/// The compacted image in scan order at the anchors' threshold (a case on two contents).
fn compacted_image_scan(e: &Engine, i: ImageInput<'_>) -> clpix::Result<()> {
    e.compacted_image(i, 512, clpix::CompactOrder::ScanOrder)
        .map(drop)
}

/// The sorted compacted image at the anchors' threshold (a case on three contents).
fn compacted_image_sorted(e: &Engine, i: ImageInput<'_>) -> clpix::Result<()> {
    e.compacted_image(i, 512, clpix::CompactOrder::LuminanceDescending)
        .map(drop)
}

/// The last operation's kernel times: their sum, and the span from the first kernel's start to
/// the last one's end (gaps between kernels included).
fn kernel_times(e: &Engine) -> (Duration, Duration) {
    (
        e.last_kernel_time().unwrap_or_default(),
        e.last_kernel_span().unwrap_or_default(),
    )
}

/// "sum ms (span s)": the medians of both; the span only where it differs from the sum by
/// more than 1 %.
fn kernel_cell(ks: Vec<(Duration, Duration)>) -> String {
    let sum = median(ks.iter().map(|k| k.0).collect()).as_secs_f64() * 1e3;
    let span = median(ks.iter().map(|k| k.1).collect()).as_secs_f64() * 1e3;
    if (span - sum).abs() > 0.01 * sum {
        format!("{sum:.3} ms (span {span:.3})")
    } else {
        format!("{sum:.3} ms")
    }
}
