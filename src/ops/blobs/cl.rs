//! The OpenCL launcher of the blobs (`cl/blobs/blobs.cl`, whose head says how): tiles labelled
//! in local memory, unions across their borders, pointer jumping until every pixel points at
//! its root, the roots numbered by the scan of their flags, the statistics by atomics into a
//! row a blob, read back and finished on the host (the area rule and the numbering), and the
//! label image where asked for.

use super::kernels::*;
use super::{Acc, Blob, BlobOptions, Connectivity, Labels, LabelsTo, Weigh, number_blobs};
use crate::device::RawSource;
use crate::device::{ArrayStorage, DeviceArray, PooledBuffer};
use crate::error::Result;
use crate::opencl::{Arg, ClEngine};
use crate::ops::reduce::groups_for;
use crate::ops::reduce::typed::{chunk_bytes, variant};
use crate::ops::scan::cl_scan_into;
use opencl3::memory::Buffer;
use std::sync::Arc;

/// Words of a blob's row of statistics (`STATS_WORDS` in blobs.cl) and their places.
const STATS_WORDS: usize = 19;
const S_AREA: usize = 0;
const S_MIN_X: usize = 1;
const S_MAX_X: usize = 2;
const S_MAX_Y: usize = 3;
const S_KEYS: usize = 4;
const S_WEIGHTS: usize = 7;
const S_WX: usize = 10;
const S_WY: usize = 13;
const S_PEAK: usize = 16;
const S_PEAK_AT: usize = 17;
const S_ROOT: usize = 18;

/// A three-word sum.
fn wide(s: &[u32]) -> u128 {
    s[0] as u128 | (s[1] as u128) << 32 | (s[2] as u128) << 64
}

/// The sums of a blob's row of statistics, for an image `width` wide.
fn acc_of(s: &[u32], width: u32) -> Acc {
    let (root, peak) = (s[S_ROOT], s[S_PEAK_AT]);
    Acc {
        area: s[S_AREA] as u64,
        min_x: s[S_MIN_X],
        min_y: root / width,
        max_x: s[S_MAX_X],
        max_y: s[S_MAX_Y],
        first_x: root % width,
        key_sum: wide(&s[S_KEYS..]) as u64,
        weight_sum: wide(&s[S_WEIGHTS..]) as u64,
        wx: wide(&s[S_WX..]),
        wy: wide(&s[S_WY..]),
        peak_key: s[S_PEAK],
        peak_x: peak % width,
        peak_y: peak / width,
    }
}

/// The blobs of `view` on `cl`, their labels where `to` says and their weights: the whole image
/// in one buffer (a `DeviceLimit` error, answered on the CPU, where it does not fit).
pub(super) fn cl_blobs(
    cl: &Arc<ClEngine>,
    view: &RawSource<'_>,
    t: u32,
    opts: &BlobOptions,
    to: LabelsTo,
) -> Result<(Vec<Blob>, Option<Labels>, Weigh)> {
    let n = view.pixel_count() as usize;
    let needed = 4 * (n as u64 + 1);
    if needed > cl.max_buffer_bytes {
        let what = "bytes of a buffer (a word a pixel)";
        return Err(cl.limit_error(BLOB_BORDERS, what, needed, cl.max_buffer_bytes));
    }
    // A held image in several parts (held parts are padded to whole chunks, so they split a
    // little sooner than an upload of the same pixels): read back and uploaded whole, as the
    // host image would be, so that where the image is never changes the answer.
    if let Some(parts) = view.parts_on(cl)
        && parts.len() > 1
    {
        let host = view.host()?;
        return cl_blobs(cl, &RawSource::Host(host.raw()), t, opts, to);
    }
    let mut found = None;
    cl.for_each_source_part(view, chunk_bytes(view.format()), |px, range| {
        if range.pixels() != n {
            let what = "bytes of a buffer (the whole image)";
            let bytes = view.pixel_count() * view.format().bytes_per_pixel() as u64;
            return Err(cl.limit_error(BLOB_INIT, what, bytes, cl.max_buffer_bytes));
        }
        found = Some(label(cl, px, view, t, opts, to)?);
        Ok(())
    })?;
    found.ok_or_else(|| cl.limit_error(BLOB_INIT, "parts of the image (none)", 0, 0))
}

/// Columns of a tile of `blob_tiles` (`TILE_W` in blobs.cl).
const TILE_W: usize = 32;
/// Entries of a work-group's table of sums (`BLOB_SLOTS`).
const SLOTS: usize = 64;

