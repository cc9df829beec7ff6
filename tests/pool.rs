//! The engine pool and frames in flight: results equal one engine's, in order, on every device
//! found (two implementations at once where `OCL_ICD_VENDORS` lists both), with per-frame
//! errors, a device that fails mid-batch, bounded memory and panics raised again.

mod common;

use clpix::tuning::Tuning;
use clpix::{
    Border, Engine, EngineConfig, EnginePool, Error, GaussianBlur, KernelLayout, Resident,
};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Images of several sizes and contents (the first and last tiny, one empty).
fn frames(n: usize) -> Vec<image::RgbaImage> {
    (0..n)
        .map(|i| {
            let (w, h) = match i % 5 {
                0 => (1, 1),
                1 => (97, 31),
                2 => (256, 64),
                3 => (33, 130),
                _ => (64, 64),
            };
            let mut s = 0x9e37_79b9_7f4a_7c15u64 ^ i as u64;
            image::RgbaImage::from_fn(w, h, |_, _| {
                let v = common::splitmix(&mut s);
                image::Rgba([(v >> 8) as u8, (v >> 16) as u8, (v >> 24) as u8, 255])
            })
        })
        .collect()
}

/// Several operations' results on one frame, as text (values and errors alike).
fn job(e: &Engine, img: &image::RgbaImage) -> clpix::Result<String> {
    let hit = e.extreme(img, clpix::Extreme::Brightest)?;
    let hist = e.histogram_rgba(img)?;
    let blur = GaussianBlur::new(3).border(Border::Reflect);
    let blurred = e.gaussian_blur(img, &blur)?;
    let kept = e.compact(img, 600, clpix::CompactOrder::ScanOrder)?;
    Ok(format!(
        "{hit:?} {:?} {:?} {}",
        &hist.counts[0][..8],
        &blurred.as_raw()[..blurred.as_raw().len().min(64)],
        kept.len()
    ))
}

/// The engines to run on: rayon and every OpenCL device (required in CI).
fn engines() -> Vec<Engine> {
    let mut engines = vec![Engine::cpu()];
    for d in common::test_devices().unwrap_or_default() {
        engines.push(Engine::with_device(&d).expect("device opens"));
    }
    if std::env::var("CLPIX_REQUIRE_OPENCL").is_ok_and(|v| v != "0") {
        assert!(engines.len() > 1, "OpenCL required, none found");
    }
    engines
}

fn expected(imgs: &[image::RgbaImage]) -> Vec<clpix::Result<String>> {
    let cpu = Engine::cpu();
    imgs.iter().map(|i| job(&cpu, i)).collect()
}

#[test]
fn a_stream_gives_each_frames_result_in_order() {
    let imgs = frames(23);
    let want = expected(&imgs);
    for e in engines() {
        for in_flight in [1, 3, 8] {
            let mut got = Vec::new();
            e.stream(
                imgs.iter(),
                in_flight,
                |e, img| job(e, img),
                |i, r| {
                    assert_eq!(i, got.len(), "in order");
                    got.push(r);
                },
            )
            .unwrap();
            assert_eq!(got, want, "{} in_flight {in_flight}", e.backend());
        }
    }
}

#[test]
fn a_frames_error_is_its_own_and_later_frames_are_unaffected() {
    let mut imgs = frames(9);
    imgs[4] = image::RgbaImage::new(0, 0);
    for e in engines() {
        let mut got = Vec::new();
        e.stream(
            imgs.iter(),
            3,
            |e, img| e.extreme(*img, clpix::Extreme::Brightest),
            |_, r| got.push(r),
        )
        .unwrap();
        assert!(
            matches!(got[4], Err(Error::EmptyImage { .. })),
            "{:?}",
            got[4]
        );
        for (i, img) in imgs.iter().enumerate().filter(|&(i, _)| i != 4) {
            assert_eq!(
                got[i],
                Engine::cpu().extreme(img, clpix::Extreme::Brightest),
                "{}",
                e.backend()
            );
        }
    }
}

