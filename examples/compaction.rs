//! Stream compaction of an image: the pixels brighter than a threshold, in scan order or sorted
//! by luminance, and optionally the "mush of dots" picture of them packed at the start.
//!
//! `cargo run --release --example compaction -- <image.png> [--threshold N] [--sorted] [--json]
//!  [--out compacted.png]`
//!
//! Text output: how many pixels were kept and the first ten. `--json`: every kept pixel as
//! `{"x":..,"y":..,"luminance":..,"rgba":[..]}` in one JSON object.

use clpix::{CompactOrder, Engine};
use std::fmt::Write as _;
use std::time::Instant;

fn arg(args: &[String], name: &str) -> Option<String> {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .cloned()
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
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(path) = args.first().filter(|a| !a.starts_with("--")) else {
        eprintln!(
            "usage: compaction <image> [--threshold N (0..=1023, default 512)] [--sorted] [--json] [--out compacted.png]"
        );
        std::process::exit(2);
    };
    let threshold: u16 = arg(&args, "--threshold").map_or(Ok(512), |s| s.parse())?;
    let sorted = args.iter().any(|a| a == "--sorted");
    let json = args.iter().any(|a| a == "--json");
    let img = image::open(path)?.to_rgba8();
    let engine = Engine::new()?;

    let start = Instant::now();
    let hits = if sorted {
        engine.compact_sorted(&img, threshold)?
    } else {
        engine.compact(&img, threshold)?
    };
    let elapsed = start.elapsed();

    if let Some(out) = arg(&args, "--out") {
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
            if sorted { "luminance_descending" } else { "scan" },
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
