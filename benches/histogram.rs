//! Criterion benchmarks of the histograms on every backend (rayon and each OpenCL device), on
//! random and constant images (every pixel in one bin). Speed targets are checked here and in
//! `examples/bench`, never in timed tests.

use clpix::Engine;
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use std::hint::black_box;

fn engines() -> Vec<Engine> {
    let mut v = vec![Engine::cpu()];
    for d in clpix::devices().unwrap_or_default() {
        if let Ok(e) = Engine::with_device(&d) {
            v.push(e);
        }
    }
    v
}

fn bench(c: &mut Criterion) {
    let size = std::env::var("CLPIX_BENCH_SIZE")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(2048u32);
    let random = image::RgbaImage::from_fn(size, size, |x, y| {
        let h = (x.wrapping_mul(2654435761) ^ y.wrapping_mul(40503)).wrapping_mul(2246822519);
        image::Rgba(h.to_le_bytes())
    });
    let constant = image::RgbaImage::from_pixel(size, size, image::Rgba([90, 140, 200, 255]));
    let mut g = c.benchmark_group(format!("histogram/{size}x{size}"));
    g.throughput(Throughput::Elements(size as u64 * size as u64));
    g.sample_size(20);
    for e in engines() {
        let label = e.backend().to_string();
        for (content, img) in [("random", &random), ("constant", &constant)] {
            let dev = e.upload(img).expect("upload");
            g.bench_function(format!("rgba/{content}/{label}"), |b| {
                b.iter(|| black_box(e.histogram_rgba(&dev).expect("histogram_rgba")))
            });
            g.bench_function(format!("luminance/{content}/{label}"), |b| {
                b.iter(|| black_box(e.histogram_luminance(&dev).expect("histogram_luminance")))
            });
        }
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
