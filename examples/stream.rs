//! Frames in flight and the engine pool, end to end: a stream of host frames through
//! `brightest` (upload-bound) and through a w = 8 blur with its download, one call at a time
//! against [`Engine::stream`] with 1–4 frames in flight, and the pool (the GPU with the CPU
//! devices) against the GPU alone. Prints a table of milliseconds for the whole stream and
//! GB/s of frame bytes moved each way; checks that every mode gives the same results.
//!
//! `cargo run --release --example stream [-- --size 4096 --frames 64 --device nvidia]`

use clap::Parser;
use clpix::{Engine, EnginePool, GaussianBlur, PinnedImage, Resident};
use std::sync::Mutex;
use std::time::Instant;

/// A stream of host frames: one call at a time, in flight, and on a pool.
#[derive(Parser, Debug)]
#[command(name = "stream", version)]
struct Cli {
    /// Frame width and height.
    #[arg(long, default_value_t = 4096)]
    size: u32,
    /// Frames in the stream.
    #[arg(long, default_value_t = 64)]
    frames: usize,
    /// Distinct frames (the stream cycles through them).
    #[arg(long, default_value_t = 8)]
    distinct: usize,
    /// The device for the one-engine rows (index or part of its name, as CLPIX_DEVICE takes it);
    /// default: Engine::new()'s choice.
    #[arg(long)]
    device: Option<String>,
    /// Runs of each row (the table shows the median).
    #[arg(long, default_value_t = 5)]
    runs: usize,
    /// Leave out the pool of every device (no CPU device's engine in the process).
    #[arg(long)]
    no_pool: bool,
    /// Only the jobs whose name contains this (`brightest`, `blur`).
    #[arg(long, default_value = "")]
    only: String,
}

/// A job on a frame in pinned memory.
type PinnedJob<'a> = dyn Fn(&Engine, &&PinnedImage) -> clpix::Result<u64> + Sync + 'a;

type Job = fn(&Engine, &&image::RgbaImage) -> clpix::Result<u64>;

fn brightest(e: &Engine, f: &&image::RgbaImage) -> clpix::Result<u64> {
    let h = e.extreme(*f, clpix::Extreme::Brightest)?;
    Ok(((h.y as u64) << 32) | h.x as u64)
}

fn blur8(e: &Engine, f: &&image::RgbaImage) -> clpix::Result<u64> {
    let out = e.gaussian_blur(*f, &GaussianBlur::new(8))?;
    // A sample of the downloaded image, as for pinned frames: a checksum of every byte, one
    // after another, took 60-70 ms a 4096² frame on the host, more than the blur's whole trip
    // (the blur rows of the 2026-11-25 run measured that checksum, not the stream).
    Ok(sample(out.as_raw()))
}

/// The blur with its download into a host buffer that each thread reuses (pageable memory
/// already paged in): what the transfers cost without a fresh result's page faults.
fn blur8_reused(e: &Engine, f: &&image::RgbaImage) -> clpix::Result<u64> {
    thread_local! {
        static OUT: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
    }
    let dev = e.upload(*f)?;
    let blurred = e.gaussian_blur_device(&dev, &GaussianBlur::new(8))?;
    OUT.with_borrow_mut(|out| {
        out.resize(f.as_raw().len(), 0);
        e.download_into(&blurred, out)?;
        Ok(sample(out))
    })
}

/// One table row: the stream's time and the frames' bytes a second each way.
fn print_row(name: &str, mode: &str, ms: f64, bytes: f64, same: bool) {
    let same = if same { "yes" } else { "NO" };
    println!(
        "| {name} | {mode} | {ms:.1} | {:.1} | {same} |",
        bytes / ms / 1e6
    );
}

/// The rows of one engine: one call at a time, then `Engine::stream` with 1 to 4 frames in
/// flight. Returns the results of the calls one at a time (the others must equal them).
fn one_engine_rows<F: Copy + Send + Sync>(
    cli: &Cli,
    engine: &Engine,
    frames: &[F],
    name: &str,
    bytes: f64,
    job: &(dyn Fn(&Engine, &F) -> clpix::Result<u64> + Sync),
) -> Vec<clpix::Result<u64>> {
    let (ms, want) = time(cli.runs, || frames.iter().map(|f| job(engine, f)).collect());
    print_row(name, "one call at a time", ms, bytes, true);
    for k in 1..=4 {
        let (ms, got) = time(cli.runs, || {
            let mut out = Vec::new();
            let _ = engine.stream(frames.iter().copied(), k, job, |_, r| out.push(r));
            out
        });
        print_row(
            name,
            &format!("stream, {k} in flight"),
            ms,
            bytes,
            got == want,
        );
    }
    want
}

