//! Prints a table of measured speeds: every operation on every backend (rayon and each OpenCL
//! device), median wall time, Gpix/s and GB/s, kernel-only time from profiling events (device
//! image input) and end to end (host image, upload included).
//!
//! `cargo run --release --example bench -- [--size 4096] [--reps 15] [--ops brightest,histogram_rgba]
//!  [--backends cpu,opencl] [--device NAME] [--out table.md]`

use clap::{CommandFactory, Parser, ValueEnum};
use clpix::{Engine, ImageInput};
use std::path::PathBuf;
use std::time::{Duration, Instant};

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
        .collect();
    names.dedup();
    names
}

/// One benchmarked operation: its name, the bytes it must move per pixel (for GB/s) and how
/// to run it on an input.
pub struct Case {
    pub name: &'static str,
    pub bytes_per_pixel: f64,
    pub content: Content,
    pub run: fn(&Engine, ImageInput<'_>) -> clpix::Result<()>,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Content {
    Random,
    Constant,
    /// Black with a white 5×5 spot in every 256×256 block: a star field or motion-capture
    /// markers (0.04% of the pixels bright).
    Spots,
}

/// A case blurring the RGBA8 image on the device at radius `$w`.
macro_rules! blur_case {
    ($name:literal, $w:literal) => {
        Case {
            name: $name,
            bytes_per_pixel: 8.0,
            content: Content::Random,
            run: |e, i| {
                e.gaussian_blur_device(i, &clpix::GaussianBlur::new($w))
                    .map(drop)
            },
        }
    };
}

/// An f32 blur row at radius `$w` run by `$run`: [`blur_f32_case`] (a host f32 image) or
/// [`blur_f32_device_case`] (an image kept on the engine).
macro_rules! blur_f32_row {
    ($name:literal, $run:ident, $w:literal) => {
        Case {
            name: $name,
            bytes_per_pixel: 32.0,
            content: Content::Random,
            run: |e, i| $run(e, i, $w),
        }
    };
}

fn cases() -> Vec<Case> {
    vec![
        Case {
            name: "brightest",
            bytes_per_pixel: 4.0,
            content: Content::Random,
            run: |e, i| e.brightest(i).map(drop),
        },
        Case {
            name: "darkest",
            bytes_per_pixel: 4.0,
            content: Content::Random,
            run: |e, i| e.darkest(i).map(drop),
        },
        Case {
            name: "luminance_stats",
            bytes_per_pixel: 4.0,
            content: Content::Random,
            run: |e, i| e.luminance_stats(i).map(drop),
        },
        blur_case!("blur_w2", 2),
        blur_case!("blur_w8", 8),
        blur_case!("blur_w25", 25),
        blur_f32_row!("blur_f32_w2", blur_f32_case, 2),
        blur_f32_row!("blur_f32_w8", blur_f32_case, 8),
        blur_f32_row!("blur_f32_w25", blur_f32_case, 25),
        blur_f32_row!("blur_f32_device_w8", blur_f32_device_case, 8),
        Case {
            name: "histogram_rgba",
            bytes_per_pixel: 4.0,
            content: Content::Random,
            run: |e, i| e.histogram_rgba(i).map(drop),
        },
        Case {
            name: "histogram_rgba",
            bytes_per_pixel: 4.0,
            content: Content::Constant,
            run: |e, i| e.histogram_rgba(i).map(drop),
        },
        Case {
            name: "histogram_luminance",
            bytes_per_pixel: 4.0,
            content: Content::Random,
            run: |e, i| e.histogram_luminance(i).map(drop),
        },
        Case {
            name: "histogram_luminance",
            bytes_per_pixel: 4.0,
            content: Content::Constant,
            run: |e, i| e.histogram_luminance(i).map(drop),
        },
        // Threshold 512 keeps 49.9% of the pixels of the Random image (measured: its L has
        // median 511), the anchors' "about half kept".
        Case {
            name: "compact",
            bytes_per_pixel: 4.0,
            content: Content::Random,
            run: |e, i| e.compact(i, 512).map(drop),
        },
        Case {
            name: "compact_sorted",
            bytes_per_pixel: 4.0,
            content: Content::Random,
            run: |e, i| e.compact_sorted(i, 512).map(drop),
        },
        Case {
            name: "compacted_image",
            bytes_per_pixel: 4.0,
            content: Content::Random,
            run: compacted_image_scan,
        },
        Case {
            name: "compacted_image",
            bytes_per_pixel: 4.0,
            content: Content::Spots,
            run: compacted_image_scan,
        },
        Case {
            name: "compacted_image_sorted",
            bytes_per_pixel: 4.0,
            content: Content::Random,
            run: compacted_image_sorted,
        },
        // Every pixel kept, all with one luminance: on GPUs every group's pixels have one
        // digit in both radix passes, so each pass is a relocation in scan order.
        Case {
            name: "compacted_image_sorted",
            bytes_per_pixel: 4.0,
            content: Content::Constant,
            run: compacted_image_sorted,
        },
        // Bright spots on black: most groups keep nothing, and return at once on GPUs.
        Case {
            name: "compacted_image_sorted",
            bytes_per_pixel: 4.0,
            content: Content::Spots,
            run: compacted_image_sorted,
        },
        Case {
            name: "brightest_k16_d0",
            bytes_per_pixel: 4.0,
            content: Content::Random,
            run: |e, i| e.brightest_k(i, 16, 0.0).map(drop),
        },
        Case {
            name: "brightest_k16_d20",
            bytes_per_pixel: 4.0,
            content: Content::Random,
            run: |e, i| e.brightest_k(i, 16, 20.0).map(drop),
        },
        Case {
            name: "brightest_k1024_d0",
            bytes_per_pixel: 4.0,
            content: Content::Random,
            run: |e, i| e.brightest_k(i, 1024, 0.0).map(drop),
        },
        Case {
            name: "brightest_k1024_d20",
            bytes_per_pixel: 4.0,
            content: Content::Random,
            run: |e, i| e.brightest_k(i, 1024, 20.0).map(drop),
        },
        Case {
            name: "darkest_k1024_d20",
            bytes_per_pixel: 4.0,
            content: Content::Random,
            run: |e, i| e.darkest_k(i, 1024, 20.0).map(drop),
        },
        // Other operations add their cases here.
    ]
}

/// More blur radii, run only when named in `--ops`: where the GPU's kernels cross over
/// (`CLPIX_BLUR_GPU` forces one).
fn radius_cases() -> Vec<Case> {
    vec![
        blur_case!("blur_w1", 1),
        blur_case!("blur_w3", 3),
        blur_case!("blur_w4", 4),
        blur_case!("blur_w5", 5),
        blur_case!("blur_w6", 6),
        blur_case!("blur_w12", 12),
        blur_case!("blur_w16", 16),
        blur_case!("blur_w20", 20),
        blur_case!("blur_w21", 21),
        blur_case!("blur_w32", 32),
        blur_case!("blur_w40", 40),
        blur_case!("blur_w48", 48),
        blur_case!("blur_w64", 64),
        blur_f32_row!("blur_f32_device_w2", blur_f32_device_case, 2),
        blur_f32_row!("blur_f32_device_w1", blur_f32_device_case, 1),
        blur_f32_row!("blur_f32_device_w3", blur_f32_device_case, 3),
        blur_f32_row!("blur_f32_device_w4", blur_f32_device_case, 4),
        blur_f32_row!("blur_f32_device_w5", blur_f32_device_case, 5),
        blur_f32_row!("blur_f32_device_w6", blur_f32_device_case, 6),
        blur_f32_row!("blur_f32_device_w12", blur_f32_device_case, 12),
        blur_f32_row!("blur_f32_device_w16", blur_f32_device_case, 16),
        blur_f32_row!("blur_f32_device_w25", blur_f32_device_case, 25),
        blur_f32_row!("blur_f32_device_w32", blur_f32_device_case, 32),
        Case {
            name: "blur_host_w2",
            bytes_per_pixel: 8.0,
            content: Content::Random,
            run: |e, i| e.gaussian_blur(i, &clpix::GaussianBlur::new(2)).map(drop),
        },
        Case {
            name: "blur_into_w2",
            bytes_per_pixel: 8.0,
            content: Content::Random,
            run: |e, i| blur_into_case(e, i, 2),
        },
        Case {
            name: "blur_into_w8",
            bytes_per_pixel: 8.0,
            content: Content::Random,
            run: |e, i| blur_into_case(e, i, 8),
        },
        blur_f32_row!("blur_f32_into_w8", blur_f32_into_case, 8),
    ]
}

/// The RGBA8 blur of a host image into one result image reused call after call
/// (`Engine::gaussian_blur_into`; made once per thread and size).
fn blur_into_case(e: &Engine, i: ImageInput<'_>, radius: u32) -> clpix::Result<()> {
    use std::cell::RefCell;
    thread_local! {
        static OUT: RefCell<image::RgbaImage> = RefCell::new(image::RgbaImage::new(0, 0));
    }
    OUT.with(|c| {
        let mut out = c.borrow_mut();
        if out.dimensions() != (i.width(), i.height()) {
            *out = image::RgbaImage::new(i.width(), i.height());
        }
        e.gaussian_blur_into(i, &clpix::GaussianBlur::new(radius), &mut out)
    })
}

/// [`blur_f32_case`] into one result image reused call after call
/// (`Engine::gaussian_blur_f32_into`).
fn blur_f32_into_case(e: &Engine, i: ImageInput<'_>, radius: u32) -> clpix::Result<()> {
    use std::cell::RefCell;
    thread_local! {
        static IO: RefCell<Option<(image::Rgba32FImage, image::Rgba32FImage)>> =
            const { RefCell::new(None) };
    }
    let (w, h) = (i.width(), i.height());
    IO.with(|c| {
        let mut c = c.borrow_mut();
        if c.as_ref().is_none_or(|(f, _)| f.dimensions() != (w, h)) {
            *c = None;
            *c = Some((f32_image(e, i)?, image::Rgba32FImage::new(w, h)));
        }
        let (img, out) = c.as_mut().ok_or(clpix::Error::EmptyImage {
            operation: "blur_f32_into",
            width: w,
            height: h,
        })?;
        e.gaussian_blur_f32_into(img, &clpix::GaussianBlur::new(radius), out)
    })
}

/// The f32 blur of an f32 image kept on the engine (`Engine::upload_f32` once per thread and
/// size, not timed after the first call): the result stays there, nothing crosses the bus.
fn blur_f32_device_case(e: &Engine, i: ImageInput<'_>, radius: u32) -> clpix::Result<()> {
    use std::cell::RefCell;
    thread_local! {
        static DEV: RefCell<Option<clpix::DeviceImageF32>> = const { RefCell::new(None) };
    }
    let (w, h) = (i.width(), i.height());
    DEV.with(|c| {
        let mut c = c.borrow_mut();
        if c.as_ref().is_none_or(|d| (d.width(), d.height()) != (w, h)) {
            *c = None; // the old image goes before the new one is made
            *c = Some(e.upload_f32(&f32_image(e, i)?)?);
        }
        let d = c.as_ref().ok_or(clpix::Error::EmptyImage {
            operation: "blur_f32_device",
            width: w,
            height: h,
        })?;
        e.gaussian_blur_f32_device(d, &clpix::GaussianBlur::new(radius))
            .map(drop)
    })
}

/// The f32 blur takes host f32 images only: the RGBA8 input converted once per thread and
/// size (not timed after the first call), upload and download included in the timing.
fn blur_f32_case(e: &Engine, i: ImageInput<'_>, radius: u32) -> clpix::Result<()> {
    use std::cell::RefCell;
    thread_local! {
        static F32: RefCell<Option<image::Rgba32FImage>> = const { RefCell::new(None) };
    }
    let (w, h) = (i.width(), i.height());
    F32.with(|c| {
        let mut c = c.borrow_mut();
        if c.as_ref().is_none_or(|f| f.dimensions() != (w, h)) {
            *c = Some(f32_image(e, i)?);
        }
        let f = c.as_ref().ok_or(clpix::Error::EmptyImage {
            operation: "blur_f32",
            width: w,
            height: h,
        })?;
        e.gaussian_blur_f32(f, &clpix::GaussianBlur::new(radius))
            .map(drop)
    })
}

/// The bench's RGBA8 input as a host f32 image.
fn f32_image(e: &Engine, i: ImageInput<'_>) -> clpix::Result<image::Rgba32FImage> {
    let host = match i {
        ImageInput::Host(v) => v.to_image(),
        ImageInput::Device(d) => e.download(d)?,
    };
    Ok(image::DynamicImage::ImageRgba8(host).into_rgba32f())
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
            match Engine::with_device(&d) {
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
            device: |e, a| e.array_stats_device(a).map(drop),
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
