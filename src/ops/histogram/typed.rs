//! Histograms with a bin count and a range per call, of every pixel format: of each channel or
//! of the key (docs/SPEC.md, "Histograms of every format"). The CPU path, the plan (the table
//! that gives each value its bin) and the launcher of `histogram/typed.cl`.

use super::bins::{Bins, Of};
use super::kernels::TYPED_HIST;
use crate::device::{Any, IntoImage, RawSource};
use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::image::{RawView, check_pixel_count};
use crate::opencl::{Arg, ClEngine, ScratchKind};
use crate::ops::reduce::typed::variant;
use crate::spec::{Format, rgba_f32_key};
use rayon::prelude::*;
use std::sync::Arc;

/// How a call gives each value its bin (see `typed.cl`).
#[derive(Debug, Clone, PartialEq)]
struct Plan {
    format: Format,
    of: Of,
    bins: u32,
    /// The kernels' table: the bins' lower bounds t_0..=t_bins, integers, or the bits of f32s.
    table: Vec<u32>,
    /// Integer values: the bin of every value of the domain (`NONE` outside the range), for the
    /// CPU path.
    lut: Vec<u32>,
    /// The largest value counted (integers), or the bits of the largest f32 not above `hi`.
    thi: u32,
    /// The kernels' estimate of a bin: `(v − lo) · scale`, corrected against the table.
    lo: f32,
    scale: f32,
    /// Integers from a `lo ≥ 0` in bins of `2^shift` values: the bin is `(v − lo) >> shift`
    /// (`u32::MAX`: not so).
    shift: u32,
}

/// "Not counted", in the CPU's table.
const NONE: u32 = u32::MAX;

impl Plan {
    fn new(format: Format, of: Of, bins: Bins) -> Result<Plan> {
        let n = bins.count();
        let mut plan = Plan {
            format,
            of,
            bins: n,
            table: Vec::new(),
            lut: Vec::new(),
            thi: 0,
            lo: 0.0,
            scale: 0.0,
            shift: u32::MAX,
        };
        if format.is_float() {
            // numpy: equal edges widen to lo − 0.5, hi + 0.5; linspace's edges, the last = hi.
            let (lo, hi) = match bins.lo() == bins.hi() {
                true => (bins.lo() - 0.5, bins.hi() + 0.5),
                false => (bins.lo(), bins.hi()),
            };
            let step = (hi - lo) / n as f64;
            plan.table = (0..=n)
                .map(|k| match k == n {
                    true => f32_at_or_above(hi),
                    false => f32_at_or_above(k as f64 * step + lo),
                })
                .map(f32::to_bits)
                .collect();
            plan.thi = f32_at_or_below(hi).to_bits();
            plan.lo = lo as f32;
            plan.scale = (n as f64 / (hi - lo)) as f32;
            return Ok(plan);
        }
        const LIMIT: f64 = (1u64 << 40) as f64;
        let (lo, hi) = (bins.lo(), bins.hi());
        if lo.fract() != 0.0 || hi.fract() != 0.0 || lo.abs() > LIMIT || hi.abs() > LIMIT {
            return Err(Error::invalid(
                "histogram range",
                format!("{lo}..={hi}"),
                "integer bounds within ±2^40 for an integer format",
            ));
        }
        let domain: u32 = match of {
            Of::Key => format.max_key().unwrap_or(0) + 1,
            Of::Channels => 1 << (8 * format.bytes_per_channel()),
        };
        let (lo, hi) = (lo as i64, hi as i64);
        let width = (hi - lo) as u64 + 1;
        plan.lut = (0..domain as i64)
            .map(|v| match v >= lo && v <= hi {
                true => ((v - lo) as u64 * n as u64 / width) as u32,
                false => NONE,
            })
            .collect();
        // Bin k starts at lo + ceil(k · width / n) (v − lo ≥ k · width / n, for integers),
        // clamped to the u32 values a pixel has: the same comparisons for every value.
        let clamp = |t: i64| t.clamp(0, u32::MAX as i64) as u32;
        plan.table = (0..=n as u64)
            .map(|k| clamp(lo + (k * width).div_ceil(n as u64) as i64))
            .collect();
        plan.thi = clamp(hi);
        if hi < 0 {
            // Nothing counts: no value is at least u32::MAX and at most 0.
            plan.table[0] = u32::MAX;
        }
        plan.scale = (n as f64 / width as f64) as f32;
        plan.lo = lo as f32;
        // (v − lo) · n / (n · 2^s) = (v − lo) >> s.
        if lo >= 0 && width.is_multiple_of(n as u64) && (width / n as u64).is_power_of_two() {
            plan.shift = (width / n as u64).trailing_zeros();
        }
        Ok(plan)
    }

