//! Variant choice and tile sizes of the GPU compaction: pure functions of the device's sizes
//! and the tuning.

use super::*;
use crate::config::CompactRelocation;

/// The program variant whose `compact_count_warps` and (`compact_nv.cl`, NVIDIA only)
/// `compact_relocate_warps` compact in scan order a segment a warp, ranked with NVIDIA's warp
/// ballots (inline PTX), with no work-group barrier; `compact_lookback` ranks the same way in
/// one pass.
pub(super) const WARP_RELOCATION: Defines = Defines::NONE.with("COMPACT_WARP", 1);

/// How a GPU compacts in scan order.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Relocation {
    /// `compact_count` then `compact_relocate`: a range a work-group (portable).
    Group,
    /// `compact_count_warps` then `compact_relocate_warps` ([`WARP_RELOCATION`]).
    Warp,
    /// `compact_lookback` ([`WARP_RELOCATION`]): one pass, a decoupled look-back with fallback.
    LookBack,
    /// `compact_lookback_group` (`compact_lookback.cl`, portable): one pass, a range a
    /// work-group, the portable look-back with fallback.
    GroupLookBack,
}

/// Local memory `compact_lookback_group` takes with `rounds` rounds staged: a word a pixel of
/// its tile (rounds of `CLPIX_WG * 8` pixels), twice with indices, and its own arrays (`sh`,
/// a word a work-item; `win`, 32 u64s).
fn group_lookback_bytes(cl: &ClEngine, rounds: usize, with_idx: bool) -> u64 {
    let wg = cl.grid.wg;
    let staged = rounds * wg * 8 * 4 * if with_idx { 2 } else { 1 };
    (staged + wg * 4 + 32 * 8) as u64
}

/// Rounds `compact_lookback_group` stages (its tile): 4, halved while they do not fit the
/// device's local memory with 1 KiB to spare. With 256 work-items: 4 (32 KiB of staging) for
/// pixels on GPUs with 48 KiB, 2 with indices; 2 and 1 with OpenCL's minimum of 32 KiB.
pub(super) fn group_lookback_rounds(cl: &ClEngine, with_idx: bool) -> usize {
    let mut rounds = 4;
    while rounds > 1 && group_lookback_bytes(cl, rounds, with_idx) + 1024 > cl.info.local_mem_bytes
    {
        rounds /= 2;
    }
    rounds
}

/// Pixels a work-group of `compact_lookback_group` takes.
pub(super) fn group_lookback_tile(cl: &ClEngine, with_idx: bool) -> usize {
    cl.grid.wg * 8 * group_lookback_rounds(cl, with_idx)
}

/// Whether `compact_lookback_group`'s staging of one round, with indices, fits the device's
/// local memory (it does on every device with OpenCL's minimum of 32 KiB).
fn group_lookback_fits(cl: &ClEngine) -> bool {
    group_lookback_bytes(cl, 1, true) <= cl.info.local_mem_bytes
}

/// Rounds of 4 pixels a work-item `compact_lookback` takes (`LB_ROUNDS_PIXELS` in
/// compact_nv.cl; `compact_lookback_indexed` half as many): 8, halved while its local arrays
/// (the staged rounds, 4 words a work-item each, twice with indices; the exchange, scan and
/// window words) do not fit the device's local memory with 1 KiB to spare. 8 on GPUs with
/// 48 KiB (34,944 bytes with indices and 256 work-items), 4 (the least: a batch is 2 rounds)
/// with OpenCL's minimum of 32 KiB.
pub(super) fn lookback_rounds(cl: &ClEngine) -> usize {
    let wg = cl.grid.wg;
    let fixed = (2 * wg + 32) * 4;
    // 4 words (16 bytes) a work-item a round, with or without indices.
    let staged = |rounds: usize| rounds * wg * 16;
    let mut rounds = 8;
    while rounds > 4 && (staged(rounds) + fixed + 1024) as u64 > cl.info.local_mem_bytes {
        rounds /= 2;
    }
    rounds
}

/// The program variant of the look-back kernels: [`WARP_RELOCATION`], with fewer rounds
/// where [`lookback_rounds`] says so.
pub(super) fn lookback_variant(cl: &ClEngine) -> Defines {
    match lookback_rounds(cl) {
        8 => WARP_RELOCATION,
        r => WARP_RELOCATION.with("LB_ROUNDS_PIXELS", r as u32),
    }
}

