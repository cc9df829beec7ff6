//! The clpix demo: runs the jobs on an embedded default image (or `demo <image>`), prints which
//! device ran each and how long it took, and writes pictures to `demo-output/`: the extremes and
//! markers ringed, the histograms as charts with axes and a legend (drawn with `plotters`), the
//! compaction and a blur.
//!
//! `cargo run --release --example demo [-- <image>] [--backend auto|cpu|opencl] [--device NAME]`

use clap::{Parser, ValueEnum};
use clpix::{CompactOrder, Engine, GaussianBlur, LuminanceHistogram, RgbaHistogram};
use image::{RgbImage, Rgba, RgbaImage};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Runs every clpix job on an image, prints which device ran each and how long it took, and
/// writes pictures to demo-output/.
#[derive(Parser, Debug)]
#[command(name = "demo", version)]
pub struct Cli {
    /// The picture to run on (any format the `image` crate reads); without it, an embedded
    /// dark scene with gradients, colours and bright markers.
    pub image: Option<PathBuf>,
    /// Which backend runs the jobs (sets CLPIX_BACKEND; without it, CLPIX_BACKEND or auto).
    #[arg(long, value_enum, ignore_case = true)]
    pub backend: Option<BackendArg>,
    /// The OpenCL device: its index in the `devices` example's list or part of its name (sets
    /// CLPIX_DEVICE).
    #[arg(long, value_name = "NAME")]
    pub device: Option<String>,
    /// Prints clpix's log on standard error, each line with the milliseconds since the demo
    /// started (device listing, context, each program built or loaded from the cache and its
    /// time, the engine's closing), and the demo's own steps.
    #[arg(long)]
    pub trace: bool,
}

/// The `--trace` logger: every record with the milliseconds since `START`.
struct Trace;

static START: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();

/// Milliseconds since the demo started.
fn since_start() -> f64 {
    START.get_or_init(Instant::now).elapsed().as_secs_f64() * 1e3
}

impl log::Log for Trace {
    fn enabled(&self, _: &log::Metadata<'_>) -> bool {
        true
    }
    fn log(&self, record: &log::Record<'_>) {
        eprintln!(
            "[{:9.1} ms] {:<5} {}",
            since_start(),
            record.level(),
            record.args()
        );
    }
    fn flush(&self) {}
}

/// `--backend`: the values of `CLPIX_BACKEND`.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum BackendArg {
    /// The best GPU or accelerator, else the CPU (rayon)
    Auto,
    /// The CPU (rayon)
    Cpu,
    /// OpenCL (an error where none can be had)
    Opencl,
}

impl BackendArg {
    fn env_value(self) -> &'static str {
        match self {
            BackendArg::Auto => "auto",
            BackendArg::Cpu => "cpu",
            BackendArg::Opencl => "opencl",
        }
    }
}

#[allow(dead_code)]
/// A dark scene with gradients, colours and a few bright markers, so every job finds something.
pub fn default_image() -> RgbaImage {
    let (w, h) = (960u32, 540u32);
    let mut img = RgbaImage::from_fn(w, h, |x, y| {
        let r = (x * 60 / w) as u8;
        let g = (y * 50 / h) as u8;
        let b = 40 + ((x + y) % 64) as u8 / 2;
        Rgba([r, g, b, 255])
    });
    // Coloured discs and bright markers (one pure white: the brightest).
    let blobs: [(i32, i32, i32, [u8; 4]); 11] = [
        (180, 140, 40, [200, 40, 40, 255]),
        (520, 300, 60, [40, 180, 60, 255]),
        (780, 120, 30, [60, 80, 220, 255]),
        (300, 420, 6, [250, 250, 235, 255]),
        (700, 430, 5, [255, 255, 255, 255]),
        (860, 260, 4, [240, 240, 250, 255]),
        (90, 330, 4, [245, 250, 240, 255]),
        (430, 60, 3, [250, 245, 250, 255]),
        (640, 200, 5, [235, 240, 245, 255]),
        (900, 480, 3, [250, 250, 250, 255]),
        (260, 260, 4, [242, 242, 242, 255]),
    ];
    for (cx, cy, r, c) in blobs {
        for y in (cy - r).max(0)..(cy + r).min(h as i32) {
            for x in (cx - r).max(0)..(cx + r).min(w as i32) {
                if (x - cx).pow(2) + (y - cy).pow(2) <= r * r {
                    img.put_pixel(x as u32, y as u32, Rgba(c));
                }
            }
        }
    }
    img.put_pixel(5, 535, Rgba([0, 0, 0, 255])); // the darkest
    img
}

