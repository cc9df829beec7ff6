//! The OpenCL launchers of the reductions (`reduce.cl`).

use super::*;
use crate::opencl::Defines;

/// Work-groups for a streaming reduction over `n` pixels: enough to fill the device, and on
/// GPUs at least 16 pixels per work-item so that the per-group tree is amortised.
pub(crate) fn groups_for(cl: &ClEngine, n: usize) -> usize {
    let t = cl.grid;
    let per_group = if t.contiguous { 16 * 1024 } else { t.wg * 16 };
    t.groups(n, per_group, t.max_groups)
}

/// Enqueues `kernel` (built with `variant`: a format of `typed.cl`, or none) over `n`
/// elements with `args` and the partials buffer as its last argument, and reads back
/// `per_group` u64s for each work-group.
pub(super) fn group_partials(
    cl: &ClEngine,
    (kernel, variant): (Kernel, Defines),
    args: &[Arg],
    n: usize,
    per_group: usize,
    events: &mut Vec<opencl3::event::Event>,
) -> Result<Vec<u64>> {
    let groups = groups_for(cl, n);
    let mut host = vec![0u64; per_group * groups];
    cl.with_partials(|partials| {
        let mut all = args.to_vec();
        all.push(Arg::buf(partials));
        events.push(cl.launch_variant(kernel, variant, &all, groups * cl.grid.wg, cl.grid.wg)?);
        cl.read(partials, 0, &mut host)
    })?;
    Ok(host)
}

pub(super) fn cl_argbest(
    cl: &Arc<ClEngine>,
    input: ImageInput<'_>,
    extreme: Extreme,
) -> Result<Option<Best>> {
    let width = input.width() as u64;
    let mut best: Option<Best> = None;
    let mut events = Vec::new();
    cl.for_each_part(input, |buf, range| {
        let n = range.pixels();
        let args = [Arg::buf(buf), Arg::U32(n as u32), Arg::U32(flip(extreme))];
        let host = group_partials(cl, (LUMA_ARGBEST, Defines::NONE), &args, n, 2, &mut events)?;
        let base = range.first_pixel(width as u32);
        for g in host.chunks_exact(2) {
            if g[0] != 0 {
                let l = (g[0] >> 32) as u32;
                let index = !(g[0] as u32) as u64;
                let b = Best::new(l, base + index, g[1] as u32);
                best = Some(best.map_or(b, |x| Best::max(x, b)));
            }
        }
        Ok(())
    })?;
    cl.finish(&events)?;
    Ok(best)
}

pub(super) fn cl_stats(cl: &Arc<ClEngine>, input: ImageInput<'_>) -> Result<(u64, u32, u32)> {
    let (mut sum, mut lo, mut hi) = (0u64, u32::MAX, 0u32);
    let mut events = Vec::new();
    cl.for_each_part(input, |buf, range| {
        let n = range.pixels();
        let args = [Arg::buf(buf), Arg::U32(n as u32)];
        let host = group_partials(cl, (LUMA_STATS, Defines::NONE), &args, n, 2, &mut events)?;
        for g in host.chunks_exact(2) {
            sum += g[0];
            lo = lo.min((g[1] >> 32) as u32);
            hi = hi.max(g[1] as u32);
        }
        Ok(())
    })?;
    cl.finish(&events)?;
    Ok((sum, lo, hi))
}

/// Enqueues `u32_stats` over the first `n` elements of `buf` (n >= 1) and combines the
/// per-group partials, with indices offset by `base`.
pub(super) fn cl_array_stats(
    cl: &ClEngine,
    buf: &Buffer<u32>,
    n: usize,
    base: u64,
    events: &mut Vec<opencl3::event::Event>,
) -> Result<ArrayPartial> {
    let args = [Arg::buf(buf), Arg::U32(u32_arg(n, "array length")?)];
    let host = group_partials(cl, (U32_STATS, Defines::NONE), &args, n, 3, events)?;
    let mut p = ArrayPartial::NONE;
    for g in host.chunks_exact(3) {
        // The neutral keys of a group that saw nothing: u64::MAX for the minimum, 0 for the
        // maximum (no index reaches u32::MAX).
        let group = ArrayPartial {
            sum: g[0],
            min: (g[1] >> 32) as u32,
            argmin: if g[1] == u64::MAX {
                u64::MAX
            } else {
                base + (g[1] as u32) as u64
            },
            max: (g[2] >> 32) as u32,
            argmax: if g[2] == 0 {
                u64::MAX
            } else {
                base + (!(g[2] as u32)) as u64
            },
        };
        p = ArrayPartial::combine(p, group);
    }
    Ok(p)
}

/// Array stats of a host slice on the device, in chunks of one buffer each.
pub(super) fn cl_array_stats_host(cl: &Arc<ClEngine>, data: &[u32]) -> Result<ArrayPartial> {
    let cap = ((cl.max_buffer_bytes / 4) as usize).clamp(1024, 1 << 30);
    let chunk = cap.min(data.len()).max(1);
    let mut buf = cl.scratch(ScratchKind::ArrayStatsInput, chunk)?;
    let mut events = Vec::new();
    let mut p = ArrayPartial::NONE;
    let result = data.chunks(chunk).enumerate().try_for_each(|(i, d)| {
        cl.write(&mut buf, 0, d)?;
        let part = cl_array_stats(cl, &buf, d.len(), (i * chunk) as u64, &mut events)?;
        p = ArrayPartial::combine(p, part);
        Ok::<(), Error>(())
    });
    let finished = result.and_then(|()| cl.finish(&events));
    drop(buf);
    finished.map(|()| p)
}
