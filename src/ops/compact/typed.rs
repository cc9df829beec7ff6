//! The compaction of every format other than RGBA8 (whose tuned paths are this folder's other
//! files): the pixels whose key is above a threshold, in scan order or by key descending (a
//! stable sort), as hits of the format. With a `flip` (see [`flip_for_darkest`]) the keys are
//! complemented first: the pixels below a key, darkest first (the k darkest of `select`). The CPU path and `compact/typed.cl` find the same scan
//! indices; the kept pixels' values are gathered (on the device for an image it holds), the
//! hits made from them on the host, and the sort is the host's sort of (key, index) pairs
//! (docs/formats.md: the GPU sort of other formats is not built).

use super::kernels::{TYPED_COUNT, TYPED_GATHER, TYPED_KEEP, TYPED_PROGRAM};
use crate::device::{RawSource, Storage};
use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::image::{RawView, check_pixel_count};
use crate::opencl::{Arg, ClEngine};
use crate::ops::probe::{compare, probe_raw, unknown};
use crate::spec::{Format, RawHit};
use opencl3::memory::Buffer;
use rayon::prelude::*;
use std::sync::Arc;

crate::ops::common::format_families!(pub(super) fn family, "compact_typed", TYPED_PROGRAM, probe);

fn probe(e: &Engine, operation: &'static str, call: &dyn std::any::Any) -> Result<Option<String>> {
    let Some(&(format, t, flip)) = call.downcast_ref::<(Format, u32, u32)>() else {
        return Err(unknown(operation));
    };
    let raw = probe_raw(format);
    // The threshold of the call, and one that keeps about half the probe's pixels.
    let half = match format.max_key() {
        Some(max) => max / 2,
        None => crate::spec::order_of_f32(0.0).unwrap_or(0),
    };
    let both = |e: &Engine| -> Result<(Vec<u32>, Vec<u32>)> {
        Ok((
            e.kept_indices(RawSource::Host(raw.view()), t, flip)?
                .indices,
            e.kept_indices(RawSource::Host(raw.view()), half, flip)?
                .indices,
        ))
    };
    compare("the compaction", both(e), both(&Engine::cpu()))
}

/// Rows a task of [`cpu_kept`] takes (its indices in one vector of that many pixels' room:
/// growing a vector a row had made half the time reallocations).
const ROWS_A_TASK: u32 = 16;

/// The `flip` that puts a format's keys in reverse order (its largest key for integer keys, all
/// ones for f32 order keys): `key ^ flip` above `t` keeps the pixels below `t ^ flip`.
pub(crate) fn flip_for_darkest(format: Format) -> u32 {
    format.max_key().unwrap_or(u32::MAX)
}

/// An order key after `flip` (0, never above a threshold, for a NaN key).
#[inline(always)]
pub(crate) fn flipped(key: Option<u32>, flip: u32) -> u32 {
    key.map_or(0, |k| k ^ flip)
}

/// The scan indices of the pixels of `view` whose order key, after `flip`, is above `t`, in scan
/// order: bands of rows in parallel, each row a plain loop over its values for the mono formats.
fn cpu_kept(view: &RawView<'_>, t: u32, flip: u32) -> Vec<u32> {
    let w = view.width as usize;
    let bands: Vec<Vec<u32>> = (0..view.height.div_ceil(ROWS_A_TASK))
        .into_par_iter()
        .map(|b| {
            let rows = b * ROWS_A_TASK..((b + 1) * ROWS_A_TASK).min(view.height);
            let mut out = Vec::with_capacity(rows.len() * w);
            for y in rows {
                kept_in_row(view, y, t, flip, &mut out);
            }
            out
        })
        .collect();
    let mut all = Vec::with_capacity(bands.iter().map(Vec::len).sum());
    for band in bands {
        all.extend_from_slice(&band);
    }
    all
}