/// Draws a ring of `colour` around (x, y).
fn mark(img: &mut RgbaImage, x: u32, y: u32, colour: [u8; 4]) {
    for a in 0..64 {
        let t = a as f32 / 64.0 * std::f32::consts::TAU;
        for r in [10.0f32, 11.0] {
            let px = x as f32 + r * t.cos();
            let py = y as f32 + r * t.sin();
            if px >= 0.0 && py >= 0.0 && (px as u32) < img.width() && (py as u32) < img.height() {
                img.put_pixel(px as u32, py as u32, Rgba(colour));
            }
        }
    }
}

/// A blob's bounding box, one pixel outside it.
fn outline(img: &mut RgbaImage, b: &clpix::Blob, colour: [u8; 4]) {
    let (w, h) = (img.width() as i64, img.height() as i64);
    let (x0, y0, x1, y1) = (
        b.min_x as i64 - 1,
        b.min_y as i64 - 1,
        b.max_x as i64 + 1,
        b.max_y as i64 + 1,
    );
    let mut put = |x: i64, y: i64| {
        if x >= 0 && y >= 0 && x < w && y < h {
            img.put_pixel(x as u32, y as u32, Rgba(colour));
        }
    };
    for x in x0..=x1 {
        put(x, y0);
        put(x, y1);
    }
    for y in y0..=y1 {
        put(x0, y);
        put(x1, y);
    }
}

/// A small cross at a sub-pixel place (rounded to the nearest pixel).
fn cross(img: &mut RgbaImage, x: f64, y: f64, colour: [u8; 4]) {
    let (cx, cy) = (x.round() as i64, y.round() as i64);
    for d in -3i64..=3 {
        for (px, py) in [(cx + d, cy), (cx, cy + d)] {
            if px >= 0 && py >= 0 && (px as u32) < img.width() && (py as u32) < img.height() {
                img.put_pixel(px as u32, py as u32, Rgba(colour));
            }
        }
    }
}

/// One job's line: what ran, on which device, how long.
fn report(job: &str, backend: &str, t: Instant, what: String) {
    log::debug!("demo: {job} answered");
    println!(
        "{job:<18} {:>9.3} ms  on {backend}  {what}",
        t.elapsed().as_secs_f64() * 1e3
    );
}

/// A picture being drawn and written on its own thread: its path, or what went wrong.
type Writing<'scope> = std::thread::ScopedJoinHandle<'scope, Result<PathBuf, String>>;

/// Draws (`draw`) and writes a picture to `path` on a thread of `scope`, so that encoding the
/// PNG overlaps the jobs after it.
fn write_picture<'scope, I>(
    scope: &'scope std::thread::Scope<'scope, '_>,
    path: PathBuf,
    draw: impl FnOnce() -> Result<I, String> + Send + 'scope,
) -> Writing<'scope>
where
    I: Into<image::DynamicImage>,
{
    scope.spawn(move || {
        draw()?
            .into()
            .save(&path)
            .map_err(|e| format!("{}: {e}", path.display()))?;
        Ok(path)
    })
}

/// Runs every job on `img` with `engine`, writes the pictures into `out` (each on its own
/// thread while the jobs go on), and returns their paths.
pub fn run_demo(
    engine: &Engine,
    img: &RgbaImage,
    out: &Path,
) -> Result<Vec<PathBuf>, Box<dyn std::error::Error>> {
    std::fs::create_dir_all(out)?;
    let backend = engine.backend().to_string();
    let backend = backend
        .split(" (auto")
        .next()
        .unwrap_or(&backend)
        .to_string();
    std::thread::scope(|scope| {
        let writing = run_jobs(scope, engine, img, out, &backend)?;
        let mut written = Vec::new();
        for w in writing {
            let path = w.join().map_err(|_| "a picture's writer panicked")??;
            written.push(path);
        }
        Ok(written)
    })
}