#[test]
fn a_stream_holds_at_most_its_window() {
    for e in engines() {
        let pulled = Arc::new(AtomicUsize::new(0));
        let p = pulled.clone();
        let source = (0..40u32).map(move |i| {
            p.fetch_add(1, Ordering::SeqCst);
            vec![i; 1000]
        });
        let mut delivered = 0;
        e.stream(
            source,
            4,
            |e, a| e.array_stats(a),
            |i, r| {
                assert_eq!(r.unwrap().max, i as u32);
                delivered += 1;
                let in_memory = pulled.load(Ordering::SeqCst) - (delivered - 1);
                assert!(in_memory <= 4, "{in_memory} frames held");
            },
        )
        .unwrap();
        assert_eq!(delivered, 40);
    }
}

#[test]
fn zero_frames_in_flight_is_an_error_and_no_frames_is_no_results() {
    let e = Engine::cpu();
    let r = e.stream(
        frames(2),
        0,
        |e, f| e.extreme(f, clpix::Extreme::Brightest),
        |_, _| {},
    );
    assert!(matches!(r, Err(Error::InvalidParameter { .. })), "{r:?}");
    let mut n = 0;
    e.stream(
        Vec::<image::RgbaImage>::new(),
        2,
        |e, f| e.extreme(f, clpix::Extreme::Brightest),
        |_, _| n += 1,
    )
    .unwrap();
    assert_eq!(n, 0);
    assert!(EnginePool::from_engines(Vec::new()).is_err());
}

#[test]
#[should_panic(expected = "frame 5 panicked")]
fn a_panic_in_a_job_is_raised_again() {
    let pool = EnginePool::from_engines(engines()).unwrap();
    let inputs: Vec<u32> = (0..12).collect();
    let _ = pool.map(&inputs, |_, &i| {
        assert!(i != 5, "frame 5 panicked");
        Ok(i)
    });
}

#[test]
fn the_pool_gives_one_engines_results_in_order() {
    let imgs = frames(31);
    let want = expected(&imgs);
    let pool = EnginePool::from_engines(engines()).unwrap();
    assert_eq!(pool.map(&imgs, job), want);
    let mut got = Vec::new();
    pool.stream(imgs.iter(), 2, |e, img| job(e, img), |_, r| got.push(r))
        .unwrap();
    assert_eq!(got, want);
    // The default pool too (GPUs, else one engine).
    let default = EnginePool::new().unwrap();
    assert_eq!(default.map(&imgs, job), want);
}

/// An OpenCL engine whose histogram program cannot be read (a kernel folder without it), with
/// no CPU fallback: every histogram job fails on it with `KernelSource`.
fn broken_engines() -> Vec<Engine> {
    let dir = common::kernel_dir_copy("pool-broken", |_, _| {});
    std::fs::remove_file(dir.join("histogram/histogram.cl")).unwrap();
    let mut tuning = Tuning::default();
    tuning.kernel_dir = Some(dir);
    let config = EngineConfig {
        max_buffer_bytes: None,
        layout: KernelLayout::Auto,
        tuning: Some(tuning),
        cpu_fallback: false,
    };
    common::test_devices()
        .unwrap_or_default()
        .iter()
        .map(|d| Engine::with_device_config(d, &config).expect("device opens"))
        .collect()
}

#[test]
fn a_device_that_fails_mid_batch_loses_and_reorders_nothing() {
    let imgs = frames(17);
    let cpu = Engine::cpu();
    let want: Vec<_> = imgs.iter().map(|i| cpu.histogram_rgba(i)).collect();
    for broken in broken_engines() {
        let e = broken.histogram_rgba(&imgs[1]);
        assert!(matches!(e, Err(Error::KernelSource { .. })), "{e:?}");
        let name = broken.backend().to_string();
        // The broken engine first, then the good ones: every job it takes moves on.
        let mut all = vec![broken];
        all.extend(engines());
        let pool = EnginePool::from_engines(all).unwrap();
        assert_eq!(pool.map(&imgs, |e, i| e.histogram_rgba(i)), want, "{name}");
        let mut got = Vec::new();
        pool.stream(
            imgs.iter(),
            3,
            |e, i| e.histogram_rgba(*i),
            |_, r| got.push(r),
        )
        .unwrap();
        assert_eq!(got, want, "{name}");
        // Alone, it reports each job's failure and goes on with the next.
        let alone =
            EnginePool::from_engines(broken_engines().into_iter().take(1).collect()).unwrap();
        let got = alone.map(&imgs, |e, i| e.histogram_rgba(i));
        assert!(
            got.iter()
                .all(|r| matches!(r, Err(Error::KernelSource { .. })))
        );
        let got = alone.map(&imgs, |e, i| e.extreme(i, clpix::Extreme::Brightest));
        assert!(
            got.iter().all(|r| r.is_ok()),
            "its other programs still run"
        );
    }
}

