//! Criterion benchmarks of compaction, the sort by luminance, the exclusive scan and array
//! stats, on every backend (rayon and each OpenCL device). `CLPIX_BENCH_SIZE` sets the image
//! side (default 2048), `CLPIX_SCAN_LEN` the array length of the scan and the stats (default
//! 16 Mi u32; 64 Mi on a GPU machine).

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

fn env(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

fn bench(c: &mut Criterion) {
    let size = env("CLPIX_BENCH_SIZE", 2048) as u32;
    // Random pixels: threshold 512 keeps about half of them.
    let img = image::RgbaImage::from_fn(size, size, |x, y| {
        let h = (x.wrapping_mul(2654435761) ^ y.wrapping_mul(40503)).wrapping_mul(0x9E3779B1);
        image::Rgba(h.to_le_bytes())
    });
    let mut g = c.benchmark_group(format!("compact/{size}x{size}"));
    g.throughput(Throughput::Elements(size as u64 * size as u64));
    g.sample_size(10);
    for e in engines() {
        let label = e.backend().to_string();
        let dev = e.upload(&img).expect("upload");
        g.bench_function(format!("compact t512/{label}"), |b| {
            b.iter(|| {
                black_box(
                    e.compact(&dev, 512, clpix::CompactOrder::ScanOrder)
                        .expect("compact"),
                )
            })
        });
        g.bench_function(format!("compact_sorted t512/{label}"), |b| {
            b.iter(|| {
                black_box(
                    e.compact(&dev, 512, clpix::CompactOrder::LuminanceDescending)
                        .expect("compact_sorted"),
                )
            })
        });
    }
    g.finish();

    let n = env("CLPIX_SCAN_LEN", 16 << 20);
    let data: Vec<u32> = (0..n as u32)
        .map(|i| i.wrapping_mul(2654435761) >> 8)
        .collect();
    // Bytes moved per element: read and written for the scan (as the CUB anchor counts
    // them), read for the stats.
    type Op = fn(&Engine, &clpix::DeviceArray<u32>);
    let ops: [(&str, u64, Op); 2] = [
        ("exclusive_scan", 8, |e, a| {
            black_box(e.exclusive_scan_device(a).expect("scan"));
        }),
        ("array_stats", 4, |e, a| {
            black_box(e.array_stats(a).expect("array_stats"));
        }),
    ];
    for (name, bytes, op) in ops {
        let mut g = c.benchmark_group(format!("{name}/{n}"));
        g.throughput(Throughput::Bytes(bytes * n as u64));
        g.sample_size(10);
        for e in engines() {
            let label = e.backend().to_string();
            let arr = e.upload_array(&data).expect("upload_array");
            g.bench_function(format!("device/{label}"), |b| b.iter(|| op(&e, &arr)));
        }
        g.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
