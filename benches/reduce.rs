//! Criterion benchmarks of the reductions on every backend (rayon and each OpenCL device).
//! Speed targets are checked here and in `examples/bench`, never in timed tests.

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
    let img = image::RgbaImage::from_fn(size, size, |x, y| {
        let h = (x.wrapping_mul(2654435761) ^ y.wrapping_mul(40503)).to_le_bytes();
        image::Rgba(h)
    });
    let mut g = c.benchmark_group(format!("reduce/{size}x{size}"));
    g.throughput(Throughput::Elements(size as u64 * size as u64));
    g.sample_size(20);
    for e in engines() {
        let label = e.backend().to_string();
        let dev = e.upload(&img).expect("upload");
        g.bench_function(format!("brightest/{label}"), |b| {
            b.iter(|| {
                black_box(
                    e.extreme(&dev, clpix::Extreme::Brightest)
                        .expect("brightest"),
                )
            })
        });
        g.bench_function(format!("luminance_stats/{label}"), |b| {
            b.iter(|| black_box(e.luminance_stats(&dev).expect("stats")))
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