/// The kernels over the image in `px`.
fn label(
    cl: &Arc<ClEngine>,
    px: &Buffer<u32>,
    view: &RawSource<'_>,
    t: u32,
    opts: &BlobOptions,
    to: LabelsTo,
) -> Result<(Vec<Blob>, Option<Labels>, Weigh)> {
    // From the engine's idle image buffers, and given back to them: buffers of the image's size
    // made and freed a call cost an allocation each and, on CUDA, a context-wide synchronisation
    // at the free. (Later users of them are on the same in-order queue.)
    let n = view.pixel_count() as usize;
    let parent = cl.image_buffer::<u32>(n, "the blobs' parents")?;
    // The other buffer of the pointer jumping, then the roots' flags, then the label image.
    let other = cl.image_buffer::<u32>(n + 1, "the roots' flags")?;
    let rank = cl.image_buffer::<u32>(n + 1, "the roots' numbers")?;
    // One byte a pixel (`uchar` in the kernels), in words.
    let fg = cl.image_buffer::<u32>(n.div_ceil(4), "the foreground mask")?;
    let result = label_with(cl, px, view, t, opts, to, (&parent, &rank, &fg), other);
    cl.give_image_buffer(n, parent);
    cl.give_image_buffer(n + 1, rank);
    cl.give_image_buffer(n.div_ceil(4), fg);
    result
}

/// [`label`] with its buffers; `other` becomes the label image kept on the device, or goes back
/// to the engine's idle buffers.
#[allow(clippy::too_many_arguments)]
fn label_with(
    cl: &Arc<ClEngine>,
    px: &Buffer<u32>,
    view: &RawSource<'_>,
    t: u32,
    opts: &BlobOptions,
    to: LabelsTo,
    (parent, rank, fg): (&Buffer<u32>, &Buffer<u32>, &Buffer<u32>),
    other: Buffer<u32>,
) -> Result<(Vec<Blob>, Option<Labels>, Weigh)> {
    let (n, width, height) = (view.pixel_count() as usize, view.width(), view.height());
    let n32 = n as u32;
    let defines = variant(view.format());
    let wg = cl.grid.wg;
    let ppc = chunk_bytes(view.format()) / view.format().bytes_per_pixel();
    let over_chunks = groups_for(cl, n.div_ceil(ppc)) * wg;
    let over_pixels = groups_for(cl, n + 1) * wg;
    // Tiles of four pixels a work-item.
    let tile_h = (4 * wg / TILE_W).max(1);
    let tiles = (width as usize).div_ceil(TILE_W) * (height as usize).div_ceil(tile_h);
    let over_tiles = tiles.min(cl.grid.max_groups.max(1)) * wg;
    let (tiles_x, tiles_y) = (
        (width as usize).div_ceil(TILE_W),
        (height as usize).div_ceil(tile_h),
    );
    let borders = height as usize * (2 * tiles_x - 1) + (tiles_y - 1) * width as usize + 1;
    let mut moved = cl.buffer::<u32>(1, "the pointer jumping's flag")?;
    let mut largest = cl.buffer::<u32>(1, "the largest key")?;
    cl.write(&mut largest, 0, &[0u32])?;
    let eight = (opts.connectivity == Connectivity::Eight) as u32;
    let mut events = Vec::new();
    let launch =
        |kernel, args: &[Arg], global| cl.launch_variant(kernel, defines, args, global, wg);
    events.push(launch(
        BLOB_INIT,
        &[
            Arg::buf(px),
            Arg::U32(n32),
            Arg::U32(t),
            Arg::buf(parent),
            Arg::buf(fg),
            Arg::buf(&largest),
            Arg::Local(4),
        ],
        over_chunks,
    )?);
    events.push(launch(
        BLOB_TILES,
        &[
            Arg::buf(parent),
            Arg::buf(fg),
            Arg::U32(width),
            Arg::U32(height),
            Arg::U32(tile_h as u32),
            Arg::U32(eight),
            Arg::Local(4 * TILE_W * tile_h),
            Arg::Local(TILE_W * tile_h),
        ],
        over_tiles,
    )?);
    events.push(launch(
        BLOB_BORDERS,
        &[
            Arg::buf(parent),
            Arg::buf(fg),
            Arg::U32(width),
            Arg::U32(height),
            Arg::U32(tile_h as u32),
            Arg::U32(eight),
        ],
        groups_for(cl, borders) * wg,
    )?);
    // Pointer jumping until no pointer moves, ending in `parent` (a round more where it ended
    // in the other buffer: nothing moves then).
    let mut in_parent = true;
    loop {
        cl.write(&mut moved, 0, &[0u32])?;
        let (from, to) = if in_parent {
            (parent, &other)
        } else {
            (&other, parent)
        };
        events.push(launch(
            BLOB_JUMP,
            &[
                Arg::buf(from),
                Arg::U32(n32),
                Arg::buf(to),
                Arg::buf(&moved),
            ],
            over_pixels,
        )?);
        in_parent = !in_parent;
        let mut flag = [0u32];
        cl.read(&moved, 0, &mut flag)?;
        if flag[0] == 0 && in_parent {
            break;
        }
    }
    events.push(launch(
        BLOB_ROOTS,
        &[Arg::buf(parent), Arg::U32(n32), Arg::buf(&other)],
        over_pixels,
    )?);
    cl_scan_into(cl, &other, n + 1, rank, 0, &mut events)?;
    let mut count = [0u32];
    cl.read(rank, n, &mut count)?;
    let m = count[0] as usize;
    let mut top = [0u32];
    if view.format().is_float() && m > 0 {
        cl.read(&largest, 0, &mut top)?;
    }
    let weigh = Weigh::of(view.format(), opts, (top[0] != 0).then_some(top[0]))?;
    let (blobs, number) = if m == 0 {
        (Vec::new(), Vec::new())
    } else {
        blob_stats(cl, px, view, weigh, opts, (parent, rank), m, &mut events)?
    };
    if to == LabelsTo::None {
        cl.finish(&events)?;
        cl.give_image_buffer(n + 1, other);
        return Ok((blobs, None, weigh));
    }
    let mut number_buf = cl.buffer::<u32>(m.max(1), "the blobs' numbers")?;
    if m > 0 {
        cl.write(&mut number_buf, 0, &number)?;
    }
    events.push(launch(
        BLOB_LABELS,
        &[
            Arg::buf(parent),
            Arg::U32(n32),
            Arg::buf(rank),
            Arg::buf(&number_buf),
            Arg::buf(&other),
        ],
        over_pixels,
    )?);
    if to == LabelsTo::Device {
        cl.finish(&events)?;
        let array = DeviceArray {
            len: n,
            storage: ArrayStorage::OpenCl(PooledBuffer {
                owner: cl.clone(),
                count: n + 1,
                buf: Some(other),
            }),
        };
        return Ok((blobs, Some(Labels::Device(array)), weigh));
    }
    let mut out = crate::cpu::alloc_zeroed::<u32>(n);
    cl.read(&other, 0, &mut out)?;
    cl.finish(&events)?;
    cl.give_image_buffer(n + 1, other);
    Ok((blobs, Some(Labels::Host(out)), weigh))
}