    /// Histograms this plan counts into (each `bins` long).
    fn outputs(&self) -> usize {
        match self.of {
            Of::Key => 1,
            Of::Channels => self.format.channels(),
        }
    }

    /// The bin of a value (an integer, or the bits of an f32), or `NONE`.
    #[inline(always)]
    fn bin(&self, v: u32) -> u32 {
        if !self.format.is_float() {
            return self.lut[v as usize];
        }
        let x = f32::from_bits(v);
        let t = |k: u32| f32::from_bits(self.table[k as usize]);
        if !(x >= t(0) && x <= f32::from_bits(self.thi)) {
            return NONE;
        }
        let e = (x - self.lo) * self.scale;
        // A NaN estimate (0 · inf, inf · 0: spans beyond f32's either way) is bin 0, as the
        // kernel takes it; the bounds below correct every estimate.
        let b = if e.is_nan() || e < 1.0 {
            0
        } else if e >= self.bins as f32 {
            self.bins - 1
        } else {
            e as u32
        };
        // The estimate where its bounds enclose x, else the last bound not above x.
        if x >= t(b) && (b + 1 == self.bins || x < t(b + 1)) {
            return b;
        }
        let (mut first, mut last) = if x < t(b) { (0, b) } else { (b + 1, self.bins) };
        while last - first > 1 {
            let mid = first + (last - first) / 2;
            if x >= t(mid) {
                first = mid;
            } else {
                last = mid;
            }
        }
        first
    }
}

/// The smallest f32 not below `v` (a finite f64).
fn f32_at_or_above(v: f64) -> f32 {
    let f = v as f32; // to nearest
    if (f as f64) < v { f.next_up() } else { f }
}

/// The largest f32 not above `v` (a finite f64).
fn f32_at_or_below(v: f64) -> f32 {
    let f = v as f32;
    if (f as f64) > v { f.next_down() } else { f }
}

/// One histogram of a mono8 or mono16 image (its channel or its key, the same values): the
/// values through the table, alternately into `counts` and `odd` (runs of one value do not
/// wait on one counter). False for every other case (or a misaligned piece).
fn count_mono(plan: &Plan, bytes: &[u8], counts: &mut [u32], odd: &mut [u32]) -> bool {
    fn count<T: Copy + Into<usize>>(lut: &[u32], v: &[T], counts: &mut [u32], odd: &mut [u32]) {
        let mut pairs = v.chunks_exact(2);
        for p in &mut pairs {
            let (a, b) = (lut[p[0].into()], lut[p[1].into()]);
            if a != NONE {
                counts[a as usize] += 1;
            }
            if b != NONE {
                odd[b as usize] += 1;
            }
        }
        for &x in pairs.remainder() {
            let a = lut[x.into()];
            if a != NONE {
                counts[a as usize] += 1;
            }
        }
    }
    /// Bins of 2^shift values from lo (no table): the whole domain, the common case.
    fn shifted(v: &[u16], lo: u32, shift: u32, counts: &mut [u32], odd: &mut [u32]) {
        let mut pairs = v.chunks_exact(2);
        for p in &mut pairs {
            counts[((p[0] as u32 - lo) >> shift) as usize] += 1;
            odd[((p[1] as u32 - lo) >> shift) as usize] += 1;
        }
        for &x in pairs.remainder() {
            counts[((x as u32 - lo) >> shift) as usize] += 1;
        }
    }
    match plan.format {
        Format::Luma8 => count(&plan.lut, bytes, counts, odd),
        Format::Luma16 => match bytemuck::try_cast_slice::<u8, u16>(bytes) {
            // Every value counted (lo = 0, hi ≥ 65535) in bins of 2^shift.
            Ok(v) if plan.shift != u32::MAX && plan.table[0] == 0 && plan.thi >= 65535 => {
                shifted(v, 0, plan.shift, counts, odd)
            }
            Ok(v) => count(&plan.lut, v, counts, odd),
            Err(_) => return false,
        },
        _ => return false,
    }
    true
}

