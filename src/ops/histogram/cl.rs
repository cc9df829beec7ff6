//! The OpenCL launchers of the histograms (`histogram.cl`).

use super::*;

/// Work-groups for `n` pixels: enough to fill the device; on GPUs at least 64 pixels per
/// work-item, so that zeroing and merging the local copies is amortised. `scratch` is the local
/// memory of one group: above 16 KiB the grid shrinks so that its groups (8 per compute unit
/// at most) still fit the compute units' local memory at once; a second, partial wave of a
/// grid-stride kernel would cost more than the lost occupancy.
pub(super) fn groups_for(cl: &ClEngine, n: usize, scratch: usize) -> usize {
    let t = cl.grid;
    let per_group = if t.contiguous { 64 * 1024 } else { t.wg * 64 };
    let most = if t.contiguous || scratch <= 16 * 1024 {
        t.max_groups
    } else {
        (t.max_groups * 16 * 1024 / scratch).max(1)
    };
    t.groups(n, per_group, most)
}

pub(super) fn cl_histogram(
    cl: &Arc<ClEngine>,
    input: ImageInput<'_>,
    kind: Kind,
) -> Result<[u32; BINS]> {
    let t = cl.grid;
    let scratch = if t.contiguous {
        // Two sub-tables, SUB counters apart (see histogram.cl).
        2 * SUB * 4
    } else {
        BINS * 4
    };
    // The histogram is BINS u32s; it lives in a pooled partials buffer when one is large enough
    // (a fresh buffer per call costs more than the kernel on a GPU), else in its own.
    let words = BINS / 2;
    let pooled = cl.partials_len() >= words;
    let run = |hist: &mut opencl3::memory::Buffer<u64>| -> Result<[u32; BINS]> {
        // Zeroed by the driver: a kernel for it cost a build at the first call (50-70 ms on
        // NVIDIA with its cache cold).
        let mut events = vec![cl.fill(hist, 0u64, words)?];
        let hist = &*hist;
        cl.for_each_part(input, |buf, range| {
            let n = range.pixels();
            let groups = groups_for(cl, n, scratch);
            events.push(cl.launch(
                kind.kernel(),
                &[
                    Arg::buf(buf),
                    Arg::U32(n as u32),
                    Arg::buf(hist),
                    Arg::Local(scratch),
                ],
                groups * t.wg,
                t.wg,
            )?);
            Ok(())
        })?;
        let mut raw = [0u64; BINS / 2];
        cl.read(hist, 0, &mut raw)?;
        cl.finish(&events)?;
        let mut out = [0u32; BINS];
        out.copy_from_slice(bytemuck::cast_slice(&raw));
        Ok(out)
    };
    if pooled {
        cl.with_partials(run)
    } else {
        run(&mut cl.buffer::<u64>(words, "a histogram")?)
    }
}
