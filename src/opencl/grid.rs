//! Grid sizing: how kernels walk memory on a device and how many work-groups they launch, from
//! device queries.

use super::DeviceInfo;
use crate::error::{Error, Result};

/// How kernels should walk memory on this device, chosen from device queries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Grid {
    /// CPU devices (PoCL): each work-item walks a contiguous range, work-groups of one.
    /// GPUs: work-items of a group read neighbouring elements (coalesced), groups of `wg`.
    pub contiguous: bool,
    /// Work-group size of the streaming kernels (fixed per device: PoCL recompiles a kernel
    /// for every new local size).
    pub wg: usize,
    /// How many work-groups a grid-stride kernel launches at most (enough to fill the device).
    pub max_groups: usize,
    /// Pixels a work-item of the GPU radix scatter ranks a tile (`RADIX_PER` in radix.cl).
    pub radix_per: usize,
}

impl Grid {
    /// The grid for `info`'s device, in the contiguous (CPU devices) or coalesced layout. Where
    /// the driver stops a work-item's loops after `loop_cap` iterations (see `quirks`), enough
    /// groups that a work-item of a grid-stride kernel walks at most an eighth of that over the
    /// largest buffer.
    pub(crate) fn new(info: &DeviceInfo, contiguous: bool, loop_cap: Option<u64>) -> Grid {
        // A power of two (the kernels' tree reductions halve it), at most 256.
        let wg = if contiguous {
            1
        } else {
            let most = 256.min(info.max_work_group_size.max(1));
            1 << most.ilog2()
        };
        let units = info.compute_units.max(1) as usize;
        let filled = units * if contiguous { 4 } else { 8 };
        let max_groups = match loop_cap {
            Some(cap) => {
                let elements = (info.max_alloc_bytes / 4).max(1);
                let per_item = (cap / 8).max(1);
                filled.max(elements.div_ceil(per_item * wg as u64) as usize)
            }
            None => filled,
        };
        Grid {
            contiguous,
            wg,
            max_groups,
            radix_per: radix_per(wg, info.local_mem_bytes),
        }
    }

    /// Work-groups for `n` elements: `per_group` each (at least one group), at most `most`.
    pub(crate) fn groups(&self, n: usize, per_group: usize, most: usize) -> usize {
        n.div_ceil(per_group.max(1)).clamp(1, most.max(1))
    }
}

/// Bytes of the GPU radix scatter's local memory (`RadixLocal` in radix.cl) with `wg`
/// work-items of `per` pixels each: the counters (16 words a work-item, one of padding every 16)
/// or the staged tile (pixels and indices), whichever is larger, the scan, two offsets a digit
/// and a byte of digit a staged pixel.
pub(crate) fn radix_local_bytes(wg: usize, per: usize) -> usize {
    let counters = 16 * wg + 16 * wg / 16;
    4 * counters.max(2 * wg * per) + 4 * wg + 2 * 32 * 4 + wg * per
}

/// Pixels a work-item of the GPU radix scatter ranks a tile: 16, or 8 where the scatter's local
/// memory (38,144 bytes at 16 with 256 work-items, 20,736 at 8) would not fit with 1 KiB to
/// spare, as on GPUs with 32 KiB of local memory (OpenCL's minimum, which 8 fits).
pub(crate) fn radix_per(wg: usize, local_mem_bytes: u64) -> usize {
    if radix_local_bytes(wg, 16) as u64 + 1024 <= local_mem_bytes {
        16
    } else {
        8
    }
}

/// `n` as a kernel argument, or an error naming `what` when it does not fit 32 bits.
pub(crate) fn u32_arg(n: usize, what: &'static str) -> Result<u32> {
    u32::try_from(n).map_err(|_| Error::invalid(what, n, "at most u32::MAX elements"))
}