/// Adds the values of `bytes` (whole pixels) into `counts`.
fn count_into(plan: &Plan, bytes: &[u8], counts: &mut [u32]) {
    let (format, n) = (plan.format, plan.bins as usize);
    let bpc = format.bytes_per_channel();
    let channel = |c: &[u8]| match bpc {
        1 => c[0] as u32,
        2 => u16::from_ne_bytes([c[0], c[1]]) as u32,
        _ => u32::from_ne_bytes([c[0], c[1], c[2], c[3]]),
    };
    for px in bytes.chunks_exact(format.bytes_per_pixel()) {
        match plan.of {
            Of::Channels => {
                for (c, v) in px.chunks_exact(bpc).enumerate() {
                    let b = plan.bin(channel(v));
                    if b != NONE {
                        counts[c * n + b as usize] += 1;
                    }
                }
            }
            Of::Key => {
                let v = match format {
                    Format::RgbaF32 => {
                        let f = |i: usize| f32::from_bits(channel(&px[4 * i..4 * i + 4]));
                        rgba_f32_key(f(0), f(1), f(2)).to_bits()
                    }
                    Format::LumaF32 => channel(px),
                    _ => format.order_key(px).unwrap_or(0),
                };
                let b = plan.bin(v);
                if b != NONE {
                    counts[b as usize] += 1;
                }
            }
        }
    }
}

fn cpu_histogram(plan: &Plan, view: &RawView<'_>) -> Vec<u32> {
    let len = plan.outputs() * plan.bins as usize;
    let bpp = view.format.bytes_per_pixel();
    let rows: Vec<&[u8]> = match view.packed_bytes() {
        Some(b) => b.chunks(crate::cpu::PIECE * bpp).collect(),
        None => (0..view.height).map(|y| view.row(y)).collect(),
    };
    // Each task's counters, and a second table for the odd values of the mono formats.
    let mut all = rows
        .par_iter()
        .fold(
            || vec![0u32; 2 * len],
            |mut acc, bytes| {
                let (even, odd) = acc.split_at_mut(len);
                if !count_mono(plan, bytes, even, odd) {
                    count_into(plan, bytes, even);
                }
                acc
            },
        )
        .reduce_with(|mut a, b| {
            a.iter_mut().zip(b).for_each(|(x, y)| *x += y);
            a
        })
        .unwrap_or_else(|| vec![0; 2 * len]);
    let (even, odd) = all.split_at_mut(len);
    even.iter_mut().zip(odd.iter()).for_each(|(x, y)| *x += y);
    all.truncate(len);
    all
}