/// A checksum of 4096 bytes spread over an image.
fn sample(raw: &[u8]) -> u64 {
    let step = (raw.len() / 4096).max(1);
    raw.iter()
        .step_by(step)
        .fold(raw.len() as u64, |a, &b| a.rotate_left(5) ^ b as u64)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Milliseconds of the median run and the results of the last one.
fn time(
    runs: usize,
    mut f: impl FnMut() -> Vec<clpix::Result<u64>>,
) -> (f64, Vec<clpix::Result<u64>>) {
    let mut last = f(); // warm-up: kernels built, staging and lanes made
    let ms = (0..runs)
        .map(|_| {
            let t = Instant::now();
            last = f();
            t.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    (median(ms), last)
}

fn main() -> clpix::Result<()> {
    let cli = Cli::parse();
    let distinct: Vec<image::RgbaImage> = (0..cli.distinct.max(1))
        .map(|i| {
            image::RgbaImage::from_fn(cli.size, cli.size, |x, y| {
                let v =
                    (x.wrapping_mul(2654435761) ^ y.wrapping_mul(40503) ^ (i as u32 * 977)) >> 7;
                image::Rgba([v as u8, (v >> 8) as u8, (v >> 16) as u8, 255])
            })
        })
        .collect();
    let frames: Vec<&image::RgbaImage> = (0..cli.frames)
        .map(|i| &distinct[i % distinct.len()])
        .collect();
    if let Some(q) = &cli.device {
        // SAFETY: no OpenCL driver is loaded yet, and rayon's idle threads read no variable.
        unsafe {
            std::env::set_var("CLPIX_DEVICE", q);
            std::env::set_var("CLPIX_BACKEND", "opencl");
        }
    }
    let engine = Engine::new()?;
    let everything = match cli.no_pool {
        true => None,
        false => EnginePool::with_devices(&clpix::devices().unwrap_or_default()).ok(),
    };
    let alone = EnginePool::from_engines(vec![match engine.device() {
        Some(d) => Engine::with_device(d)?,
        None => Engine::cpu(),
    }])?;
    // Every GPU (EnginePool::new()), where there are two or more.
    let gpus = EnginePool::new().ok().filter(|p| p.engines().len() > 1);
    let bytes = cli.size as f64 * cli.size as f64 * 4.0 * cli.frames as f64;
    println!("engine: {}", engine.backend());
    if let Some(p) = &gpus {
        for e in p.engines() {
            println!("GPU pool engine: {}", e.backend());
        }
    }
    if let Some(p) = &everything {
        for e in p.engines() {
            println!("pool engine: {}", e.backend());
        }
    }
    println!(
        "{} frames of {}² RGBA8 ({:.0} MiB each), median of {} runs\n",
        cli.frames,
        cli.size,
        cli.size as f64 * cli.size as f64 * 4.0 / 1048576.0,
        cli.runs
    );
    println!("| job | mode | ms | GB/s each way | same results |");
    println!("|---|---|---|---|---|");
    for (name, job) in [
        ("brightest", brightest as Job),
        ("blur w=8 + download", blur8 as Job),
        (
            "blur w=8 + download into a reused buffer",
            blur8_reused as Job,
        ),
    ] {
        if !name.contains(&cli.only) {
            continue;
        }
        let want = one_engine_rows(&cli, &engine, &frames, name, bytes, &job);
        let row = |mode: &str, ms: f64, same: bool| print_row(name, mode, ms, bytes, same);
        for (label, pool) in [
            ("one engine", Some(&alone)),
            ("the GPUs", gpus.as_ref()),
            ("all devices", everything.as_ref()),
        ] {
            let Some(pool) = pool else { continue };
            let (ms, got) = time(cli.runs, || pool.map(&frames, job));
            row(&format!("pool map, {label}"), ms, got == want);
            let (ms, got) = time(cli.runs, || {
                let mut out = Vec::new();
                let _ = pool.stream(frames.iter().copied(), 3, job, |_, r| out.push(r));
                out
            });
            row(
                &format!("pool stream (3 in flight), {label}"),
                ms,
                got == want,
            );
        }
    }
    pinned_rows(&cli, &engine, &distinct, bytes)?;
    for (label, pool) in [("one GPU", Some(&alone)), ("the GPUs", gpus.as_ref())] {
        if let Some(pool) = pool {
            pinned_pool_rows(&cli, pool, label, &distinct, bytes)?;
        }
    }
    copy_probe(&distinct[0]);
    alloc_probe(cli.size as usize * cli.size as usize * 4);
    Ok(())
}

/// The host's memory bandwidth, the ceiling of a stream: a frame copied on one core and on all
/// (a pageable frame is copied once into pinned staging, then moved by DMA), read on all cores
/// (what DMA from pinned frames asks of the host's memory) and written on all cores (DMA into
/// pinned results).
fn copy_probe(frame: &image::RgbaImage) {
    use rayon::prelude::*;
    let src = frame.as_raw();
    let mut dst = vec![0u8; src.len()];
    dst.par_chunks_mut(1 << 20).for_each(|c| c.fill(1));
    let threads = rayon::current_num_threads();
    let runs = 8;
    let mut rate = |label: &str, f: &mut dyn FnMut(&mut [u8])| {
        let t = Instant::now();
        for _ in 0..runs {
            f(&mut dst);
            std::hint::black_box(&dst);
        }
        let secs = t.elapsed().as_secs_f64() / runs as f64;
        println!(
            "host {label}, {} MiB frame: {:.1} GB/s of frame bytes",
            src.len() >> 20,
            src.len() as f64 / secs / 1e9
        );
    };
    rate("copy, one core", &mut |d| d.copy_from_slice(src));
    rate(&format!("copy, all cores ({threads} threads)"), &mut |d| {
        d.par_chunks_mut(1 << 20)
            .zip(src.par_chunks(1 << 20))
            .for_each(|(d, s)| d.copy_from_slice(s))
    });
    rate(&format!("read, all cores ({threads} threads)"), &mut |_| {
        let sum: u64 = src
            .par_chunks(1 << 20)
            .map(|c| {
                let (_, words, _) = bytemuck::pod_align_to::<u8, u64>(c);
                words.iter().fold(0u64, |a, &w| a.wrapping_add(w))
            })
            .reduce(|| 0, u64::wrapping_add);
        std::hint::black_box(sum);
    });
    rate(&format!("write, all cores ({threads} threads)"), &mut |d| {
        d.par_chunks_mut(1 << 20).for_each(|c| c.fill(3))
    });
}

/// A pool's stream from a ring of pinned frames spread over its engines
/// ([`EnginePool::pinned_images`], [`EnginePool::stream_resident`]): each frame runs on the
/// engine that pinned it; the blur downloads into pinned frames of the same engine.
fn pinned_pool_rows(
    cli: &Cli,
    pool: &EnginePool,
    label: &str,
    distinct: &[image::RgbaImage],
    bytes: f64,
) -> clpix::Result<()> {
    // A ring of at least 2 frames an engine.
    let n = pool.engines().len();
    let ring = pool.pinned_images(distinct.len().max(2 * n), cli.size, cli.size)?;
    let ring = filled(ring, distinct)?;
    let frames: Vec<&PinnedImage> = (0..cli.frames).map(|i| &ring[i % ring.len()]).collect();
    let outs: Mutex<Vec<PinnedImage>> = Mutex::new(Vec::new());
    let blur = blur_into_pinned(&outs, cli.size);
    for (name, job) in pinned_jobs(cli, &blur) {
        // The results one call at a time on the first engine (plain host reads elsewhere).
        let want: Vec<_> = frames.iter().map(|f| job(&pool.engines()[0], f)).collect();
        for k in [2, 3, 4] {
            let (ms, got) = time(cli.runs, || {
                let mut out = Vec::new();
                let _ = pool.stream_resident(frames.iter().copied(), k, job, |_, r| out.push(r));
                out
            });
            let mode = format!("pool stream_resident ({k} in flight a GPU), {label}");
            print_row(name, &mode, ms, bytes, got == want);
        }
    }
    Ok(())
}

/// What a fresh host result costs: 16 allocations of a frame's bytes, each written on all
/// cores (as a download's copy out of the staging does), plain and advised to use
/// transparent huge pages (as clpix's large results are).
fn alloc_probe(bytes: usize) {
    use rayon::prelude::*;
    for f in ["enabled", "defrag"] {
        let path = format!("/sys/kernel/mm/transparent_hugepage/{f}");
        println!(
            "{path}: {}",
            std::fs::read_to_string(&path).unwrap_or_default().trim()
        );
    }
    for huge in [false, true] {
        let t = Instant::now();
        for _ in 0..16 {
            let mut v = vec![0u8; bytes];
            #[cfg(target_os = "linux")]
            if huge {
                let start = (v.as_ptr() as usize).next_multiple_of(2 << 20);
                let end = (v.as_ptr() as usize + bytes) / (2 << 20) * (2 << 20);
                if end > start {
                    // SAFETY: advice on whole pages inside the live allocation.
                    unsafe {
                        libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE)
                    };
                }
            }
            v.par_chunks_mut(1 << 20).for_each(|c| c.fill(1));
            std::hint::black_box(&v);
        }
        let ms = t.elapsed().as_secs_f64() * 1e3 / 16.0;
        println!(
            "fresh {} MiB result, written on all cores, huge pages {huge}: {ms:.2} ms",
            bytes >> 20
        );
    }
}

/// The brightest pixel of a pinned frame, as a number.
fn brightest_pinned(e: &Engine, f: &&PinnedImage) -> clpix::Result<u64> {
    let h = e.extreme(*f, clpix::Extreme::Brightest)?;
    Ok(((h.y as u64) << 32) | h.x as u64)
}

/// A w = 8 blur of a pinned frame, downloaded into a pinned frame of the same engine (taken
/// from `outs`, or made), sampled.
fn blur_into_pinned(
    outs: &Mutex<Vec<PinnedImage>>,
    size: u32,
) -> impl Fn(&Engine, &&PinnedImage) -> clpix::Result<u64> + Sync + '_ {
    move |e: &Engine, f: &&PinnedImage| {
        let dev = e.upload(*f)?;
        let blurred = e.gaussian_blur_device(&dev, &GaussianBlur::new(8))?;
        let taken = outs.lock().ok().and_then(|mut o| {
            let at = o.iter().position(|p| p.resident_on(e))?;
            Some(o.swap_remove(at))
        });
        let mut out = match taken {
            Some(o) => o,
            None => e.pinned_image(size, size)?,
        };
        e.download_into(&blurred, out.as_bytes_mut())?;
        let sum = sample(out.as_bytes());
        if let Ok(mut o) = outs.lock() {
            o.push(out);
        }
        Ok(sum)
    }
}

/// The same streams from frames in pinned memory (a ring of them, as a camera would fill), the
/// blur downloading into pinned frames too.
fn pinned_rows(
    cli: &Cli,
    engine: &Engine,
    distinct: &[image::RgbaImage],
    bytes: f64,
) -> clpix::Result<()> {
    let ring = distinct
        .iter()
        .map(|img| engine.pinned_image(img.width(), img.height()))
        .collect::<clpix::Result<Vec<_>>>()?;
    let ring = filled(ring, distinct)?;
    let frames: Vec<&PinnedImage> = (0..cli.frames).map(|i| &ring[i % ring.len()]).collect();
    let outs: Mutex<Vec<PinnedImage>> = Mutex::new(Vec::new());
    let blur = blur_into_pinned(&outs, cli.size);
    for (name, job) in pinned_jobs(cli, &blur) {
        one_engine_rows(cli, engine, &frames, name, bytes, job);
    }
    Ok(())
}

/// `ring` with frame i holding distinct image i mod their count.
fn filled(
    mut ring: Vec<PinnedImage>,
    distinct: &[image::RgbaImage],
) -> clpix::Result<Vec<PinnedImage>> {
    for (i, p) in ring.iter_mut().enumerate() {
        p.copy_from(&distinct[i % distinct.len()])?;
    }
    Ok(ring)
}

/// The jobs on pinned frames whose names contain `--only`: brightest, and `blur`.
fn pinned_jobs<'a>(cli: &Cli, blur: &'a PinnedJob<'a>) -> Vec<(&'static str, &'a PinnedJob<'a>)> {
    let jobs: [(&'static str, &'a PinnedJob<'a>); 2] = [
        ("brightest, pinned frames", &brightest_pinned),
        ("blur w=8, pinned in and out", blur),
    ];
    jobs.into_iter()
        .filter(|(name, _)| name.contains(&cli.only))
        .collect()
}
