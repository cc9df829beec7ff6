//! Blurs an image file with a Gaussian blur.
//!
//! `cargo run --release --example blur -- <in> <out> [--radius N] [--sigma S]
//!  [--border clamp|reflect|wrap|zero] [--backend cpu|opencl] [--json]`
//!
//! `--json` prints the parameters, the backend and the timing as one JSON object.

use clpix::{Border, Engine, GaussianBlur};
use std::time::Instant;

fn arg(args: &[String], name: &str) -> Option<String> {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .cloned()
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
    let args: Vec<String> = std::env::args().collect();
    let positional: Vec<&String> = {
        let mut v = Vec::new();
        let mut i = 1;
        while i < args.len() {
            if args[i].starts_with("--") {
                i += if args[i] == "--json" { 1 } else { 2 };
            } else {
                v.push(&args[i]);
                i += 1;
            }
        }
        v
    };
    let (Some(input), Some(output)) = (positional.first(), positional.get(1)) else {
        eprintln!(
            "usage: blur <in> <out> [--radius N] [--sigma S] [--border clamp|reflect|wrap|zero] \
             [--backend cpu|opencl] [--json]"
        );
        std::process::exit(2);
    };
    let radius: u32 = arg(&args, "--radius").map_or(Ok(5), |s| s.parse())?;
    let border = match arg(&args, "--border").as_deref().unwrap_or("clamp") {
        "clamp" => Border::Clamp,
        "reflect" => Border::Reflect,
        "wrap" => Border::Wrap,
        "zero" => Border::Zero,
        other => {
            return Err(format!("unknown border {other:?}: clamp, reflect, wrap or zero").into())
        }
    };
    let mut blur = GaussianBlur::new(radius).border(border);
    if let Some(s) = arg(&args, "--sigma") {
        blur = blur.sigma(s.parse()?);
    }
    let engine = match arg(&args, "--backend").as_deref() {
        Some("cpu") => Engine::cpu(),
        Some("opencl") => Engine::opencl()?,
        _ => Engine::new()?,
    };
    let img = image::open(input.as_str())?.into_rgba8();
    let start = Instant::now();
    let out = engine.gaussian_blur(&img, &blur)?;
    let secs = start.elapsed().as_secs_f64();
    out.save(output.as_str())?;
    let (w, h) = img.dimensions();
    if args.iter().any(|a| a == "--json") {
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
