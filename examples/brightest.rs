//! The brightest and darkest pixels and luminance statistics of an image.
//!
//! `cargo run --release --example brightest -- <image> [--json]`

use clpix::Engine;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let json = args.iter().any(|a| a == "--json");
    let Some(path) = args.iter().find(|a| !a.starts_with("--")) else {
        eprintln!("usage: brightest <image> [--json]");
        std::process::exit(2);
    };
    let img = image::open(path)?.to_rgba8();
    let engine = Engine::new()?;
    let b = engine.brightest(&img)?;
    let d = engine.darkest(&img)?;
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