/// The jobs of [`run_demo`], in order; returns the pictures still being written.
fn run_jobs<'scope, 'env>(
    scope: &'scope std::thread::Scope<'scope, 'env>,
    engine: &Engine,
    img: &'env RgbaImage,
    out: &Path,
    backend: &str,
) -> Result<Vec<Writing<'scope>>, Box<dyn std::error::Error>> {
    let mut writing = Vec::new();
    let t = Instant::now();
    let dev = engine.upload(img)?;
    report(
        "upload",
        backend,
        t,
        format!("{}×{}", img.width(), img.height()),
    );

    let t = Instant::now();
    let b = engine.extreme(&dev, clpix::Extreme::Brightest)?;
    report(
        "brightest",
        backend,
        t,
        format!("({}, {}) L={} rgba={:?}", b.x, b.y, b.luminance, b.rgba),
    );
    let t = Instant::now();
    let d = engine.extreme(&dev, clpix::Extreme::Darkest)?;
    report(
        "darkest",
        backend,
        t,
        format!("({}, {}) L={} rgba={:?}", d.x, d.y, d.luminance, d.rgba),
    );
    let t = Instant::now();
    let s = engine.luminance_stats(&dev)?;
    report(
        "luminance_stats",
        backend,
        t,
        format!("mean {:.2}, min {}, max {}", s.mean, s.min, s.max),
    );

    writing.push(write_picture(scope, out.join("extremes.png"), move || {
        let mut marked = img.clone();
        mark(&mut marked, b.x, b.y, [255, 40, 40, 255]);
        mark(&mut marked, d.x, d.y, [40, 255, 255, 255]);
        Ok(marked)
    }));

    // Markers: the 8 brightest pixels at least 20 pixels apart (one per bright blob).
    let t = Instant::now();
    let markers = engine.extremes(&dev, clpix::Extreme::Brightest, 8, 20.0)?;
    report(
        "brightest_k",
        backend,
        t,
        format!("{} markers, k = 8, min distance 20", markers.len()),
    );
    writing.push(write_picture(scope, out.join("markers.png"), move || {
        let mut marked = img.clone();
        for m in &markers {
            mark(&mut marked, m.x, m.y, [255, 220, 0, 255]);
        }
        Ok(marked)
    }));

    // Blobs: the bright markers as connected components (luminance above 700, at least 3
    // pixels), each one's box and intensity-weighted centroid.
    let t = Instant::now();
    let found = engine.blobs(
        &dev,
        700,
        &clpix::BlobOptions::new().area(3, u64::MAX).stats_only(),
    )?;
    report(
        "blobs",
        backend,
        t,
        format!(
            "{} blobs above L = 700, centroids to a fraction of a pixel",
            found.blobs.len()
        ),
    );
    writing.push(write_picture(scope, out.join("blobs.png"), move || {
        let mut marked = img.clone();
        for b in &found.blobs {
            outline(&mut marked, b, [0, 255, 120, 255]);
            let (cx, cy) = b.centroid();
            cross(&mut marked, cx, cy, [255, 0, 200, 255]);
        }
        Ok(marked)
    }));

    let t = Instant::now();
    let hist = engine.histogram_rgba(&dev)?;
    report(
        "histogram_rgba",
        backend,
        t,
        format!("{} pixels counted", hist.pixel_count()),
    );
    let t = Instant::now();
    let lhist = engine.histogram_luminance(&dev)?;
    report(
        "histogram_luminance",
        backend,
        t,
        format!("{} pixels counted", lhist.pixel_count()),
    );
    writing.push(write_picture(scope, out.join("histogram.png"), move || {
        rgba_chart(&hist, CHART_SIZE.0, CHART_SIZE.1).map_err(|e| e.to_string())
    }));
    writing.push(write_picture(
        scope,
        out.join("histogram-luminance.png"),
        move || luminance_chart(&lhist, CHART_SIZE.0, CHART_SIZE.1).map_err(|e| e.to_string()),
    ));

    // Compaction: input | kept pixels in scan order | sorted by luminance (the "mush of dots").
    let threshold = (s.mean as u16).min(1022);
    let t = Instant::now();
    let kept = engine.compact(&dev, threshold, clpix::CompactOrder::ScanOrder)?;
    report(
        "compact",
        backend,
        t,
        format!("{} pixels above L = {threshold}", kept.len()),
    );
    let t = Instant::now();
    let scan = engine.compacted_image(&dev, threshold, CompactOrder::ScanOrder)?;
    let sorted = engine.compacted_image(&dev, threshold, CompactOrder::LuminanceDescending)?;
    report(
        "compacted_image",
        backend,
        t,
        "scan order and sorted by luminance".into(),
    );
    writing.push(write_picture(
        scope,
        out.join("compaction.png"),
        move || {
            let (w, h) = img.dimensions();
            let mut strip = RgbaImage::new(w * 3, h);
            image::imageops::replace(&mut strip, img, 0, 0);
            image::imageops::replace(&mut strip, &scan, w as i64, 0);
            image::imageops::replace(&mut strip, &sorted, 2 * w as i64, 0);
            // Shown opaque: the spec's (0, 0, 0, 0) fill would otherwise show as the viewer's
            // background.
            for px in strip.pixels_mut() {
                px.0[3] = 255;
            }
            Ok(strip)
        },
    ));

    for radius in [2u32, 8, 25] {
        let t = Instant::now();
        let blurred = engine.gaussian_blur(&dev, &GaussianBlur::new(radius))?;
        report(
            "gaussian_blur",
            backend,
            t,
            format!("radius {radius}, sigma {}", radius as f64 / 2.0),
        );
        if radius == 8 {
            writing.push(write_picture(scope, out.join("blur.png"), move || {
                Ok(blurred)
            }));
        }
    }
    Ok(writing)
}

