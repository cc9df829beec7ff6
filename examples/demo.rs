//! The clpix demo: runs the jobs on an embedded default image (or `demo <image>`), prints which
//! device ran each and how long it took, and writes pictures to `demo-output/`.
//!
//! `cargo run --release --example demo [-- <image>] [--backend cpu|opencl] [--device NAME]`

use clpix::{CompactOrder, Engine, GaussianBlur};
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
    let blobs: [(i32, i32, i32, [u8; 4]); 11] = [
        (180, 140, 40, [200, 40, 40, 255]),
        (520, 300, 60, [40, 180, 60, 255]),
        (780, 120, 30, [60, 80, 220, 255]),
        (300, 420, 6, [250, 250, 235, 255]),
        (700, 430, 5, [255, 255, 255, 255]),
        (860, 260, 4, [240, 240, 250, 255]),
        (90, 330, 4, [245, 250, 240, 255]),
        (430, 60, 3, [250, 245, 250, 255]),
        (640, 200, 5, [235, 240, 245, 255]),
        (900, 480, 3, [250, 250, 250, 255]),
        (260, 260, 4, [242, 242, 242, 255]),
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

    // Markers: the 8 brightest pixels at least 20 pixels apart (one per bright blob).
    let t = Instant::now();
    let markers = engine.brightest_k(&dev, 8, 20.0)?;
    report(
        "brightest_k",
        &backend,
        t,
        format!("{} markers, k = 8, min distance 20", markers.len()),
    );
    let mut marked = img.clone();
    for m in &markers {
        mark(&mut marked, m.x, m.y, [255, 220, 0, 255]);
    }
    let p = out.join("markers.png");
    marked.save(&p)?;
    written.push(p);

    let t = Instant::now();
    let hist = engine.histogram_rgba(&dev)?;
    report(
        "histogram_rgba",
        &backend,
        t,
        format!("{} pixels counted", hist.pixel_count()),
    );
    let t = Instant::now();
    let lhist = engine.histogram_luminance(&dev)?;
    report(
        "histogram_luminance",
        &backend,
        t,
        format!("{} pixels counted", lhist.pixel_count()),
    );
    let p = out.join("histogram.png");
    hist.to_chart(768, 300).save(&p)?;
    written.push(p);
    let p = out.join("histogram-luminance.png");
    lhist.to_chart(768, 300).save(&p)?;
    written.push(p);

    // Compaction: input | kept pixels in scan order | sorted by luminance (the "mush of dots").
    let threshold = (s.mean as u16).min(1022);
    let t = Instant::now();
    let kept = engine.compact(&dev, threshold)?;
    report(
        "compact",
        &backend,
        t,
        format!("{} pixels above L = {threshold}", kept.len()),
    );
    let t = Instant::now();
    let scan = engine.compacted_image(&dev, threshold, CompactOrder::ScanOrder)?;
    let sorted = engine.compacted_image(&dev, threshold, CompactOrder::LuminanceDescending)?;
    report(
        "compacted_image",
        &backend,
        t,
        "scan order and sorted by luminance".into(),
    );
    let (w, h) = img.dimensions();
    let mut strip = RgbaImage::new(w * 3, h);
    image::imageops::replace(&mut strip, img, 0, 0);
    image::imageops::replace(&mut strip, &scan, w as i64, 0);
    image::imageops::replace(&mut strip, &sorted, 2 * w as i64, 0);
    // Shown opaque: the spec's (0, 0, 0, 0) fill would otherwise show as the viewer's background.
    for px in strip.pixels_mut() {
        px.0[3] = 255;
    }
    let p = out.join("compaction.png");
    strip.save(&p)?;
    written.push(p);

    for radius in [2u32, 8, 25] {
        let t = Instant::now();
        let blurred = engine.gaussian_blur(&dev, &GaussianBlur::new(radius))?;
        report(
            "gaussian_blur",
            &backend,
            t,
            format!("radius {radius}, sigma {}", radius as f64 / 2.0),
        );
        if radius == 8 {
            let p = out.join("blur.png");
            blurred.save(&p)?;
            written.push(p);
        }
    }

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
