//! The RGBA and luminance histograms of an image, drawn as bar charts.
//!
//! `cargo run --release --example histogram -- <image> [out.png] [--json] [--size WxH]`
//!
//! With `out.png`, writes the RGBA chart there (R, G, B overlaid in their colours, A as a grey
//! outline) and the luminance chart next to it as `out-luminance.png`. `--json` prints the
//! counts as JSON instead of a summary.

use clap::Parser;
use clpix::{Engine, LuminanceHistogram, RgbaHistogram};
use std::path::{Path, PathBuf};

/// The RGBA and luminance histograms of an image: a summary (or the counts as JSON), and
/// optionally both drawn as bar charts.
#[derive(Parser, Debug)]
#[command(name = "histogram", version)]
struct Cli {
    /// The image (any format the `image` crate reads).
    image: String,
    /// Writes the RGBA chart here (R, G, B overlaid in their colours, A as a grey outline) and
    /// the luminance chart beside it as <stem>-luminance.png.
    out: Option<PathBuf>,
    /// Prints the counts as JSON instead of a summary.
    #[arg(long)]
    json: bool,
    /// The RGBA chart's size (the luminance chart is half as high).
    #[arg(long, value_name = "WxH", default_value = "768x300", value_parser = parse_size)]
    size: (u32, u32),
}

fn json_array(counts: &[u32]) -> String {
    let items: Vec<String> = counts.iter().map(|c| c.to_string()).collect();
    format!("[{}]", items.join(", "))
}

/// The most frequent value of a channel and the mean value.
fn mode_and_mean(counts: &[u32]) -> (usize, f64) {
    let total: u64 = counts.iter().map(|&c| c as u64).sum();
    let mode = counts
        .iter()
        .enumerate()
        .max_by_key(|&(v, &c)| (c, std::cmp::Reverse(v)))
        .map_or(0, |(v, _)| v);
    let sum: u64 = counts
        .iter()
        .enumerate()
        .map(|(v, &c)| v as u64 * c as u64)
        .sum();
    (mode, sum as f64 / total.max(1) as f64)
}

fn luminance_path(out: &Path) -> PathBuf {
    let stem = out
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("histogram");
    out.with_file_name(format!("{stem}-luminance.png"))
}

fn parse_size(s: &str) -> Result<(u32, u32), String> {
    let parsed = s
        .split_once('x')
        .and_then(|(w, h)| Some((w.parse().ok()?, h.parse().ok()?)));
    match parsed {
        Some((w, h)) if w > 0 && h > 0 => Ok((w, h)),
        _ => Err(format!("{s:?} is not WxH (e.g. 768x300)")),
    }
}

fn print_json(
    img: &image::RgbaImage,
    engine: &Engine,
    rgba: &RgbaHistogram,
    l: &LuminanceHistogram,
) {
    println!(
        "{{\"width\": {}, \"height\": {}, \"pixels\": {}, \"backend\": {:?}, \
         \"rgba\": {{\"r\": {}, \"g\": {}, \"b\": {}, \"a\": {}}}, \"luminance\": {}}}",
        img.width(),
        img.height(),
        rgba.pixel_count(),
        engine.backend().to_string(),
        json_array(&rgba.counts[0]),
        json_array(&rgba.counts[1]),
        json_array(&rgba.counts[2]),
        json_array(&rgba.counts[3]),
        json_array(&l.counts)
    );
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let cli = Cli::parse();
    let (input, json, size) = (&cli.image, cli.json, cli.size);
    let img = image::open(input)?.to_rgba8();
    let engine = Engine::new()?;
    let rgba = engine.histogram_rgba(&img)?;
    let lum = engine.histogram_luminance(&img)?;

    let mut written = Vec::new();
    if let Some(out) = cli.out {
        rgba.to_chart(size.0, size.1).save(&out)?;
        let lpath = luminance_path(&out);
        lum.to_chart(size.0, size.1 / 2).save(&lpath)?;
        written = vec![out, lpath];
    }

    if json {
        print_json(&img, &engine, &rgba, &lum);
        return Ok(());
    }
    println!(
        "{} ({}×{}, {} pixels) on {}",
        input,
        img.width(),
        img.height(),
        rgba.pixel_count(),
        engine.backend()
    );
    for (c, name) in ["R", "G", "B", "A"].iter().enumerate() {
        let (mode, mean) = mode_and_mean(&rgba.counts[c]);
        println!(
            "{name}: mean {mean:7.2}, most frequent {mode:3} ({} pixels)",
            rgba.counts[c][mode]
        );
    }
    let (mode, mean) = mode_and_mean(&lum.counts);
    println!(
        "L: mean {mean:7.2}, most frequent {mode:4} ({} pixels)",
        lum.counts[mode]
    );
    for p in written {
        println!("wrote {}", p.display());
    }
    Ok(())
}
