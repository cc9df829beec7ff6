//! The rows of the other pixel formats (`--ops formats`): the reductions of mono8, mono16,
//! mono f32, RGB8, RGBA16 and RGBA f32 host frames, end to end and kernel only, beside RGBA8's.

use super::*;
use clpix::{Extreme, ImageView, Pixel};
use image::{Luma, Rgb, Rgba};

/// Random channels for a `size`² frame of `P`: f32 values in 0..1 (a processed frame).
fn frame<P: Pixel>(size: u32, seed: u64) -> Vec<P::Subpixel>
where
    P::Subpixel: bytemuck::Pod,
{
    let n = size as usize * size as usize * P::FORMAT.channels();
    let mut s = seed | 1;
    let mut next = move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s
    };
    let mut out = vec![<P::Subpixel as bytemuck::Zeroable>::zeroed(); n];
    if P::FORMAT.is_float() {
        for v in bytemuck::cast_slice_mut::<P::Subpixel, f32>(&mut out) {
            *v = (next() >> 40) as f32 / (1u64 << 24) as f32;
        }
    } else {
        for chunk in bytemuck::cast_slice_mut::<P::Subpixel, u8>(&mut out).chunks_mut(8) {
            let b = next().to_le_bytes();
            chunk.copy_from_slice(&b[..chunk.len()]);
        }
    }
    out
}