/// The statistics of the `m` blobs (after the roots' scan: `parent` holds each pixel's root,
/// `rank` each root's number): the blobs that pass the area rule and every blob's number.
#[allow(clippy::too_many_arguments)]
fn blob_stats(
    cl: &Arc<ClEngine>,
    px: &Buffer<u32>,
    view: &RawSource<'_>,
    weigh: Weigh,
    opts: &BlobOptions,
    (parent, rank): (&Buffer<u32>, &Buffer<u32>),
    m: usize,
    events: &mut Vec<opencl3::event::Event>,
) -> Result<(Vec<Blob>, Vec<u32>)> {
    let (n, width) = (view.pixel_count() as usize, view.width());
    let n32 = n as u32;
    let defines = variant(view.format());
    let wg = cl.grid.wg;
    let ppc = chunk_bytes(view.format()) / view.format().bytes_per_pixel();
    let over_chunks = groups_for(cl, n.div_ceil(ppc)) * wg;
    let launch =
        |kernel, args: &[Arg], global| cl.launch_variant(kernel, defines, args, global, wg);
    let stats_bytes = (4 * STATS_WORDS * m) as u64;
    if stats_bytes > cl.max_buffer_bytes {
        // More blobs than a buffer holds rows for: the CPU answers (as for any device limit).
        let what = "bytes of a buffer (the blobs' statistics)";
        return Err(cl.limit_error(BLOB_STATS, what, stats_bytes, cl.max_buffer_bytes));
    }
    let stats = cl.buffer::<u32>(m * STATS_WORDS, "the blobs' statistics")?;
    events.push(launch(
        BLOB_STATS_INIT,
        &[Arg::buf(&stats), Arg::U32(m as u32)],
        groups_for(cl, m) * wg,
    )?);
    events.push(launch(
        BLOB_STATS,
        &[
            Arg::buf(px),
            Arg::U32(n32),
            Arg::U32(width),
            Arg::U32(opts.background),
            Arg::I32(weigh.exponent()),
            Arg::U64(match weigh {
                Weigh::F32 { base, .. } => base as u64,
                Weigh::Int { .. } => 0,
            }),
            Arg::buf(parent),
            Arg::buf(rank),
            Arg::buf(&stats),
            Arg::Local(4 * SLOTS),
            Arg::Local(4 * SLOTS * STATS_WORDS),
        ],
        over_chunks,
    )?);
    events.push(launch(
        BLOB_PEAKS,
        &[
            Arg::buf(px),
            Arg::U32(n32),
            Arg::buf(parent),
            Arg::buf(rank),
            Arg::buf(&stats),
            Arg::Local(4 * SLOTS),
            Arg::Local(4 * SLOTS),
        ],
        over_chunks,
    )?);
    let mut rows = crate::cpu::alloc_zeroed::<u32>(m * STATS_WORDS);
    cl.read(&stats, 0, &mut rows)?;
    // Each row straight to its blob (no vector of sums between: 220 K blobs of noise at
    // 8192² are 21 MB more to allocate and fill).
    let accs = rows.chunks_exact(STATS_WORDS).map(|s| acc_of(s, width));
    Ok(number_blobs(accs, opts))
}