/// Pushes the scan indices of row `y`'s kept pixels.
fn kept_in_row(view: &RawView<'_>, y: u32, t: u32, flip: u32, out: &mut Vec<u32>) {
    let (w, bpp) = (view.width as usize, view.format.bytes_per_pixel());
    {
        {
            let row = &view.row(y)[..w * bpp];
            let base = y * view.width;
            match view.format {
                Format::Luma8 => keep_where(row.iter().map(|&v| v as u32 ^ flip > t), base, out),
                Format::Luma16 => keep_where(
                    row.chunks_exact(2)
                        .map(|b| u16::from_ne_bytes([b[0], b[1]]) as u32 ^ flip > t),
                    base,
                    out,
                ),
                Format::LumaF32 => keep_where(
                    row.chunks_exact(4).map(|b| {
                        crate::spec::order_of_f32(f32::from_ne_bytes([b[0], b[1], b[2], b[3]]))
                            .is_some_and(|k| k ^ flip > t)
                    }),
                    base,
                    out,
                ),
                format => keep_where(
                    row.chunks_exact(bpp)
                        .map(|px| format.order_key(px).is_some_and(|k| k ^ flip > t)),
                    base,
                    out,
                ),
            }
        }
    }
}

/// The scan indices of the pixels of `view` that have a key (not NaN), in scan order.
fn every_keyed(view: &RawView<'_>) -> Vec<u32> {
    let (w, bpp) = (view.width as usize, view.format.bytes_per_pixel());
    let rows: Vec<Vec<u32>> = (0..view.height)
        .into_par_iter()
        .map(|y| {
            let base = y * view.width;
            let row = &view.row(y)[..w * bpp];
            let mut out = Vec::with_capacity(w);
            keep_where(
                row.chunks_exact(bpp)
                    .map(|px| view.format.order_key(px).is_some()),
                base,
                &mut out,
            );
            out
        })
        .collect();
    rows.concat()
}

/// Pushes `base + i` for every `i` whose flag is set.
#[inline(always)]
fn keep_where(flags: impl Iterator<Item = bool>, base: u32, out: &mut Vec<u32>) {
    for (i, keep) in flags.enumerate() {
        if keep {
            out.push(base + i as u32);
        }
    }
}

/// The scan indices of the kept pixels, and (where the device gathered them) their bytes.
struct Kept {
    indices: Vec<u32>,
    values: Option<Vec<u8>>,
}

/// [`cpu_kept`] on `cl`: per part of the image, the groups' counts, their offsets scanned on
/// the host, then each group's indices; of an image this engine holds, the kept pixels' bytes
/// gathered from its part by the indices still on the device.
fn cl_kept(cl: &Arc<ClEngine>, src: &RawSource<'_>, t: u32, flip: u32) -> Result<Kept> {
    let held = src.parts_on(cl).is_some();
    let mut values = Vec::new();
    let variant = crate::ops::reduce::typed::variant(src.format());
    let chunk = crate::ops::reduce::typed::chunk_bytes(src.format());
    let ppc = (chunk / src.format().bytes_per_pixel()) as u32;
    let wg = cl.grid.wg;
    let mut kept = Vec::new();
    let mut events = Vec::new();
    cl.for_each_source_part(src, chunk, |buf, range| {
        let n = range.pixels() as u32;
        let groups = crate::ops::reduce::groups_for(cl, (n as usize).div_ceil(ppc as usize));
        let counts = cl.buffer::<u32>(groups, "the compaction's group counts")?;
        let count = cl.launch_variant(
            TYPED_COUNT,
            variant,
            &[
                Arg::buf(buf),
                Arg::U32(n),
                Arg::U32(t),
                Arg::U32(flip),
                Arg::buf(&counts),
                Arg::Local(4),
            ],
            groups * wg,
            wg,
        )?;
        let mut per_group = vec![0u32; groups];
        cl.read(&counts, 0, &mut per_group)?;
        events.push(count);
        // Each group's first position, and the total after them.
        let mut offsets = Vec::with_capacity(groups + 1);
        let mut total = 0u32;
        for c in &per_group {
            offsets.push(total);
            total += c;
        }
        offsets.push(total);
        if total == 0 {
            return Ok(());
        }
        let mut offsets_buf = cl.buffer::<u32>(groups + 1, "the compaction's group offsets")?;
        cl.write(&mut offsets_buf, 0, &offsets)?;
        let out = cl.buffer::<u32>(total as usize, "the kept pixels' indices")?;
        let keep = cl.launch_variant(
            TYPED_KEEP,
            variant,
            &[
                Arg::buf(buf),
                Arg::U32(n),
                Arg::U32(t),
                Arg::U32(flip),
                Arg::buf(&offsets_buf),
                Arg::buf(&out),
                Arg::Local(16 * wg),
            ],
            groups * wg,
            wg,
        )?;
        let mut indices = vec![0u32; total as usize];
        cl.read(&out, 0, &mut indices)?;
        events.push(keep);
        if held {
            let (gather, bytes) = gather_on(cl, src.format(), buf, &out, total as usize)?;
            events.push(gather);
            values.extend_from_slice(&bytes);
        }
        let first = range.first_pixel(src.width()) as u32;
        kept.extend(indices.into_iter().map(|i| first + i));
        Ok(())
    })?;
    cl.finish(&events)?;
    Ok(Kept {
        indices: kept,
        values: held.then_some(values),
    })
}

