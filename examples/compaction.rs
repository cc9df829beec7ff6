//! Stream compaction of an image: the pixels brighter than a threshold, in scan order or sorted
//! by luminance, and optionally the "mush of dots" picture of them packed at the start.
//!
//! `cargo run --release --example compaction -- <image.png> [--threshold N] [--sorted] [--json]
//!  [--out compacted.png]`
//!
//! Text output: how many pixels were kept and the first ten. `--json`: every kept pixel as
//! `{"x":..,"y":..,"luminance":..,"rgba":[..]}` in one JSON object.

use clap::Parser;
use clpix::{CompactOrder, Engine};
use std::fmt::Write as _;
use std::time::Instant;

/// Stream compaction of an image: the pixels brighter than a threshold, in scan order or sorted
/// by luminance; prints how many were kept and the first ten (or all of them with --json).
#[derive(Parser, Debug)]
#[command(name = "compaction", version)]
struct Cli {
    /// The image (any format the `image` crate reads).
    image: String,
    /// Keeps the pixels whose luminance (0..=1023) is above this.
    #[arg(long, default_value_t = 512)]
    threshold: u16,
    /// Sorts the kept pixels by luminance, brightest first (default: scan order).
    #[arg(long)]
    sorted: bool,
    /// Prints every kept pixel as {"x":..,"y":..,"luminance":..,"rgba":[..]} in one JSON object.
    #[arg(long)]
    json: bool,
    /// Also writes the compacted image (the kept pixels packed at the start) here.
    #[arg(long, value_name = "PATH")]
    out: Option<String>,
}

fn json_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let cli = Cli::parse();
    let (path, threshold, sorted, json) = (&cli.image, cli.threshold, cli.sorted, cli.json);
    let img = image::open(path)?.to_rgba8();
    let engine = Engine::new()?;

    let start = Instant::now();
    let hits = if sorted {
        engine.compact(&img, threshold, clpix::CompactOrder::LuminanceDescending)?
    } else {
        engine.compact(&img, threshold, clpix::CompactOrder::ScanOrder)?
    };
    let elapsed = start.elapsed();

    if let Some(out) = &cli.out {
        let order = if sorted {
            CompactOrder::LuminanceDescending
        } else {
            CompactOrder::ScanOrder
        };
        engine.compacted_image(&img, threshold, order)?.save(&out)?;
        if !json {
            println!("wrote {out}");
        }
    }

    let pixels = img.width() as u64 * img.height() as u64;
    if json {
        let mut s = String::with_capacity(64 + hits.len() * 48);
        let _ = write!(
            s,
            "{{\"image\":\"{}\",\"width\":{},\"height\":{},\"threshold\":{},\"order\":\"{}\",\"backend\":\"{}\",\"kept\":{},\"hits\":[",
            json_escape(path),
            img.width(),
            img.height(),
            threshold,
            if sorted {
                "luminance_descending"
            } else {
                "scan"
            },
            json_escape(&engine.backend().to_string()),
            hits.len()
        );
        for (i, h) in hits.iter().enumerate() {
            let _ = write!(
                s,
                "{}{{\"x\":{},\"y\":{},\"luminance\":{},\"rgba\":[{},{},{},{}]}}",
                if i == 0 { "" } else { "," },
                h.x,
                h.y,
                h.luminance,
                h.rgba[0],
                h.rgba[1],
                h.rgba[2],
                h.rgba[3]
            );
        }
        s.push_str("]}");
        println!("{s}");
    } else {
        println!("backend: {}", engine.backend());
        println!(
            "{}×{}: {} of {} pixels have luminance above {} ({:.1}%), {} in {:.3} ms",
            img.width(),
            img.height(),
            hits.len(),
            pixels,
            threshold,
            100.0 * hits.len() as f64 / pixels.max(1) as f64,
            if sorted {
                "sorted by luminance"
            } else {
                "in scan order"
            },
            elapsed.as_secs_f64() * 1e3
        );
        for h in hits.iter().take(10) {
            println!(
                "  ({:>5}, {:>5})  L {:>4}  rgba {:?}",
                h.x, h.y, h.luminance, h.rgba
            );
        }
        if hits.len() > 10 {
            println!("  … {} more", hits.len() - 10);
        }
    }
    Ok(())
}
