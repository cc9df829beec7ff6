//! Blurs an image file with a Gaussian blur.
//!
//! `cargo run --release --example blur -- <in> <out> [--radius N] [--sigma S]
//!  [--border clamp|reflect|wrap|zero] [--backend cpu|opencl] [--json]`
//!
//! `--json` prints the parameters, the backend and the timing as one JSON object.

use clap::{Parser, ValueEnum};
use clpix::{Border, Engine, GaussianBlur};
use std::time::Instant;

/// Blurs an image file with a Gaussian blur.
#[derive(Parser, Debug)]
#[command(name = "blur", version)]
struct Cli {
    /// The image to blur (any format the `image` crate reads).
    input: String,
    /// Where to write the blurred image (its format from the extension).
    output: String,
    /// The kernel's radius: 2 × radius + 1 taps a direction.
    #[arg(long, default_value_t = 5)]
    radius: u32,
    /// The Gaussian's standard deviation (default: radius / 2).
    #[arg(long)]
    sigma: Option<f64>,
    /// What the kernel reads beyond the image's edges.
    #[arg(long, value_enum, default_value_t = BorderArg::Clamp, ignore_case = true)]
    border: BorderArg,
    /// The backend (default: Engine::new()'s choice, which honours CLPIX_BACKEND).
    #[arg(long, value_enum, ignore_case = true)]
    backend: Option<BackendArg>,
    /// Prints the parameters, the backend and the timing as one JSON object.
    #[arg(long)]
    json: bool,
}

#[derive(ValueEnum, Clone, Copy, Debug)]
enum BorderArg {
    /// The nearest edge pixel
    Clamp,
    /// Mirrored, without repeating the edge pixel
    Reflect,
    /// Coordinates modulo the size: the image tiles the plane
    Wrap,
    /// Zero in all four channels
    Zero,
}

#[derive(ValueEnum, Clone, Copy, Debug)]
enum BackendArg {
    /// The CPU (rayon)
    Cpu,
    /// The best OpenCL device (an error where none can be had)
    Opencl,
}

fn json_str(s: &str) -> String {
    let mut o = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => o.push_str("\\\""),
            '\\' => o.push_str("\\\\"),
            c if (c as u32) < 0x20 => o.push_str(&format!("\\u{:04x}", c as u32)),
            c => o.push(c),
        }
    }
    o.push('"');
    o
}

fn main() {
    if let Err(e) = run() {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

fn run() -> Result<(), Box<dyn std::error::Error>> {
    let cli = Cli::parse();
    let (input, output) = (&cli.input, &cli.output);
    let border = match cli.border {
        BorderArg::Clamp => Border::Clamp,
        BorderArg::Reflect => Border::Reflect,
        BorderArg::Wrap => Border::Wrap,
        BorderArg::Zero => Border::Zero,
    };
    let mut blur = GaussianBlur::new(cli.radius).border(border);
    if let Some(s) = cli.sigma {
        blur = blur.sigma(s);
    }
    let engine = match cli.backend {
        Some(BackendArg::Cpu) => Engine::cpu(),
        Some(BackendArg::Opencl) => Engine::opencl()?,
        None => Engine::new()?,
    };
    let img = image::open(input.as_str())?.into_rgba8();
    let start = Instant::now();
    let out = engine.gaussian_blur(&img, &blur)?;
    let secs = start.elapsed().as_secs_f64();
    out.save(output.as_str())?;
    let (w, h) = img.dimensions();
    if cli.json {
        println!(
            "{{\"input\":{},\"output\":{},\"width\":{w},\"height\":{h},\"radius\":{},\"sigma\":{},\
             \"border\":\"{:?}\",\"backend\":{},\"seconds\":{secs:.6},\"mpix_per_s\":{:.1},\
             \"kernel_seconds\":{}}}",
            json_str(input),
            json_str(output),
            blur.radius(),
            blur.sigma_value(),
            blur.border_mode(),
            json_str(&engine.backend().to_string()),
            w as f64 * h as f64 / secs / 1e6,
            engine
                .last_kernel_time()
                .map_or("null".into(), |t| format!("{:.6}", t.as_secs_f64())),
        );
    } else {
        println!(
            "{w}×{h}, radius {}, sigma {}, {:?} on {}: {:.3} ms",
            blur.radius(),
            blur.sigma_value(),
            blur.border_mode(),
            engine.backend(),
            secs * 1e3
        );
    }
    Ok(())
}
