//! Criterion benchmarks of the Gaussian blur on every backend (rayon and each OpenCL device):
//! RGBA8 at w = 2, 8, 25 with Clamp, and f32 at w = 8. `CLPIX_BENCH_SIZE` sets the side
//! (default 2048). Speed targets are checked here and in `examples/bench`, never in tests.

use clpix::{Engine, GaussianBlur};
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
    let f32img = image::DynamicImage::ImageRgba8(img.clone()).into_rgba32f();
    let mut g = c.benchmark_group(format!("blur/{size}x{size}"));
    g.throughput(Throughput::Elements(size as u64 * size as u64));
    g.sample_size(10);
    for e in engines() {
        let label = e.backend().to_string();
        let dev = e.upload(&img).expect("upload");
        for w in [2u32, 8, 25] {
            let blur = GaussianBlur::new(w);
            g.bench_function(format!("blur_w{w}/{label}"), |b| {
                b.iter(|| black_box(e.gaussian_blur_device(&dev, &blur).expect("blur")))
            });
        }
        let blur = GaussianBlur::new(8);
        g.bench_function(format!("blur_f32_w8/{label}"), |b| {
            b.iter(|| black_box(e.gaussian_blur_f32(&f32img, &blur).expect("blur f32")))
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