/// The histogram charts' size in pixels.
const CHART_SIZE: (u32, u32) = (1024, 440);

/// The font family the charts name: DejaVu Sans (embedded by the `dejavu` crate), registered
/// with plotters once (its `ab_glyph` text rendering has no system fonts).
const FONT: &str = "sans-serif";

fn register_font() -> Result<(), Box<dyn std::error::Error>> {
    static REGISTERED: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    let ok = *REGISTERED.get_or_init(|| {
        plotters::style::register_font(
            FONT,
            plotters::style::FontStyle::Normal,
            dejavu::sans::regular(),
        )
        .is_ok()
    });
    if ok {
        Ok(())
    } else {
        Err("plotters refused the embedded DejaVu Sans font".into())
    }
}

/// A pixel count as a tick label: 0 (the floor where empty bins are drawn), 1, 10, 100, 1k, 10k,
/// 100k, 1M, …
fn count_label(v: f64) -> String {
    if v < 1.0 {
        return "0".into();
    }
    let (unit, suffix) = match v {
        v if v >= 1e9 => (1e9, "G"),
        v if v >= 1e6 => (1e6, "M"),
        v if v >= 1e3 => (1e3, "k"),
        _ => (1.0, ""),
    };
    format!("{}{suffix}", (v / unit).round())
}

/// One line of a chart: its legend label, colour and counts (one per value from 0).
struct Series<'a> {
    label: &'a str,
    colour: plotters::style::RGBColor,
    counts: &'a [u32],
}

