//! The OpenCL launchers of the scan (`scan.cl`'s passes and `lookback.cl`'s single pass).

use super::kernels::*;
use super::plan::single_pass;
use crate::cpu::alloc_zeroed;
use crate::error::Result;
use crate::opencl::{Arg, ClEngine, ProgramId, ScratchKind, WordFormat, u32_arg};
use opencl3::event::Event;
use opencl3::memory::Buffer;
use std::sync::Arc;

/// The longest array that GPUs scan in one work-group (`scan_single`): the radix passes'
/// 32 counters a group, 33,792 on a GPU of 132 compute units.
pub(crate) const SCAN_SINGLE_MAX: usize = 64 * 1024;

/// Enqueues the exclusive scan of `n` elements of `src` into `dst` (which may be `src`),
/// starting from `carry`, with the passes of `program` (the scan's own, or another that holds
/// its files). Returns the group sums buffer; its element `groups` is the total.
pub(crate) fn cl_scan(
    cl: &ClEngine,
    program: ProgramId,
    src: &Buffer<u32>,
    n: usize,
    dst: &Buffer<u32>,
    carry: u32,
    events: &mut Vec<Event>,
) -> Result<(Buffer<u32>, usize)> {
    let n32 = u32_arg(n, "array length")?;
    let wg = cl.grid.wg;
    if !cl.grid.contiguous && n <= SCAN_SINGLE_MAX {
        // One kernel, not three, for short arrays such as the radix passes' digit counts.
        let sums = cl.buffer::<u32>(2, "scan group sums")?;
        events.push(cl.launch(
            SCAN_SINGLE.in_program(program),
            &[
                Arg::buf(src),
                Arg::U32(n32),
                Arg::buf(dst),
                Arg::U32(carry),
                Arg::buf(&sums),
            ],
            wg,
            wg,
        )?);
        return Ok((sums, 1));
    }
    let g = groups_for(cl, n);
    let sums = cl.buffer::<u32>(g + 1, "scan group sums")?;
    events.push(cl.launch(
        SCAN_REDUCE.in_program(program),
        &[Arg::buf(src), Arg::U32(n32), Arg::buf(&sums)],
        g * wg,
        wg,
    )?);
    events.push(cl.launch(
        SCAN_GROUPS.in_program(program),
        &[Arg::buf(&sums), Arg::U32(g as u32), Arg::U32(carry)],
        wg,
        wg,
    )?);
    events.push(cl.launch(
        SCAN_APPLY.in_program(program),
        &[Arg::buf(src), Arg::U32(n32), Arg::buf(dst), Arg::buf(&sums)],
        g * wg,
        wg,
    )?);
    Ok((sums, g))
}

/// Enqueues the exclusive scan of `n` elements of `src` into `dst`, another buffer, from
/// `carry`: in one pass where [`single_pass`] says so (the whole array read once and written
/// once), else by [`cl_scan`].
pub(crate) fn cl_scan_into(
    cl: &ClEngine,
    src: &Buffer<u32>,
    n: usize,
    dst: &Buffer<u32>,
    carry: u32,
    events: &mut Vec<Event>,
) -> Result<()> {
    if !single_pass(cl)? {
        return cl_scan(cl, PROGRAM, src, n, dst, carry, events).map(|_| ());
    }
    let n32 = u32_arg(n, "array length")?;
    let wg = cl.grid.wg;
    let tiles = n.div_ceil(tile(cl));
    cl.with_tile_words(WordFormat::Epoch30, tiles, |words, epoch| {
        let args = [
            Arg::buf(src),
            Arg::U32(n32),
            Arg::buf(dst),
            Arg::U32(carry),
            Arg::buf(words),
            Arg::U32(epoch),
        ];
        events.push(cl.launch(SCAN_LOOKBACK, &args, tiles * wg, wg)?);
        Ok(())
    })
}

/// Scans a host slice on the device, in chunks of one buffer each, carrying the total.
pub(super) fn cl_scan_host(cl: &Arc<ClEngine>, data: &[u32]) -> Result<Vec<u32>> {
    let cap = ((cl.max_buffer_bytes / 4) as usize).clamp(1024, 1 << 30);
    let chunk = cap.min(data.len());
    let mut src = cl.scratch(ScratchKind::ScanInput, chunk)?;
    let dst = cl.scratch(ScratchKind::ScanOutput, chunk)?;
    let mut out = vec![0u32; data.len()];
    let mut carry = 0u32;
    let mut events = Vec::new();
    for (d, o) in data.chunks(chunk).zip(out.chunks_mut(chunk)) {
        cl.write(&mut src, 0, d)?;
        cl_scan_into(cl, &src, d.len(), &dst, carry, &mut events)?;
        cl.read(&dst, 0, o)?;
        if let (Some(&last_out), Some(&last_in)) = (o.last(), d.last()) {
            carry = last_out.wrapping_add(last_in);
        }
    }
    cl.finish(&events)?;
    Ok(out)
}

/// Appends `m` zeros to `v`: fresh zero pages (in huge pages where possible) when `v` is empty.
pub(crate) fn grow(v: &mut Vec<u32>, m: usize) {
    if v.is_empty() {
        *v = alloc_zeroed::<u32>(m);
    } else {
        v.resize(v.len() + m, 0);
    }
}

/// Elements per work-group tile of the GPU scan kernels (`TILE` in compact.cl).
pub(crate) fn tile(cl: &ClEngine) -> usize {
    if cl.grid.contiguous {
        1
    } else {
        cl.grid.wg * 32
    }
}

/// Work-groups for a pass over `n` elements: on GPUs a tile per group at least (the scans of
/// the sort's 32 × 1056 digit counts then run on 5 groups, not 2), on CPU devices ranges of
/// 16 Ki elements at least.
pub(crate) fn groups_for(cl: &ClEngine, n: usize) -> usize {
    let per = if cl.grid.contiguous {
        16 * 1024
    } else {
        tile(cl)
    };
    cl.grid.groups(n, per, cl.grid.max_groups)
}