fn rows_of<P: Pixel>(engines: &[Engine], size: u32, reps: usize) -> Vec<String>
where
    P::Subpixel: bytemuck::Pod,
{
    let data = frame::<P>(size, 0x9e37_79b9);
    let bpp = P::FORMAT.bytes_per_pixel();
    let Ok(view) = ImageView::<P>::from_channels(&data, size, size, size as usize * bpp) else {
        return vec![format!("| {} | frame too large |", P::FORMAT.name())];
    };
    type Run<P> = fn(&Engine, ImageView<'_, P>) -> clpix::Result<()>;
    let ops: [(&str, Run<P>); 3] = [
        ("brightest", |e, v| {
            e.extreme(v, Extreme::Brightest).map(drop)
        }),
        ("darkest", |e, v| e.extreme(v, Extreme::Darkest).map(drop)),
        ("luminance_stats", |e, v| e.luminance_stats(v).map(drop)),
    ];
    let pixels = size as f64 * size as f64;
    let mut lines = Vec::new();
    for (name, run) in ops {
        for e in engines {
            let backend = match e.device() {
                Some(d) => format!("OpenCL {}", d.name),
                None => format!("rayon {} threads", rayon::current_num_threads()),
            };
            let row = (|| -> clpix::Result<String> {
                let wall = time(e, reps, || run(e, view))?;
                let kernel = match e.device() {
                    Some(_) => {
                        let mut ks = Vec::new();
                        for _ in 0..reps {
                            run(e, view)?;
                            ks.push(kernel_times(e));
                        }
                        kernel_cell(ks)
                    }
                    None => "-".into(),
                };
                let s = wall.as_secs_f64();
                Ok(format!(
                    "| {name} {} | Random | {backend} | {:.3} ms | {:.2} | {:.1} | {kernel} | {:.3} ms |",
                    P::FORMAT.name(),
                    s * 1e3,
                    pixels / s / 1e9,
                    pixels * bpp as f64 / s / 1e9,
                    s * 1e3
                ))
            })();
            lines.push(row.unwrap_or_else(|err| {
                format!(
                    "| {name} {} | Random | {backend} | error: {err} | | | | |",
                    P::FORMAT.name()
                )
            }));
            println!("{}", lines[lines.len() - 1]);
        }
    }
    lines
}

/// One row: `run` on `e`, its median wall time and (on OpenCL) its kernel times, labelled
/// `name` and `content`; an error is a row that says so. Printed as it is made.
pub(super) fn timed_row(
    e: &Engine,
    name: &str,
    content: &str,
    reps: usize,
    run: impl Fn() -> clpix::Result<()>,
) -> String {
    let backend = match e.device() {
        Some(d) => format!("OpenCL {}", d.name),
        None => format!("rayon {} threads", rayon::current_num_threads()),
    };
    let row = (|| -> clpix::Result<String> {
        let wall = time(e, reps, &run)?;
        let mut ks = Vec::new();
        if e.device().is_some() {
            for _ in 0..reps {
                run()?;
                ks.push(kernel_times(e));
            }
        }
        let kernel = if ks.is_empty() {
            "-".into()
        } else {
            kernel_cell(ks)
        };
        Ok(format!(
            "| {name} | {content} | {backend} | {:.3} ms | | | {kernel} | |",
            wall.as_secs_f64() * 1e3
        ))
    })();
    let line = row
        .unwrap_or_else(|err| format!("| {name} | {content} | {backend} | error: {err} | | | | |"));
    println!("{line}");
    line
}

/// The mono16 histograms of issue 53's targets: 256, 4,096 and 65,536 bins over 0..=65535, of a
/// random and a constant frame.
fn histogram_rows(engines: &[Engine], size: u32, reps: usize) -> Vec<String> {
    let random = frame::<Luma<u16>>(size, 0x51ed_270b);
    let constant = vec![40_000u16; random.len()];
    let mut lines = Vec::new();
    for (content, data) in [("Random", &random), ("Constant", &constant)] {
        let Ok(view) = ImageView::<Luma<u16>>::from_channels(data, size, size, size as usize * 2)
        else {
            continue;
        };
        for bins in [256u32, 4096, 65_536] {
            let Ok(b) = clpix::Bins::new(bins, 0.0, 65_535.0) else {
                continue;
            };
            for e in engines {
                let name = format!("histogram mono16 {bins} bins");
                lines.push(timed_row(e, &name, content, reps, || {
                    e.histogram_keys(view, b).map(drop)
                }));
            }
        }
    }
    lines
}

/// The blur of mono8, mono16, mono f32 and RGB8 frames at w = 2, 8 and 25 (issue 53's
/// targets against NPP's row and column filters of the type), end to end and kernel only.
fn blur_rows(engines: &[Engine], size: u32, reps: usize) -> Vec<String> {
    fn of<P: Pixel>(engines: &[Engine], size: u32, reps: usize, lines: &mut Vec<String>) {
        let data = frame::<P>(size, 0x2545_f491);
        let stride = size as usize * P::FORMAT.bytes_per_pixel();
        let Ok(view) = ImageView::<P>::from_channels(&data, size, size, stride) else {
            return;
        };
        for w in [2u32, 8, 25] {
            let blur = clpix::GaussianBlur::new(w);
            for e in engines {
                let name = format!("blur {} w={w}", P::FORMAT.name());
                lines.push(timed_row(e, &name, "Random", reps, || {
                    e.gaussian_blur(view, &blur).map(drop)
                }));
            }
        }
    }
    let mut lines = Vec::new();
    of::<Luma<u8>>(engines, size, reps, &mut lines);
    of::<Luma<u16>>(engines, size, reps, &mut lines);
    of::<Luma<f32>>(engines, size, reps, &mut lines);
    of::<Rgb<u8>>(engines, size, reps, &mut lines);
    of::<Rgba<u16>>(engines, size, reps, &mut lines);
    lines
}

/// Every format's rows: the host frame end to end (upload, kernel, results), the kernel alone.
pub(super) fn format_rows(engines: &[Engine], size: u32, reps: usize) -> Vec<String> {
    let mut lines = Vec::new();
    lines.extend(rows_of::<Luma<u8>>(engines, size, reps));
    lines.extend(rows_of::<Luma<u16>>(engines, size, reps));
    lines.extend(rows_of::<Luma<f32>>(engines, size, reps));
    lines.extend(rows_of::<Rgb<u8>>(engines, size, reps));
    lines.extend(rows_of::<Rgba<u8>>(engines, size, reps));
    lines.extend(rows_of::<Rgba<u16>>(engines, size, reps));
    lines.extend(rows_of::<Rgba<f32>>(engines, size, reps));
    lines.extend(histogram_rows(engines, size, reps));
    lines.extend(blur_rows(engines, size, reps));
    lines.extend(compact_rows(engines, size, reps));
    lines
}

/// The compaction of a random mono16 frame above 64,880 (about 1% kept), issue 53's target
/// against CUB's `DeviceSelect::If` on the same data (`formats_anchor.cu`), in both orders.
fn compact_rows(engines: &[Engine], size: u32, reps: usize) -> Vec<String> {
    let data = frame::<Luma<u16>>(size, 0x7f4a_7c15);
    let mut lines = Vec::new();
    let Ok(view) = ImageView::<Luma<u16>>::from_channels(&data, size, size, size as usize * 2)
    else {
        return lines;
    };
    for (name, order) in [
        ("compact mono16 > 64880", clpix::CompactOrder::ScanOrder),
        (
            "compact_sorted mono16 > 64880",
            clpix::CompactOrder::LuminanceDescending,
        ),
    ] {
        for e in engines {
            lines.push(timed_row(e, name, "Random", reps, || {
                e.compact(view, 64_880, order).map(drop)
            }));
        }
    }
    // The 64 brightest and darkest at least 8 pixels apart: mono16 beside RGBA8's tuned path.
    let rgba = frame::<Rgba<u8>>(size, 0x7f4a_7c15);
    let Ok(rgba) = ImageView::<Rgba<u8>>::from_channels(&rgba, size, size, size as usize * 4)
    else {
        return lines;
    };
    for (name, end) in [
        ("brightest", Extreme::Brightest),
        ("darkest", Extreme::Darkest),
    ] {
        for e in engines {
            let row = format!("extremes {name} k 64 d 8 mono16");
            lines.push(timed_row(e, &row, "Random", reps, || {
                e.extremes(view, end, 64, 8.0).map(drop)
            }));
            let row = format!("extremes {name} k 64 d 8 RGBA8");
            lines.push(timed_row(e, &row, "Random", reps, || {
                e.extremes(rgba, end, 64, 8.0).map(drop)
            }));
        }
    }
    lines
}

/// The compaction and k-brightest rows alone (`--ops format_compact`).
pub(super) fn format_compact_rows(engines: &[Engine], size: u32, reps: usize) -> Vec<String> {
    compact_rows(engines, size, reps)
}

/// The blur rows alone (`--ops format_blur`).
pub(super) fn format_blur_rows(engines: &[Engine], size: u32, reps: usize) -> Vec<String> {
    blur_rows(engines, size, reps)
}

/// The same calls on a mono16 frame from the host, from page-locked memory
/// (`PinnedImage<Luma<u16>>`) and held by the engine (`DeviceImage<Luma<u16>>`), end to end
/// (`--ops format_held`): what an image kept on the device saves.
pub(super) fn format_held_rows(engines: &[Engine], size: u32, reps: usize) -> Vec<String> {
    let data = frame::<Luma<u16>>(size, 0x7f4a_7c15);
    let mut lines = Vec::new();
    let Ok(view) = ImageView::<Luma<u16>>::from_channels(&data, size, size, size as usize * 2)
    else {
        return lines;
    };
    let bins = clpix::Bins::new(4096, 0.0, 65_535.0);
    let blur = clpix::GaussianBlur::new(8);
    let blobs = clpix::BlobOptions::new().stats_only();
    for e in engines {
        let (Ok(held), Ok(mut pinned)) = (e.upload(view), e.pinned_image_of(size, size)) else {
            continue;
        };
        if pinned.copy_from(view).is_err() {
            continue;
        }
        macro_rules! three {
            ($name:expr, |$img:ident| $call:expr) => {{
                let name = format!("{} mono16", $name);
                let $img = view;
                lines.push(timed_row(e, &name, "host", reps, || $call.map(drop)));
                let $img = &pinned;
                lines.push(timed_row(e, &name, "pinned", reps, || $call.map(drop)));
                let $img = &held;
                lines.push(timed_row(e, &name, "held", reps, || $call.map(drop)));
            }};
        }
        three!("brightest", |img| e.extreme(img, Extreme::Brightest));
        three!("luminance_stats", |img| e.luminance_stats(img));
        if let Ok(b) = bins {
            three!("histogram_keys 4096 bins", |img| e.histogram_keys(img, b));
        }
        three!("compact > 64880", |img| e.compact(
            img,
            64_880,
            clpix::CompactOrder::ScanOrder
        ));
        three!("extremes k 64 d 8", |img| e.extremes(
            img,
            Extreme::Brightest,
            64,
            8.0
        ));
        three!("blur w=8", |img| e.gaussian_blur(img, &blur));
        three!("blur w=8 kept on the engine", |img| e
            .gaussian_blur_device(img, &blur));
        three!("blobs > 60000 stats", |img| e.blobs(img, 60_000, &blobs));
        // 64 windows of 17² around places on a grid (the k brightest's hits, say).
        let points: Vec<(u32, u32)> = (0..64u32)
            .map(|i| {
                (
                    (i % 8) * size / 8 + size / 16,
                    (i / 8) * size / 8 + size / 16,
                )
            })
            .collect();
        three!("centroids of 64 windows r=8", |img| e
            .centroids(img, &points, 8, 0));
    }
    lines.extend(brightest_from_everywhere::<Luma<u8>>(engines, size, reps));
    lines.extend(brightest_from_everywhere::<Rgba<u8>>(engines, size, reps));
    lines
}

/// The brightest of a `P` frame from the host, from page-locked memory and held by the engine
/// (issue 53: mono8 from the host in at most 30% of RGBA8's time).
fn brightest_from_everywhere<P: Pixel>(engines: &[Engine], size: u32, reps: usize) -> Vec<String>
where
    P::Subpixel: bytemuck::Pod,
{
    let data = frame::<P>(size, 0x2545_f491);
    let stride = size as usize * P::FORMAT.bytes_per_pixel();
    let mut lines = Vec::new();
    let Ok(view) = ImageView::<P>::from_channels(&data, size, size, stride) else {
        return lines;
    };
    let name = format!("brightest {}", P::FORMAT.name());
    for e in engines {
        let (Ok(held), Ok(mut pinned)) = (e.upload(view), e.pinned_image_of::<P>(size, size))
        else {
            continue;
        };
        if pinned.copy_from(view).is_err() {
            continue;
        }
        lines.push(timed_row(e, &name, "host", reps, || {
            e.extreme(view, Extreme::Brightest).map(drop)
        }));
        lines.push(timed_row(e, &name, "pinned", reps, || {
            e.extreme(&pinned, Extreme::Brightest).map(drop)
        }));
        lines.push(timed_row(e, &name, "held", reps, || {
            e.extreme(&held, Extreme::Brightest).map(drop)
        }));
    }
    lines
}