/// Pixels a work-group of `compact_lookback` takes: rounds of 4 pixels a work-item,
/// [`lookback_rounds`] of them, half as many with indices.
pub(super) fn lookback_tile(cl: &ClEngine, with_idx: bool) -> usize {
    let rounds = lookback_rounds(cl);
    cl.grid.wg * 4 * if with_idx { rounds / 2 } else { rounds }
}

/// The largest part `compact_lookback` takes: its tiles' words hold counts in 30 bits.
pub(super) const LOOKBACK_MAX_PIXELS: usize = (1 << 30) - 1;

/// How a GPU compacts in scan order. On NVIDIA GPUs with work-groups of whole warps, where the
/// program variant [`WARP_RELOCATION`] builds (compute capability 7.0 and later), NVIDIA's
/// single pass [`Relocation::LookBack`] where the device has 64-bit atomics (issue 30: a
/// look-back *with fallback* waits on no other group, so it keeps every invariant), else
/// [`Relocation::Warp`]. Every other GPU: the portable single pass
/// [`Relocation::GroupLookBack`] where the device has 64-bit atomics, else
/// [`Relocation::Group`]. `compact_relocate` = `group`, `group-lookback`, `warp` or
/// `lookback` forces one, to measure or test it; a forced variant that does not build is an
/// error, so that a measurement never runs the other kernels unnoticed. `with_idx`: whether the
/// call keeps indices (its kernel is the one whose build decides).
pub(super) fn relocation(cl: &ClEngine, with_idx: bool) -> Result<Relocation> {
    if cl.grid.contiguous {
        return Ok(Relocation::Group);
    }
    let atomics = cl.info.has_extension("cl_khr_int64_base_atomics");
    let needs_atomics = |value: &str| Error::InvalidTuning {
        setting: "compact_relocate",
        value: value.into(),
        expected: "group or warp on this device: the single passes need \
                   cl_khr_int64_base_atomics (and the portable one 17 KiB of local memory)",
    };
    let portable = match atomics && group_lookback_fits(cl) {
        true => Relocation::GroupLookBack,
        false => Relocation::Group,
    };
    let forced = match cl.tuning.compact_relocate {
        None => None,
        Some(CompactRelocation::Group) => return Ok(Relocation::Group),
        Some(CompactRelocation::GroupLookBack) => {
            return match portable {
                Relocation::GroupLookBack => Ok(portable),
                _ => Err(needs_atomics("group-lookback")),
            };
        }
        Some(CompactRelocation::Warp) => Some(Relocation::Warp),
        Some(CompactRelocation::LookBack) => Some(Relocation::LookBack),
    };
    let value = match forced {
        Some(Relocation::LookBack) => "lookback",
        _ => "warp",
    };
    // The kernels cut a work-group into warps of 32.
    if !cl.grid.wg.is_multiple_of(32) {
        return match forced {
            Some(_) => Err(Error::InvalidTuning {
                setting: "compact_relocate",
                value: value.into(),
                expected: "group on this device, whose work-groups are not whole warps of 32",
            }),
            None => Ok(portable),
        };
    }
    let refused = Error::InvalidTuning {
        setting: "compact_relocate",
        value: value.into(),
        expected: "group on this device: the warp kernels need an NVIDIA GPU, or \
                   the emulate_nvidia setting",
    };
    if forced == Some(Relocation::LookBack) && !atomics {
        return Err(needs_atomics(value));
    }
    // The kernel this call will run stands for the variant, in the variant it will run (with
    // one kernel a program, checking another would build a kernel the call does not need).
    let first = match (forced, atomics) {
        (Some(Relocation::Warp), _) | (None, false) => {
            (kernels::COMPACT_COUNT_WARPS, WARP_RELOCATION)
        }
        _ if with_idx => (kernels::COMPACT_LOOKBACK_INDEXED, lookback_variant(cl)),
        _ => (kernels::COMPACT_LOOKBACK, lookback_variant(cl)),
    };
    let builds = cl.nvidia_variant(
        first,
        "the warp relocation",
        forced.is_some().then_some(refused),
    )?;
    Ok(match builds {
        true => forced.unwrap_or(match atomics {
            true => Relocation::LookBack,
            false => Relocation::Warp,
        }),
        false => portable,
    })
}