fn cl_histogram(cl: &Arc<ClEngine>, plan: &Plan, src: &RawSource<'_>) -> Result<Vec<u32>> {
    let len = plan.outputs() * plan.bins as usize;
    // Local memory: the counters first, then the table, within what a group may take.
    let budget = match cl.grid.contiguous {
        true => cl.info.local_mem_bytes / 2,
        false => cl
            .info
            .local_mem_bytes
            .saturating_sub(4 << 10)
            .min(40 << 10),
    };
    let (hist_bytes, table_bytes) = ((len * 4) as u64, (plan.table.len() * 4) as u64);
    let local = hist_bytes <= budget;
    let table_local =
        plan.shift == u32::MAX && table_bytes <= budget - if local { hist_bytes } else { 0 };
    let defines = variant(plan.format)
        .with("HIST_KEY", (plan.of == Of::Key) as u32)
        .with("HIST_LOCAL", local as u32)
        .with("HIST_TABLE_LOCAL", table_local as u32);
    let scratch = (if local { hist_bytes } else { 0 } + if table_local { table_bytes } else { 0 })
        .max(4) as usize;
    let table = cl.constant_words(&plan.table)?;
    // From the engine's scratch pool: a buffer made and freed per call synchronises a whole
    // CUDA context at its free (opencl/memory.rs).
    let mut hist = cl.scratch(ScratchKind::Histogram, len)?;
    cl.fill(&mut hist, 0u32, len)?;
    let mut events = Vec::new();
    let chunk = crate::ops::reduce::typed::chunk_bytes(plan.format);
    cl.for_each_source_part(src, chunk, |buf, range| {
        let n = range.pixels();
        let groups = crate::ops::reduce::groups_for(cl, n);
        let args = [
            Arg::buf(buf),
            Arg::U32(n as u32),
            Arg::buf(&*table),
            Arg::U32(plan.bins),
            Arg::U32(plan.thi),
            Arg::F32(plan.lo),
            Arg::F32(plan.scale),
            Arg::U32(plan.shift),
            Arg::buf(&hist),
            Arg::Local(scratch),
        ];
        events.push(cl.launch_variant(
            TYPED_HIST,
            defines,
            &args,
            groups * cl.grid.wg,
            cl.grid.wg,
        )?);
        Ok(())
    })?;
    let mut out = vec![0u32; len];
    cl.read(&hist, 0, &mut out)?;
    cl.finish(&events)?;
    Ok(out)
}

fn split(counts: Vec<u32>, bins: u32) -> Vec<Vec<u32>> {
    counts.chunks(bins as usize).map(<[u32]>::to_vec).collect()
}

impl Engine {
    /// Histograms of each channel of an image of any [`Pixel`](crate::Pixel) format, with the
    /// given bins (the same for every channel): `counts[c][b]` counts the pixels whose channel
    /// `c` falls in bin `b` (see [`Bins`]: integer formats exactly by integer arithmetic, f32
    /// formats exactly as `numpy.histogram` of the values as f64; values outside the range and
    /// NaN not counted).
    ///
    /// An RGBA8 image held by an engine is read back first. An error for bounds that are not
    /// integers on an integer format.
    ///
    /// ```
    /// let img = image::ImageBuffer::from_fn(100, 10, |x, _| image::Luma([x as u16 * 600]));
    /// let bins = clpix::Bins::new(4, 0.0, 65535.0)?;
    /// let h = clpix::Engine::new()?.histogram(&img, bins)?;
    /// assert_eq!(h[0], [280, 270, 270, 180]); // 16,384 values a bin
    /// # Ok::<(), clpix::Error>(())
    /// ```
    pub fn histogram<'a, I: IntoImage<'a>>(&self, img: I, bins: Bins) -> Result<Vec<Vec<u32>>> {
        self.typed_histogram(img.into_any().0, Of::Channels, bins)
            .map(|c| split(c, bins.count()))
    }

    /// The histogram of the keys of an image of any [`Pixel`](crate::Pixel) format (the value
    /// of one channel, the luminance of colour; see [`Bins`]): `counts[b]` counts the pixels
    /// whose key falls in bin `b`. NaN keys are not counted.
    ///
    /// ```
    /// let img = image::ImageBuffer::from_fn(4, 1, |x, _| image::Luma([x as f32 - 1.5]));
    /// let h = clpix::Engine::new()?.histogram_keys(&img, clpix::Bins::new(2, -2.0, 2.0)?)?;
    /// assert_eq!(h, [2, 2]); // -1.5, -0.5 | 0.5, 1.5
    /// # Ok::<(), clpix::Error>(())
    /// ```
    pub fn histogram_keys<'a, I: IntoImage<'a>>(&self, img: I, bins: Bins) -> Result<Vec<u32>> {
        self.typed_histogram(img.into_any().0, Of::Key, bins)
    }

    fn typed_histogram(&self, img: Any<'_>, of: Of, bins: Bins) -> Result<Vec<u32>> {
        img.with_source(|src| self.raw_histogram(src, of, bins))
    }