/// Pinned images: every operation on one gives the bits it gives on the same pixels in a
/// plain image, and device images download into one; on GPU-layout engines with staging on
/// (small slots), so that transfers from and to pinned memory bypass the staging for real.
#[test]
fn pinned_images_give_the_same_results() {
    let mut tuning = Tuning::default();
    tuning.staging = clpix::tuning::Staging::SlotKib(16);
    let mut all = engines();
    all.extend(common::gpu_layout_engines_tuned(&tuning));
    for (i, src) in frames(6).iter().enumerate() {
        for e in &all {
            let mut pinned = e.pinned_image(src.width(), src.height()).unwrap();
            assert!(pinned.as_bytes().iter().all(|&b| b == 0));
            pinned.copy_from(src).unwrap();
            assert_eq!(pinned.as_bytes(), src.as_raw().as_slice());
            assert_eq!(
                common::every_op(e, (&pinned).into()),
                common::every_op(&Engine::cpu(), src.into()),
                "{} frame {i}",
                e.backend()
            );
            // Device image -> pinned, and back through an operation on the device.
            let dev = e.upload(&pinned).unwrap();
            let blurred = e.gaussian_blur_device(&dev, &GaussianBlur::new(2)).unwrap();
            let mut out = e.pinned_image(src.width(), src.height()).unwrap();
            e.download_into(&blurred, out.as_bytes_mut()).unwrap();
            let want = Engine::cpu()
                .gaussian_blur(src, &GaussianBlur::new(2))
                .unwrap();
            assert_eq!(out.as_bytes(), want.as_raw().as_slice(), "{}", e.backend());
            let short = e.download_into(&blurred, &mut vec![0u8; out.as_bytes().len() + 1]);
            assert!(
                matches!(short, Err(Error::InvalidParameter { .. })),
                "{short:?}"
            );
        }
    }
    let mut p = Engine::cpu().pinned_image(2, 2).unwrap();
    assert!(p.copy_from(&image::RgbaImage::new(3, 2)).is_err());
    assert!(Engine::cpu().pinned_image(u32::MAX, 2).is_err());
}

/// Results as an iterator: in order, equal to the calls one at a time; dropped early, the
/// stream stops taking frames; a job's panic comes out of `next`.
#[test]
fn stream_iter_yields_in_order_and_stops_when_dropped() {
    let imgs = frames(13);
    let want = expected(&imgs);
    for e in engines() {
        let e = Arc::new(e);
        let got: Vec<_> = e
            .clone()
            .stream_iter(imgs.clone(), 3, job)
            .unwrap()
            .collect();
        assert_eq!(got, want, "{}", e.backend());
        let pulled = Arc::new(AtomicUsize::new(0));
        let p = pulled.clone();
        let source = (0..1000u32).map(move |i| {
            p.fetch_add(1, Ordering::SeqCst);
            vec![i; 64]
        });
        let mut it = e
            .clone()
            .stream_iter(source, 2, |e, a| e.array_stats(a))
            .unwrap();
        assert_eq!(it.next().unwrap().unwrap().max, 0);
        assert_eq!(it.next().unwrap().unwrap().max, 1);
        drop(it);
        let n = pulled.load(Ordering::SeqCst);
        assert!(n < 20, "{n} frames taken after the results were dropped");
        assert!(
            e.clone()
                .stream_iter(Vec::<u8>::new(), 0, |_, _| Ok(()))
                .is_err()
        );
    }
}

