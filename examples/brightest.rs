//! The brightest and darkest pixels and luminance statistics of an image.
//!
//! `cargo run --release --example brightest -- <image> [--json]`

use clap::Parser;
use clpix::Engine;

/// The brightest and darkest pixels and the luminance statistics of an image.
#[derive(Parser, Debug)]
#[command(name = "brightest", version)]
struct Cli {
    /// The image (any format the `image` crate reads).
    image: String,
    /// Prints the results as one JSON object.
    #[arg(long)]
    json: bool,
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let cli = Cli::parse();
    let (path, json) = (&cli.image, cli.json);
    let img = image::open(path)?.to_rgba8();
    let engine = Engine::new()?;
    let b = engine.extreme(&img, clpix::Extreme::Brightest)?;
    let d = engine.extreme(&img, clpix::Extreme::Darkest)?;
    let s = engine.luminance_stats(&img)?;
    if json {
        let hit = |h: &clpix::PixelHit| {
            format!(
                "{{\"x\": {}, \"y\": {}, \"luminance\": {}, \"rgba\": [{}, {}, {}, {}]}}",
                h.x, h.y, h.luminance, h.rgba[0], h.rgba[1], h.rgba[2], h.rgba[3]
            )
        };
        println!(
            "{{\"width\": {}, \"height\": {}, \"backend\": {:?}, \"brightest\": {}, \"darkest\": {}, \
             \"luminance\": {{\"sum\": {}, \"count\": {}, \"mean\": {}, \"min\": {}, \"max\": {}}}}}",
            img.width(),
            img.height(),
            engine.backend().to_string(),
            hit(&b),
            hit(&d),
            s.sum,
            s.count,
            s.mean,
            s.min,
            s.max
        );
    } else {
        println!(
            "{} ({}×{}) on {}",
            path,
            img.width(),
            img.height(),
            engine.backend()
        );
        println!(
            "brightest: ({}, {}) L={} rgba={:?}",
            b.x, b.y, b.luminance, b.rgba
        );
        println!(
            "darkest:   ({}, {}) L={} rgba={:?}",
            d.x, d.y, d.luminance, d.rgba
        );
        println!(
            "luminance: mean {:.3}, min {}, max {}, sum {}",
            s.mean, s.min, s.max, s.sum
        );
    }
    Ok(())
}