    /// The histograms of an image of any format (`outputs × bins` counters).
    pub(crate) fn raw_histogram(&self, src: RawSource<'_>, of: Of, bins: Bins) -> Result<Vec<u32>> {
        check_pixel_count(src.width(), src.height())?;
        let format = src.format();
        let plan = Plan::new(format, of, bins)?;
        if src.pixel_count() == 0 {
            return Ok(vec![0; plan.outputs() * bins.count() as usize]);
        }
        let name = match of {
            Of::Channels => "histogram",
            Of::Key => "histogram_keys",
        };
        let on_cpu = || Ok(cpu_histogram(&plan, &src.host()?.raw()));
        self.dispatch(
            super::typed_family::family(format),
            &format,
            name,
            src.pixel_count(),
            on_cpu,
            |cl| match format != Format::RgbaF32 || of == Of::Channels || cl.info.f32_denormals {
                true => cl_histogram(cl, &plan, &src),
                false => on_cpu(),
            },
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// numpy.histogram's bins of f64 values, as its implementation computes them (f64 edges
    /// from linspace, the value's bin the one whose edges enclose it), against the thresholds'
    /// rule.
    #[test]
    fn f32_bins_are_numpys() {
        let mut seed = 7u64;
        let mut next = || {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 33) as u32
        };
        for (n, lo, hi) in [
            (10u32, 0.0, 1.0),
            (7, -3.3, 1e-3),
            (4096, -1000.0, 1e6),
            (3, 2.0, 2.0),
        ] {
            let plan = Plan::new(Format::LumaF32, Of::Key, Bins::new(n, lo, hi).unwrap()).unwrap();
            let (elo, ehi) = if lo == hi {
                (lo - 0.5, hi + 0.5)
            } else {
                (lo, hi)
            };
            let step = (ehi - elo) / n as f64;
            let edge = |k: u32| if k == n { ehi } else { k as f64 * step + elo };
            let span = ehi - elo;
            for i in 0..20_000u32 {
                let v = match i % 4 {
                    0 => edge(next() % (n + 1)) as f32,
                    1 => (edge(next() % (n + 1)) as f32).next_down(),
                    _ => (elo - 0.1 * span + 1.2 * span * (next() as f64 / u32::MAX as f64)) as f32,
                };
                let x = v as f64;
                let want = if !(x >= elo && x <= ehi) {
                    NONE
                } else {
                    (0..n)
                        .find(|&k| x >= edge(k) && (x < edge(k + 1) || k == n - 1))
                        .unwrap_or(NONE)
                };
                assert_eq!(plan.bin(v.to_bits()), want, "{v} in {n} bins of {lo}..{hi}");
            }
        }
    }

    #[test]
    fn integer_bins_follow_the_rule() {
        let plan = Plan::new(
            Format::Luma16,
            Of::Channels,
            Bins::new(3, 10.0, 19.0).unwrap(),
        )
        .unwrap();
        let bins: Vec<u32> = (8..22).map(|v| plan.bin(v)).collect();
        assert_eq!(bins, [NONE, NONE, 0, 0, 0, 0, 1, 1, 1, 2, 2, 2, NONE, NONE]);
        assert!(Plan::new(Format::Luma8, Of::Key, Bins::new(3, 0.5, 9.0).unwrap()).is_err());
        // Ranges below and across 0: the device's table gives the same bins as the CPU's.
        for (n, lo, hi) in [
            (5u32, -1.0, 1.0),
            (3, -5.0, -1.0),
            (7, -100.0, 300.0),
            (4, 0.0, 0.0),
        ] {
            let plan = Plan::new(Format::Luma16, Of::Key, Bins::new(n, lo, hi).unwrap()).unwrap();
            for v in 0..400u32 {
                let t = &plan.table;
                let device = match v >= t[0] && v <= plan.thi {
                    false => NONE,
                    true => (0..n).rev().find(|&k| v >= t[k as usize]).unwrap_or(0),
                };
                assert_eq!(device, plan.bin(v), "{v} in {n} bins of {lo}..={hi}");
            }
        }
    }
}