/// The bytes of the `m` pixels of the part `px` at the part's indices `idx` (on the device),
/// one pixel after another (`typed_gather`), and its event.
fn gather_on(
    cl: &Arc<ClEngine>,
    format: Format,
    px: &Buffer<u32>,
    idx: &Buffer<u32>,
    m: usize,
) -> Result<(opencl3::event::Event, Vec<u8>)> {
    let bpp = format.bytes_per_pixel();
    let words = (m * bpp).div_ceil(4);
    let values = cl.buffer::<u32>(words, "the kept pixels' values")?;
    let wg = cl.grid.wg;
    let args = [
        Arg::buf(px),
        Arg::buf(idx),
        Arg::U32(m as u32),
        Arg::buf(&values),
    ];
    let variant = crate::ops::reduce::typed::variant(format);
    let event = cl.launch_variant(TYPED_GATHER, variant, &args, m.div_ceil(wg) * wg, wg)?;
    let mut host = vec![0u32; words];
    cl.read(&values, 0, &mut host)?;
    let mut bytes = bytemuck::cast_slice::<u32, u8>(&host).to_vec();
    bytes.truncate(m * bpp);
    Ok((event, bytes))
}

impl Engine {
    /// The scan indices of the pixels of `view` whose order key, after `flip`, is above `t`.
    fn kept_indices(&self, src: RawSource<'_>, t: u32, flip: u32) -> Result<Kept> {
        if src.pixel_count() == 0 {
            return Ok(Kept {
                indices: Vec::new(),
                values: None,
            });
        }
        let on_cpu = || {
            Ok(Kept {
                indices: cpu_kept(&src.host()?.raw(), t, flip),
                values: None,
            })
        };
        self.dispatch(
            family(src.format()),
            &(src.format(), t, flip),
            "compact",
            src.pixel_count(),
            on_cpu,
            |cl| match src.format().is_float() && !cl.info.f32_denormals {
                // A device that flushes denormals would compare their keys as zeros.
                true => on_cpu(),
                false => cl_kept(cl, &src, t, flip),
            },
        )
    }