#[test]
#[should_panic(expected = "frame 3 panicked")]
fn a_panic_in_a_stream_iter_job_comes_out_of_next() {
    let e = Arc::new(Engine::cpu());
    let it = e.stream_iter(0..8u32, 2, |_, &i| {
        assert!(i != 3, "frame 3 panicked");
        Ok(i)
    });
    for r in it.unwrap() {
        let _ = r;
    }
}

/// Frames held by one engine of a pool run on that engine: images uploaded to each of two
/// engines per device (and rayon's, which no engine holds) through `stream_resident` and
/// `map_resident` give one engine's results in order, each on the engine that holds it; pinned
/// frames from `pinned_images` too. Where an engine fails, its frames go to another.
#[test]
fn resident_frames_run_on_the_engine_that_holds_them() {
    let imgs = frames(13);
    let want = expected(&imgs);
    let mut two = Vec::new();
    for d in common::test_devices().unwrap_or_default() {
        two.push(Engine::with_device(&d).expect("device opens"));
        two.push(Engine::with_device(&d).expect("device opens"));
    }
    two.push(Engine::cpu());
    let pool = EnginePool::from_engines(two).unwrap();
    let n = pool.engines().len();
    // Frame i on engine i mod n (the last, rayon's, holds nothing).
    let held: Vec<clpix::DeviceImage> = imgs
        .iter()
        .enumerate()
        .map(|(i, img)| pool.engines()[i % n].upload(img).unwrap())
        .collect();
    let strays = AtomicUsize::new(0);
    let run = |e: &Engine, f: &&clpix::DeviceImage| {
        let i = held.iter().position(|h| std::ptr::eq(h, *f)).unwrap();
        let home = i % n;
        if home != n - 1 && !std::ptr::eq(e, &pool.engines()[home]) {
            strays.fetch_add(1, Ordering::Relaxed);
        }
        let img = e.download(f)?;
        job(e, &img)
    };
    let mut got = Vec::new();
    pool.stream_resident(held.iter(), 2, run, |_, r| got.push(r))
        .unwrap();
    assert_eq!(got, want);
    let refs: Vec<&clpix::DeviceImage> = held.iter().collect();
    assert_eq!(pool.map_resident(&refs, run), want);
    assert_eq!(
        strays.load(Ordering::Relaxed),
        0,
        "a frame ran away from home"
    );
    // Pinned frames spread over the engines, each filled with one image.
    let same: Vec<image::RgbaImage> = (0..7).map(|_| imgs[1].clone()).collect();
    let mut ring = pool
        .pinned_images(7, imgs[1].width(), imgs[1].height())
        .unwrap();
    for (i, p) in ring.iter_mut().enumerate() {
        p.copy_from(&same[i]).unwrap();
        let pinned_by = pool.engines().iter().filter(|e| p.resident_on(e)).count();
        assert!(pinned_by <= 1, "frame {i} pinned by {pinned_by} engines");
    }
    let mut got = Vec::new();
    pool.stream_resident(
        ring.iter(),
        3,
        |e, f| job(e, &e.download(&e.upload(*f)?)?),
        |_, r| got.push(r),
    )
    .unwrap();
    assert_eq!(got, expected(&same));
    // A broken engine's frames (its histogram program missing) go to the others once it fails.
    let cpu = Engine::cpu();
    for broken in broken_engines() {
        let name = broken.backend().to_string();
        let mut all = vec![broken];
        all.extend(engines());
        let pool = EnginePool::from_engines(all).unwrap();
        let held: Vec<clpix::DeviceImage> = imgs
            .iter()
            .enumerate()
            .map(|(i, img)| pool.engines()[i % 2].upload(img).unwrap())
            .collect();
        let want: Vec<_> = imgs.iter().map(|i| cpu.histogram_rgba(i)).collect();
        let mut got = Vec::new();
        pool.stream_resident(
            held.iter(),
            2,
            |e, f| e.histogram_rgba(*f),
            |_, r| got.push(r),
        )
        .unwrap();
        assert_eq!(got, want, "{name}");
    }
}