/// Draws `series` as lines over the values 0..counts.len() (x) against their pixel counts on a
/// log scale (y; empty bins on the bottom line, labelled 0), with ticks, axis labels and a legend
/// beside the plot.
fn line_chart(
    title: &str,
    x_desc: &str,
    series: &[Series<'_>],
    width: u32,
    height: u32,
) -> Result<RgbImage, Box<dyn std::error::Error>> {
    use plotters::prelude::*;
    use plotters::style::text_anchor::{HPos, Pos, VPos};
    register_font()?;
    const LEGEND_WIDTH: i32 = 150;
    let bins = series
        .iter()
        .map(|s| s.counts.len())
        .max()
        .unwrap_or(1)
        .max(2) as i32;
    let x_max = bins - 1;
    // Ticks at eighths of the value range and at its last value (255 or 1023); a little room
    // either side, so that a spike at 0 or at the last value stands clear of the frame.
    let mut x_ticks: Vec<i32> = (0..8).map(|i| i * bins / 8).collect();
    x_ticks.push(x_max);
    let pad = (bins / 128).max(2);
    let top = series
        .iter()
        .flat_map(|s| s.counts.iter().copied())
        .max()
        .unwrap_or(0)
        .max(1) as f64;
    // Empty bins sit on the floor, labelled 0; the axis ends at the power of ten above the
    // highest count.
    let floor = 0.4;
    let y_top = 10f64.powf(top.log10().floor() + 1.0);
    let mut y_ticks = vec![floor];
    let mut t = 1.0;
    while t <= y_top {
        y_ticks.push(t);
        t *= 10.0;
    }

    let mut buf = vec![0u8; width as usize * height as usize * 3];
    {
        let root = BitMapBackend::with_buffer(&mut buf, (width, height)).into_drawing_area();
        root.fill(&WHITE)?;
        let (plot, legend) = root.split_horizontally(width as i32 - LEGEND_WIDTH);
        let mut chart = ChartBuilder::on(&plot)
            .caption(title, (FONT, 20))
            .margin(12)
            .x_label_area_size(46)
            .y_label_area_size(72)
            .build_cartesian_2d(
                (-pad..x_max + pad).with_key_points(x_ticks),
                (floor..y_top).log_scale().with_key_points(y_ticks),
            )?;
        chart
            .configure_mesh()
            .x_desc(x_desc)
            .y_desc("pixels (log scale)")
            .y_label_formatter(&|v| count_label(*v))
            .label_style((FONT, 14))
            .axis_desc_style((FONT, 16))
            .bold_line_style(BLACK.mix(0.12))
            .draw()?;
        // The last series (A, the least telling) underneath the others. Each step its own
        // segment: plotters joins a thick polyline's segments with miters, which shoot far out
        // of the plot at a spike's sharp turns.
        for s in series.iter().rev() {
            let style = s.colour.stroke_width(2);
            let y = |c: u32| (c as f64).max(floor);
            chart.draw_series(s.counts.windows(2).enumerate().map(|(v, pair)| {
                let v = v as i32;
                PathElement::new(vec![(v, y(pair[0])), (v + 1, y(pair[1]))], style)
            }))?;
        }
        // The legend: a line of each colour and its label, framed, level with the plot's top.
        let (row, x0, y0) = (24, 4, 48);
        legend.draw(&Rectangle::new(
            [
                (x0, y0 - 14),
                (LEGEND_WIDTH - 12, y0 + row * series.len() as i32 - 8),
            ],
            BLACK.mix(0.5),
        ))?;
        for (i, s) in series.iter().enumerate() {
            let y = y0 + row * i as i32;
            legend.draw(&PathElement::new(
                vec![(x0 + 10, y), (x0 + 36, y)],
                s.colour.stroke_width(3),
            ))?;
            legend.draw(&Text::new(
                s.label,
                (x0 + 44, y),
                TextStyle::from((FONT, 15).into_font()).pos(Pos::new(HPos::Left, VPos::Center)),
            ))?;
        }
        root.present()?;
    }
    RgbImage::from_raw(width, height, buf).ok_or_else(|| "chart buffer size".into())
}

/// The RGBA histogram as a chart: R, G, B and A as lines over the values 0..=255.
pub fn rgba_chart(
    hist: &RgbaHistogram,
    width: u32,
    height: u32,
) -> Result<RgbImage, Box<dyn std::error::Error>> {
    use plotters::style::RGBColor;
    let colours = [
        ("R", RGBColor(215, 38, 38)),
        ("G", RGBColor(30, 150, 50)),
        ("B", RGBColor(40, 80, 225)),
        ("A", RGBColor(130, 130, 130)),
    ];
    let series: Vec<Series<'_>> = colours
        .iter()
        .zip(&hist.counts)
        .map(|(&(label, colour), counts)| Series {
            label,
            colour,
            counts,
        })
        .collect();
    line_chart(
        &format!("RGBA histogram, {} pixels", hist.pixel_count()),
        "channel value",
        &series,
        width,
        height,
    )
}

/// The luminance histogram as a chart: one line over the luminance values 0..=1023.
pub fn luminance_chart(
    hist: &LuminanceHistogram,
    width: u32,
    height: u32,
) -> Result<RgbImage, Box<dyn std::error::Error>> {
    let series = [Series {
        label: "luminance",
        colour: plotters::style::RGBColor(90, 40, 140),
        counts: &hist.counts,
    }];
    line_chart(
        &format!("Luminance histogram, {} pixels", hist.pixel_count()),
        "luminance (0..=1023)",
        &series,
        width,
        height,
    )
}

#[allow(dead_code)] // the demo test includes this file for run_demo
fn main() -> Result<(), Box<dyn std::error::Error>> {
    since_start();
    let cli = Cli::parse();
    if cli.trace {
        static TRACE: Trace = Trace;
        if log::set_logger(&TRACE).is_ok() {
            log::set_max_level(log::LevelFilter::Debug);
        }
    }
    // SAFETY: no other thread has started yet (nothing else reads or writes the environment).
    if let Some(b) = cli.backend {
        unsafe { std::env::set_var("CLPIX_BACKEND", b.env_value()) };
    }
    if let Some(d) = &cli.device {
        // SAFETY: as above.
        unsafe { std::env::set_var("CLPIX_DEVICE", d) };
    }
    let img = match &cli.image {
        Some(p) => image::open(p)?.to_rgba8(),
        None => default_image(),
    };
    log::debug!("demo: image ready");
    let engine = Engine::new()?;
    log::debug!("demo: engine made");
    println!("clpix demo on a {}×{} image", img.width(), img.height());
    println!("backend: {}", engine.backend());
    for p in run_demo(&engine, &img, Path::new("demo-output"))? {
        println!("wrote {}", p.display());
    }
    log::debug!("demo: jobs done");
    drop(engine);
    log::debug!("demo: engine dropped");
    Ok(())
}
