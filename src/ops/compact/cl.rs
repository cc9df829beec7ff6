//! The OpenCL launchers of the compaction (`compact.cl`).

use super::*;

/// What a device compaction writes for each kept pixel.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum KeptAs {
    /// Its pixel (the compacted image).
    Pixels,
    /// Its part-local scan index and its pixel (hits, made on the host: GPUs, where the bus
    /// carries 8 bytes a hit instead of 16).
    Indexed,
    /// A whole [`PixelHit`], 4 words (CPU devices: the host then only copies).
    Hits,
}

/// Kept pixels read back from the device: global scan indices and pixels (`Indexed`), pixels
/// (`Pixels`), or 4 words per hit in `px` (`Hits`).
pub(super) struct Compacted {
    pub(super) idx: Vec<u32>,
    pub(super) px: Vec<u32>,
}

/// Where a GPU compaction of one image part writes: the kept pixels, and their part-local scan
/// indices when `with_idx`.
#[derive(Clone, Copy)]
pub(super) struct PartOut<'a> {
    pub(super) px: &'a Buffer<u32>,
    pub(super) idx: &'a Buffer<u32>,
    pub(super) with_idx: bool,
}

/// Steps 1 and 2 of a sorting pass: `kernel` counts the kept pixels of each of `g` groups
/// into `bins` counters a group (its arguments: `args`, then the counters), then the
/// `bins × g` counters are scanned in place (exclusive). After them the buffer has one spare
/// word and `info` words a group that the kernel may fill and the scan leaves alone
/// (radix_hist's `GROUP_INFO`). Returns the counters, and the scan's group sums with the
/// index of the total there.
pub(super) fn group_counts_scanned(
    cl: &ClEngine,
    (kernel, what): (Kernel, &'static str),
    args: Vec<Arg>,
    (bins, info): (usize, usize),
    g: usize,
    events: &mut Vec<Event>,
) -> Result<(Buffer<u32>, Buffer<u32>, usize)> {
    let wg = cl.grid.wg;
    let counts = cl.buffer::<u32>((bins + info) * g + 1, what)?;
    let mut args = args;
    args.push(Arg::buf(&counts));
    events.push(cl.launch(kernel, &args, g * wg, wg)?);
    let (sums, sg) = cl_scan(cl, PROGRAM, &counts, bins * g, &counts, 0, events)?;
    Ok((counts, sums, sg))
}

/// The two radix passes of the GPU sorted compaction of `n` pixels of `buf`: kept pixels by
/// luminance descending, stable, into `out`. Returns the number kept. The second pass reads
/// that number on the device (compact.cl's `pass_len`), so both passes are enqueued before
/// the host waits for it.
pub(super) fn cl_radix_sorted(
    cl: &ClEngine,
    buf: &Buffer<u32>,
    n: usize,
    wmin: u32,
    out: PartOut<'_>,
    events: &mut Vec<Event>,
) -> Result<usize> {
    let PartOut {
        px: out_px,
        idx: out_idx,
        with_idx,
    } = out;
    const RADIX: usize = 32;
    // radix_scatter_indexed's flag: the indices come from the source's (pass 2).
    const RADIX_SRC_IDX: u32 = 2;
    // `pass_len`'s "no length on the device": the pass takes the length it is given.
    const LEN_GIVEN: u32 = u32::MAX;
    let wg = cl.grid.wg;
    let n32 = u32_arg(n, "image part")?;
    let g = groups_for(cl, n);
    let tmp_px = cl.scratch(ScratchKind::RadixPixels, n)?;
    let tmp_idx = cl.scratch(ScratchKind::RadixIndices, if with_idx { n } else { 1 })?;
    // One pass over at most `n` elements of `src` (kept: wsum >= `keep_min`), by the digit at
    // `shift`; `len_at[at]` caps the length on the device unless `at` is LEN_GIVEN.
    let mut pass = |(src, src_idx): (&Buffer<u32>, &Buffer<u32>),
                    (len_at, at): (&Buffer<u32>, u32),
                    keep_min: u32,
                    shift: u32,
                    flags: u32,
                    (dst_idx, dst_px): (&Buffer<u32>, &Buffer<u32>)|
     -> Result<(Buffer<u32>, usize)> {
        // The arguments every kernel of the pass takes after its sources: the length (n, or
        // len_at[at]), the keep bound and the digit.
        let pass_args = || {
            [
                Arg::U32(n32),
                Arg::U32(keep_min),
                Arg::U32(shift),
                Arg::buf(len_at),
                Arg::U32(at),
            ]
        };
        let (ghist, sums, sg) = group_counts_scanned(
            cl,
            (RADIX_HIST, "digit counts per group"),
            [Arg::buf(src)].into_iter().chain(pass_args()).collect(),
            // Each group's single digit (or none) and its kept count after the counters.
            (RADIX, 2),
            g,
            events,
        )?;
        // Pixels only, or with indices: two kernels, so that the pixels-only one has no index
        // loads, stores or branches (compact.cl has the measurements). Each has a second
        // kernel with the same arguments for the groups whose kept pixels share one digit.
        let ((kernel, single), args): (_, Vec<Arg>) = if with_idx {
            let outs = [
                Arg::buf(&ghist),
                Arg::U32(flags),
                Arg::buf(dst_idx),
                Arg::buf(dst_px),
            ];
            let srcs = [Arg::buf(src), Arg::buf(src_idx)];
            let args = srcs.into_iter().chain(pass_args()).chain(outs).collect();
            ((RADIX_SCATTER_INDEXED, RADIX_SINGLE_INDEXED), args)
        } else {
            let outs = [Arg::buf(&ghist), Arg::buf(dst_px)];
            let args = [Arg::buf(src)]
                .into_iter()
                .chain(pass_args())
                .chain(outs)
                .collect();
            ((RADIX_SCATTER, RADIX_SINGLE), args)
        };
        // The scatter's local memory (RadixLocal) is an argument, sized here from the same
        // plan as RADIX_PER: a static array was counted twice by Oclgrind (41,472 bytes against
        // its 32 KiB), which some compilers may do as well.
        let mut scatter_args = args.clone();
        scatter_args.push(Arg::Local(radix_local_bytes(wg, cl.grid.radix_per)));
        events.push(cl.launch(kernel, &scatter_args, g * wg, wg)?);
        events.push(cl.launch(single, &args, g * wg, wg)?);
        Ok((sums, sg))
    };
    let result = pass(
        (buf, &tmp_idx),
        (buf, LEN_GIVEN),
        wmin,
        0,
        0,
        (&tmp_idx, &tmp_px),
    )
    .and_then(|(sums, sg)| {
        // Pass 2: everything in pass 1's output is kept (wsum >= 0); its length is pass 1's
        // total, sums[sg], read on the device.
        let at = u32_arg(sg, "scan groups")?;
        pass(
            (&tmp_px, &tmp_idx),
            (&sums, at),
            0,
            5,
            RADIX_SRC_IDX,
            (out_idx, out_px),
        )?;
        let mut kept = [0u32];
        cl.read(&sums, sg, &mut kept)?;
        Ok((kept[0] as usize).min(n))
    });
    // Both passes have been enqueued before the scratch goes back: later users of the same
    // in-order queue run after them.
    drop((tmp_px, tmp_idx));
    result
}

/// The single-pass scan-order compaction of `n` pixels of `buf` into `out`: NVIDIA's
/// (`compact_lookback`, or `compact_lookback_indexed` with indices; `n` at most
/// [`LOOKBACK_MAX_PIXELS`]) or the portable one (`compact_lookback_group(_indexed)`). Returns
/// the number kept, read from the last tile's word.
pub(super) fn cl_lookback(
    cl: &ClEngine,
    (buf, n): (&Buffer<u32>, usize),
    wmin: u32,
    mode: Relocation,
    out: PartOut<'_>,
    events: &mut Vec<Event>,
) -> Result<usize> {
    let wg = cl.grid.wg;
    // The kernel, its tile, its outputs (with their local staging) and its words' format: the
    // status and count at bit `shift`, the epoch above them.
    let (kernel, tile, outputs, variant, (format, shift)) = match mode {
        Relocation::LookBack => {
            let tile = lookback_tile(cl, out.with_idx);
            // Rounds of 4 words a work-item (with indices, half the rounds, twice).
            let (kernel, outputs) = match out.with_idx {
                true => (
                    COMPACT_LOOKBACK_INDEXED,
                    vec![
                        Arg::buf(out.idx),
                        Arg::buf(out.px),
                        Arg::Local(2 * tile * 4),
                    ],
                ),
                false => (
                    COMPACT_LOOKBACK,
                    vec![Arg::buf(out.px), Arg::Local(tile * 4)],
                ),
            };
            let words = (WordFormat::Epoch32, 30);
            (kernel, tile, outputs, lookback_variant(cl), words)
        }
        _ => {
            let tile = group_lookback_tile(cl, out.with_idx);
            let rounds = Arg::U32(group_lookback_rounds(cl, out.with_idx) as u32);
            // A word a pixel of the tile, twice with indices.
            let (kernel, outputs) = match out.with_idx {
                true => (
                    COMPACT_LOOKBACK_GROUP_INDEXED,
                    vec![
                        rounds,
                        Arg::buf(out.idx),
                        Arg::buf(out.px),
                        Arg::Local(2 * tile * 4),
                    ],
                ),
                false => (
                    COMPACT_LOOKBACK_GROUP,
                    vec![rounds, Arg::buf(out.px), Arg::Local(tile * 4)],
                ),
            };
            let words = (WordFormat::Epoch30, 32);
            (kernel, tile, outputs, Defines::NONE, words)
        }
    };
    let tiles = n.div_ceil(tile);
    let mut last = [0u64];
    cl.with_tile_words(format, tiles, |words, epoch| {
        let mut args = vec![
            Arg::buf(buf),
            Arg::U32(u32_arg(n, "image part")?),
            Arg::U32(wmin),
            Arg::buf(words),
            Arg::U32(epoch),
        ];
        args.extend(outputs);
        events.push(cl.launch_variant(kernel, variant, &args, tiles * wg, wg)?);
        cl.read(words, tiles - 1, &mut last)?;
        // The last tile's word: this launch's epoch, PREFIX (2) and the total.
        let word_epoch = last[0] >> (shift + 2);
        match word_epoch == epoch as u64 && (last[0] >> shift) & 3 == 2 {
            true => Ok((last[0] & ((1u64 << shift) - 1)) as usize),
            false => Err(Error::OpenCl {
                call: "a single-pass compaction (its last tile published no total: the device \
                       broke its 64-bit atomics)",
                code: 0,
                name: "no result",
            }),
        }
    })
}

pub(super) fn cl_compact(
    cl: &Arc<ClEngine>,
    input: ImageInput<'_>,
    threshold: u16,
    sorted: bool,
    kept: KeptAs,
) -> Result<Compacted> {
    let wmin = wsum_min(threshold);
    let nbins = 1023 - threshold as usize;
    let width = input.width();
    let mut all = Compacted {
        idx: Vec::new(),
        px: Vec::new(),
    };
    let with_idx = kept == KeptAs::Indexed;
    // Words a kept pixel takes in the output buffer.
    let per_hit = if kept == KeptAs::Hits { 4 } else { 1 };
    let mut parts = 0usize;
    let mut events = Vec::new();
    cl.for_each_part(input, |buf, range| {
        let n = range.pixels();
        let first = range.first_pixel(width) as u32;
        // Hits of a whole image on a CPU device: the kernel writes them into the memory of
        // the result itself (a copy of 16 bytes a hit into fresh pages cost as much as the
        // kernels). Only where device memory is host memory: a GPU forced to the contiguous
        // layout (tests) would copy or pin all of it.
        let in_place = kept == KeptAs::Hits
            && cl.info.device_type == crate::opencl::DeviceType::Cpu
            && n as u64 == input.pixel_count();
        let out_px = if in_place {
            // `all.px` is empty here (one part): fresh zero pages, touched only where written.
            grow(&mut all.px, n * per_hit);
            // SAFETY: `all.px` is neither touched nor reallocated until the blocking read
            // below, into the same memory, after the kernels; the buffer is dropped right
            // after that read.
            let buf =
                unsafe { cl.buffer_over_host(all.px.as_mut_ptr(), n * per_hit, "compacted hits")? };
            Scratch::unpooled(cl, buf)
        } else {
            cl.scratch(ScratchKind::CompactedPixels, n * per_hit)?
        };
        let out_idx = cl.scratch(ScratchKind::CompactedIndices, if with_idx { n } else { 1 })?;
        let wg = cl.grid.wg;
        // Launches the relocation `plain` of the program variant `variant`, or `hits` for
        // PixelHits (which take the part's place in the image instead of an index buffer),
        // after the arguments `args`.
        let relocate =
            |variant: Defines, (plain, hits): (Kernel, Kernel), mut args: Vec<Arg>, g: usize| {
                let kernel = if kept == KeptAs::Hits {
                    args.extend([
                        Arg::U32(range.cols),
                        Arg::U32(range.x0),
                        Arg::U32(range.first_row),
                        Arg::buf(&out_px),
                    ]);
                    hits
                } else {
                    args.extend([
                        Arg::U32(with_idx as u32),
                        Arg::buf(&out_idx),
                        Arg::buf(&out_px),
                    ]);
                    plain
                };
                cl.launch_variant(kernel, variant, &args, g * wg, wg)
            };
        let part_out = PartOut {
            px: &out_px,
            idx: &out_idx,
            with_idx,
        };
        // Scan order on GPUs: see `relocation`.
        let mode = match (sorted, kept) {
            (false, KeptAs::Pixels | KeptAs::Indexed) => relocation(cl, with_idx)?,
            _ => Relocation::Group,
        };
        let m = if sorted && !cl.grid.contiguous {
            cl_radix_sorted(cl, buf, n, wmin, part_out, &mut events)?
        } else if (mode == Relocation::LookBack && n <= LOOKBACK_MAX_PIXELS)
            || mode == Relocation::GroupLookBack
        {
            cl_lookback(cl, (buf, n), wmin, mode, part_out, &mut events)?
        } else {
            let total_at = if sorted {
                sorted_by_counts(cl, (buf, n), (wmin, nbins), &relocate, &mut events)?
            } else {
                scan_order(cl, (buf, n), wmin, mode, &relocate, &mut events)?
            };
            let mut total = [0u32];
            cl.read(&total_at.0, total_at.1, &mut total)?;
            (total[0] as usize).min(n)
        };
        if in_place {
            cl.read(&out_px, 0, &mut all.px[..m * per_hit])?;
            drop(out_px);
            all.px.truncate(m * per_hit);
        } else {
            let start = all.px.len();
            grow(&mut all.px, m * per_hit);
            cl.read(&out_px, 0, &mut all.px[start..])?;
            drop(out_px);
        }
        if with_idx {
            let start = all.idx.len();
            grow(&mut all.idx, m);
            let idx = &mut all.idx[start..];
            cl.read(&out_idx, 0, idx)?;
            if first != 0 {
                idx.iter_mut().for_each(|i| *i += first);
            }
        }
        drop(out_idx);
        parts += 1;
        Ok(())
    })?;
    cl.finish(&events)?;
    if sorted && parts > 1 {
        sort_parts(&mut all, kept);
    }
    Ok(all)
}

/// Hits written by the device as 4 words each (`KeptAs::Hits`), as `PixelHit`s: the words'
/// memory itself when the allocation fits exactly (no copy), else a copy.
pub(super) fn hits_of(mut words: Vec<u32>) -> Vec<PixelHit> {
    const _: () = assert!(std::mem::size_of::<PixelHit>() == 16);
    const _: () = assert!(std::mem::align_of::<PixelHit>() == 4);
    words.truncate(words.len() / 4 * 4);
    if words.is_empty() {
        return Vec::new();
    }
    if words.capacity() != words.len() {
        words.shrink_to_fit();
    }
    if words.capacity() == words.len() {
        let mut words = std::mem::ManuallyDrop::new(words);
        let (ptr, len) = (words.as_mut_ptr(), words.len());
        // SAFETY: PixelHit is repr(C), 16 bytes with alignment 4 (checked above), made of
        // integers and bytes for which every bit pattern is valid (its 2 padding bytes need
        // none); the allocation holds exactly len / 4 of them, with the same alignment.
        unsafe { Vec::from_raw_parts(ptr as *mut PixelHit, len / 4, len / 4) }
    } else {
        words
            .chunks_exact(4)
            .map(|w| PixelHit {
                x: w[0],
                y: w[1],
                luminance: w[2] as u16,
                rgba: ((w[2] >> 16) | (w[3] << 16)).to_le_bytes(),
            })
            .collect()
    }
}

/// A part's relocation: the kernel `plain` of the program variant, or `hits` for PixelHits
/// (which take the part's place in the image instead of an index buffer), after `args`, over
/// the given work-groups.
type Relocate<'a> = dyn Fn(Defines, (Kernel, Kernel), Vec<Arg>, usize) -> Result<Event> + 'a;

/// The sorted compaction of `n` pixels of `buf` on CPU devices: luminance counts per group,
/// scanned, then the scatter. Returns the scanned counts and where their total is.
fn sorted_by_counts(
    cl: &Arc<ClEngine>,
    (buf, n): (&Buffer<u32>, usize),
    (wmin, nbins): (u32, usize),
    relocate: &Relocate<'_>,
    events: &mut Vec<Event>,
) -> Result<(Buffer<u32>, usize)> {
    let n32 = n as u32;
    // A group count that keeps the `bins × groups` counters within one buffer.
    let cap = (cl.max_buffer_bytes / 4) as usize;
    let g = groups_for(cl, n).min((cap - 1) / nbins).max(1);
    let (ghist, sums, sg) = group_counts_scanned(
        cl,
        (COMPACT_HIST, "luminance counts per group"),
        vec![
            Arg::buf(buf),
            Arg::U32(n32),
            Arg::U32(wmin),
            Arg::U32(nbins as u32),
        ],
        (nbins, 0),
        g,
        events,
    )?;
    events.push(relocate(
        Defines::NONE,
        (COMPACT_SCATTER, COMPACT_SCATTER_HITS),
        vec![
            Arg::buf(buf),
            Arg::U32(n32),
            Arg::U32(wmin),
            Arg::U32(nbins as u32),
            Arg::buf(&ghist),
        ],
        g,
    )?);
    Ok((sums, sg))
}

/// The scan-order compaction of `n` pixels of `buf` in two steps, a count and the relocation:
/// on NVIDIA GPUs a segment a warp (WARP_RELOCATION, which also counts per segment; also the
/// look-back's parts beyond LOOKBACK_MAX_PIXELS), elsewhere a range a work-group. Returns the
/// counts and where their total is.
fn scan_order(
    cl: &Arc<ClEngine>,
    (buf, n): (&Buffer<u32>, usize),
    wmin: u32,
    mode: Relocation,
    relocate: &Relocate<'_>,
    events: &mut Vec<Event>,
) -> Result<(Buffer<u32>, usize)> {
    let (n32, wg) = (n as u32, cl.grid.wg);
    // NVIDIA GPUs: a segment a warp (WARP_RELOCATION, which also counts per
    // segment; also the look-back's parts beyond LOOKBACK_MAX_PIXELS); elsewhere
    // a range a work-group.
    let warps = matches!(mode, Relocation::Warp | Relocation::LookBack);
    let g = groups_for(cl, n);
    let counts = cl.buffer::<u32>(g + 1, "kept pixels per group")?;
    let seg = match warps {
        true => Some(cl.buffer::<u32>(g * (wg / 32), "kept pixels per warp segment")?),
        false => None,
    };
    let (variant, count, relocation) = match warps {
        true => (
            WARP_RELOCATION,
            COMPACT_COUNT_WARPS,
            (COMPACT_RELOCATE_WARPS, COMPACT_RELOCATE_HITS),
        ),
        false => (
            Defines::NONE,
            COMPACT_COUNT,
            (COMPACT_RELOCATE, COMPACT_RELOCATE_HITS),
        ),
    };
    // The arguments the count and the relocation share.
    let mut args = vec![
        Arg::buf(buf),
        Arg::U32(n32),
        Arg::U32(wmin),
        Arg::buf(&counts),
    ];
    args.extend(seg.as_ref().map(Arg::buf));
    events.push(cl.launch_variant(count, variant, &args, g * wg, wg)?);
    if cl.grid.contiguous {
        // GPUs' relocation sums the counts before its group itself
        // (group_offset).
        events.push(cl.launch(
            SCAN_GROUPS.in_program(PROGRAM),
            &[Arg::buf(&counts), Arg::U32(g as u32), Arg::U32(0)],
            wg,
            wg,
        )?);
    }
    events.push(relocate(variant, relocation, args, g)?);
    Ok((counts, g))
}

/// Sorts the parts' results, each sorted already, into one: a stable sort in scan order by
/// luminance descending keeps scan order within equal luminance across parts too.
fn sort_parts(all: &mut Compacted, kept: KeptAs) {
    let with_idx = kept == KeptAs::Indexed;
    // Each part is sorted; a stable sort of the parts in scan order by luminance descending
    // keeps scan order within equal luminance across parts too.
    let key = |p: u32| std::cmp::Reverse(luma_u32(p));
    if kept == KeptAs::Hits {
        // Whole hits, 4 words each, their luminance in the low half of the third.
        let hits: &mut [[u32; 4]] = bytemuck::cast_slice_mut(&mut all.px);
        hits.par_sort_by_key(|h| std::cmp::Reverse(h[2] & 0xffff));
    } else if with_idx {
        let mut pairs: Vec<(u32, u32)> = all
            .idx
            .iter()
            .copied()
            .zip(all.px.iter().copied())
            .collect();
        pairs.par_sort_by_key(|&(_, p)| key(p));
        (all.idx, all.px) = pairs.into_iter().unzip();
    } else {
        all.px.par_sort_by_key(|&p| key(p));
    }
}