    /// The hits of the pixels of `view` whose order key, after `flip`, is above `cut` (every
    /// pixel with a key for `None`), in scan order or (`sorted`) by that key descending, ties in
    /// scan order.
    pub(crate) fn raw_compact(
        &self,
        src: RawSource<'_>,
        cut: Option<u32>,
        flip: u32,
        sorted: bool,
    ) -> Result<Vec<RawHit>> {
        check_pixel_count(src.width(), src.height())?;
        let (kept, t) = match cut {
            Some(t) => (self.kept_indices(src, t, flip)?, t),
            // Every pixel is a candidate: no pass on a device could keep fewer.
            None => (
                Kept {
                    indices: every_keyed(&src.host()?.raw()),
                    values: None,
                },
                0,
            ),
        };
        let bpp = src.format().bytes_per_pixel();
        // The kept pixels' bytes, in `kept`'s order (the `j`th kept pixel below): gathered by the
        // device that found them, or now.
        let (kept, values) = match kept.values {
            Some(v) if v.len() == kept.indices.len() * bpp => (kept.indices, v),
            _ => {
                let values = gather_values(&src, &kept.indices)?;
                (kept.indices, values)
            }
        };
        let (w, bpp, format) = (src.width(), src.format().bytes_per_pixel(), src.format());
        let pixel = |j: u32| &values[j as usize * bpp..(j as usize + 1) * bpp];
        let order_of = |j: u32| format.order_key(pixel(j));
        // After the flip; 0 (never above `t`) for a NaN key.
        let key_of = |j: u32| flipped(order_of(j), flip);
        let mut order: Vec<u32> = (0..kept.len() as u32).collect();
        if cut.is_some() && order.par_iter().any(|&j| key_of(j) <= t) {
            return Err(Error::invalid(
                "compaction",
                "a pixel not above the threshold",
                "only pixels whose key is above it (a device answered wrongly)",
            ));
        }
        if sorted {
            // Key descending, equal keys in scan order (`kept` is in scan order): one u64 each
            // (the key's complement, then the position), all different, so an unstable sort
            // gives the stable order.
            let mut keyed: Vec<u64> = order
                .par_iter()
                .map(|&j| ((!key_of(j) as u64) << 32) | j as u64)
                .collect();
            keyed.par_sort_unstable();
            order = keyed.into_par_iter().map(|k| k as u32).collect();
        }
        let hits: Vec<RawHit> = order
            .par_iter()
            .map(|&j| {
                let i = kept[j as usize];
                let mut value = [0u8; 16];
                value[..bpp].copy_from_slice(pixel(j));
                RawHit {
                    x: i % w,
                    y: i / w,
                    key: order_of(j).unwrap_or(0),
                    value,
                }
            })
            .collect();
        Ok(hits)
    }
}

/// The bytes of the pixels at the scan indices `kept` (ascending), one pixel after another:
/// gathered on the device of an image an OpenCL engine holds, else from the host's pixels.
pub(crate) fn gather_values(src: &RawSource<'_>, kept: &[u32]) -> Result<Vec<u8>> {
    let (format, width) = (src.format(), src.width());
    let bpp = format.bytes_per_pixel();
    let mut out = vec![0u8; kept.len() * bpp];
    let parts = match src {
        RawSource::Held(held) => match held.storage {
            Storage::OpenCl(parts) => parts,
            Storage::Host(_) => return gather_host(src, kept, out),
        },
        RawSource::Host(_) => return gather_host(src, kept, out),
    };
    let cl = &parts.owner;
    let mut events = Vec::new();
    let mut done = 0;
    for p in &parts.parts {
        let first = p.range.first_pixel(width);
        let end = first + p.range.pixels() as u64;
        let m = kept[done..].partition_point(|&i| (i as u64) < end);
        if m == 0 {
            continue;
        }
        let local: Vec<u32> = kept[done..done + m]
            .iter()
            .map(|&i| (i as u64 - first) as u32)
            .collect();
        let mut idx = cl.buffer::<u32>(m, "the kept pixels' indices")?;
        cl.write(&mut idx, 0, &local)?;
        let (event, bytes) = gather_on(cl, format, &p.buffer, &idx, m)?;
        events.push(event);
        out[done * bpp..(done + m) * bpp].copy_from_slice(&bytes);
        done += m;
    }
    cl.finish(&events)?;
    if done != kept.len() {
        return Err(Error::invalid(
            "compaction",
            "an index outside the image",
            "the scan indices of the image's pixels (a device answered wrongly)",
        ));
    }
    Ok(out)
}

/// [`gather_values`] from the host's pixels.
fn gather_host(src: &RawSource<'_>, kept: &[u32], mut out: Vec<u8>) -> Result<Vec<u8>> {
    let host = src.host()?;
    let view = host.raw();
    let (w, bpp) = (view.width, view.format.bytes_per_pixel());
    if kept.iter().any(|&i| i as u64 >= view.pixel_count()) {
        return Err(Error::invalid(
            "compaction",
            "an index outside the image",
            "the scan indices of the image's pixels (a device answered wrongly)",
        ));
    }
    out.par_chunks_exact_mut(bpp.max(1))
        .zip(kept.par_iter())
        .for_each(|(o, &i)| {
            let (x, y) = ((i % w) as usize, i / w);
            o.copy_from_slice(&view.row(y)[x * bpp..(x + 1) * bpp]);
        });
    Ok(out)
}
