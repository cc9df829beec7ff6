//! The clpix demo: runs the jobs on an embedded default image (or `demo <image>`), prints which
//! device ran each and how long it took, and writes pictures to `demo-output/`.
//!
//! `cargo run --release --example demo [-- <image>] [--backend cpu|opencl] [--device NAME]`

use clpix::Engine;
use image::{Rgba, RgbaImage};
use std::path::{Path, PathBuf};
use std::time::Instant;

#[allow(dead_code)]
/// A dark scene with gradients, colours and a few bright markers, so every job finds something.
pub fn default_image() -> RgbaImage {
    let (w, h) = (960u32, 540u32);
    let mut img = RgbaImage::from_fn(w, h, |x, y| {
        let r = (x * 60 / w) as u8;
        let g = (y * 50 / h) as u8;
        let b = 40 + ((x + y) % 64) as u8 / 2;
        Rgba([r, g, b, 255])
    });
    // Coloured discs and bright markers (one pure white: the brightest).
    let blobs: [(i32, i32, i32, [u8; 4]); 6] = [
        (180, 140, 40, [200, 40, 40, 255]),
        (520, 300, 60, [40, 180, 60, 255]),
        (780, 120, 30, [60, 80, 220, 255]),
        (300, 420, 6, [250, 250, 235, 255]),
        (700, 430, 5, [255, 255, 255, 255]),
        (860, 260, 4, [240, 240, 250, 255]),
    ];
    for (cx, cy, r, c) in blobs {
        for y in (cy - r).max(0)..(cy + r).min(h as i32) {
            for x in (cx - r).max(0)..(cx + r).min(w as i32) {
                if (x - cx).pow(2) + (y - cy).pow(2) <= r * r {
                    img.put_pixel(x as u32, y as u32, Rgba(c));
                }
            }
        }
    }
    img.put_pixel(5, 535, Rgba([0, 0, 0, 255])); // the darkest
    img
}

/// Draws a ring of `colour` around (x, y).
fn mark(img: &mut RgbaImage, x: u32, y: u32, colour: [u8; 4]) {
    for a in 0..64 {
        let t = a as f32 / 64.0 * std::f32::consts::TAU;
        for r in [10.0f32, 11.0] {
            let px = x as f32 + r * t.cos();
            let py = y as f32 + r * t.sin();
            if px >= 0.0 && py >= 0.0 && (px as u32) < img.width() && (py as u32) < img.height() {
                img.put_pixel(px as u32, py as u32, Rgba(colour));
            }
        }
    }
}

/// One job's line: what ran, on which device, how long.
fn report(job: &str, backend: &str, t: Instant, what: String) {
    println!(
        "{job:<18} {:>9.3} ms  on {backend}  {what}",
        t.elapsed().as_secs_f64() * 1e3
    );
}

/// Runs every job on `img` with `engine`, writes the pictures into `out`, and returns their paths.
pub fn run_demo(
    engine: &Engine,
    img: &RgbaImage,
    out: &Path,
) -> Result<Vec<PathBuf>, Box<dyn std::error::Error>> {
    std::fs::create_dir_all(out)?;
    let backend = engine.backend().to_string();
    let backend = backend
        .split(" (auto")
        .next()
        .unwrap_or(&backend)
        .to_string();
    let mut written = Vec::new();

    let t = Instant::now();
    let dev = engine.upload(img)?;
    report(
        "upload",
        &backend,
        t,
        format!("{}×{}", img.width(), img.height()),
    );

    let t = Instant::now();
    let b = engine.brightest(&dev)?;
    report(
        "brightest",
        &backend,
        t,
        format!("({}, {}) L={} rgba={:?}", b.x, b.y, b.luminance, b.rgba),
    );
    let t = Instant::now();
    let d = engine.darkest(&dev)?;
    report(
        "darkest",
        &backend,
        t,
        format!("({}, {}) L={} rgba={:?}", d.x, d.y, d.luminance, d.rgba),
    );
    let t = Instant::now();
    let s = engine.luminance_stats(&dev)?;
    report(
        "luminance_stats",
        &backend,
        t,
        format!("mean {:.2}, min {}, max {}", s.mean, s.min, s.max),
    );

    let mut marked = img.clone();
    mark(&mut marked, b.x, b.y, [255, 40, 40, 255]);
    mark(&mut marked, d.x, d.y, [40, 255, 255, 255]);
    let p = out.join("extremes.png");
    marked.save(&p)?;
    written.push(p);

    Ok(written)
}

fn arg(args: &[String], name: &str) -> Option<String> {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .cloned()
}

#[allow(dead_code)] // the demo test includes this file for run_demo
fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let Some(b) = arg(&args, "--backend") {
        std::env::set_var("CLPIX_BACKEND", b);
    }
    if let Some(d) = arg(&args, "--device") {
        std::env::set_var("CLPIX_DEVICE", d);
    }
    let path = args
        .iter()
        .enumerate()
        .find(|(i, a)| !a.starts_with("--") && (*i == 0 || !args[i - 1].starts_with("--")))
        .map(|(_, a)| a.clone());
    let img = match &path {
        Some(p) => image::open(p)?.to_rgba8(),
        None => default_image(),
    };
    let engine = Engine::new()?;
    println!("clpix demo on a {}×{} image", img.width(), img.height());
    println!("backend: {}", engine.backend());
    for p in run_demo(&engine, &img, Path::new("demo-output"))? {
        println!("wrote {}", p.display());
    }
    Ok(())
}
