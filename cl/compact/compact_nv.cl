/* NVIDIA only (inline PTX: warp ballots), pasted after compact.cl in its programs. */
#if defined(COMPACT_WARP) && !CLPIX_CONTIGUOUS
/* ---- Scan-order compaction on NVIDIA GPUs (compute capability 7.0 and later; the host builds
 * this variant there and falls back to compact_count / compact_relocate where it does not
 * build). Group g's range is cut into WARPS segments, one a warp; each warp compacts its own
 * segment, ranking its pixels with ballots (PTX's vote.sync, through inline assembly, which
 * NVIDIA's OpenCL compiler takes), so the relocation has no work-group barrier at all, where
 * compact_relocate pays a 17-barrier work-group scan every 2048 pixels. No scan kernel either:
 *   compact_count_warps     counts[g] = kept pixels of group g, seg[g * WARPS + w] = of its
 *                           segment w
 *   compact_relocate_warps  group g sums counts[0..g) itself; warp w writes its segment's
 *                           kept pixels in scan order from there + the counts of segments
 *                           0..w-1 of its group; the last group writes the total at counts[G].
 * H200, compacted_image of 8192x8192 at threshold 512, kernel time: 0.207-0.217 ms against
 * 0.229-0.231 for compact_count + compact_relocate (0.234-0.244 with scan_groups between) in
 * the same calls (CUB DeviceSelect::If 0.172-0.177 ms). The image is still read twice (count, then relocate):
 * even at the copy's bandwidth the two kernels would take about 0.17 ms, CUB's time.
 * The radix passes written the same way, a segment a warp with each pixel stored straight to
 * its digit's place (ballots of the digit's 5 bits rank it, lane d holds digit d's offset),
 * were correct but slow: pass 1's scatter 0.60 ms against 0.305 for radix_scatter's tiles,
 * pass 2's 0.24 against 0.173 (H200; 32 scattered 4-byte stores a step cost more than the
 * tiles' staging); branch experiment/warp-radix.
 */
#define WARP 32u
#define WARPS (CLPIX_WG / WARP)
/* A round: the warp's 32 lanes load 4 consecutive pixels each (one 16-byte load). */
#define WROUND (4u * WARP)
/* Rounds a warp loads before it ranks them: 2 for pixels (H200, compacted_image: 0.211-0.219
   ms, against 0.217-0.231 with 4 rounds and 0.236-0.237 with 8), 4 with indices (compact:
   0.267-0.271 ms, against 0.292-0.295 with 2). Loading the next rounds before ranking these
   was slower (0.224-0.231). Each round's kept pixels are staged in the warp's slice of local
   memory and written out lane by lane (each lane writing its own kept pixels: 0.244-0.247;
   staging all the rounds of a batch before writing: 0.207-0.216 against 0.210-0.211, and
   compact 0.276-0.277 against 0.267-0.269). */
#define WR_UNROLL_MAX 4u

#if CLPIX_WARP_EMULATED
/* The intrinsics through local memory and barriers (-D CLPIX_WARP_EMULATED=1): slow, but on
 * any device, so that a test runs this variant's logic on PoCL, which has no PTX. Every call
 * is made by all work-items of the group alike, as barriers need. xch holds CLPIX_WG words. */
#define XCH_WORDS CLPIX_WG
inline uint nv_ballot(uint pred, __local uint* xch) {
    uint lid = get_local_id(0), base = lid - lid % WARP, r = 0;
    xch[lid] = pred != 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint l = 0; l < WARP; ++l) r |= xch[base + l] << l;
    barrier(CLK_LOCAL_MEM_FENCE);
    return r;
}
inline void nv_syncwarp(void) { barrier(CLK_LOCAL_MEM_FENCE); }
#else
#define XCH_WORDS 1u
/* The lanes whose pred is not 0 (all 32 lanes take part). */
inline uint nv_ballot(uint pred, __local uint* xch) {
    uint r;
    __asm__("{ .reg .pred p; setp.ne.u32 p, %1, 0; vote.sync.ballot.b32 %0, p, 0xffffffff; }"
            : "=r"(r) : "r"(pred));
    return r;
}
/* The warp's local-memory writes before it are seen by its lanes' reads after it. */
inline void nv_syncwarp(void) { __asm__ __volatile__("bar.warp.sync 0xffffffff;" ::: "memory"); }
#endif

/* Rounds whose loads the count has in flight at once (1 and 4 were no faster on the H200). The
   count takes 0.085-0.09 ms where CUB's reduction reads as much in 0.070: neither walking the
   image grid-stride (a probe), nor loads without bound checks in whole segments (the count
   unchanged, the relocation 0.122 -> 0.145 ms) closed that. */
#define WC_INFLIGHT 2u

/* Segment w of group g: [*first, *e), in rounds of WROUND pixels. Returns the rounds, a
 * multiple of TILE / WARPS / WROUND = 8 (the same for every warp of the grid: the emulated
 * intrinsics need the whole group in step), those at or beyond *e empty. */
inline uint warp_segment(uint n, uint g, uint G, uint w, uint* first, uint* e) {
    ulong per = ((ulong)n + G - 1) / G;
    per = (per + TILE - 1) / TILE * TILE;
    ulong s = per / WARPS;
    *first = (uint)min((ulong)n, (ulong)g * per + w * s);
    *e = (uint)min((ulong)n, (ulong)g * per + (w + 1) * s);
    return (uint)(s / WROUND);
}

__kernel __attribute__((reqd_work_group_size(CLPIX_WG, 1, 1)))
void compact_count_warps(__global const uint* px, uint n, uint wmin, __global uint* counts,
                         __global uint* seg) {
    __local uint sh[CLPIX_WG];
    __local uint seg_sums[WARPS];
    uint lid = get_local_id(0), lane = lid % WARP, w = lid / WARP;
    uint g = get_group_id(0), first, e;
    uint rounds = warp_segment(n, g, get_num_groups(0), w, &first, &e);
    uint c = 0;
    first += lane * 4;
    /* WC_INFLIGHT rounds' loads in flight (rounds is a multiple of 8). */
    for (uint k = 0; k < rounds; k += WC_INFLIGHT) {
        uint4 v[WC_INFLIGHT];
        uint m[WC_INFLIGHT];
        for (uint u = 0; u < WC_INFLIGHT; ++u)
            m[u] = load4_kept(px, first + (k + u) * WROUND, e, wmin, &v[u]);
        for (uint u = 0; u < WC_INFLIGHT; ++u) c += popcount(m[u]);
    }
    sh[lid] = c;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid < WARPS) {
        uint s = 0;
        for (uint l = 0; l < WARP; ++l) s += sh[lid * WARP + l];
        seg[g * WARPS + lid] = s;
        seg_sums[lid] = s;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid == 0) {
        uint s = 0;
        for (uint k = 0; k < WARPS; ++k) s += seg_sums[k];
        counts[g] = s;
    }
}

/* One round of the warp (lane l's 4 pixels v from index at, its kept mask m): the kept
 * pixels are staged in scan order at st_px[base..] (their indices at st_idx[base..] if
 * with_idx, a constant at each call). Returns how many the round kept. */
inline uint warp_stage_round(uint4 v, uint m, uint at, uint base, const uint with_idx,
                             __local uint* st_px, __local uint* st_idx, __local uint* xch) {
    uint below = (1u << (get_local_id(0) % WARP)) - 1u; /* the lanes before this one */
    /* Pixel j of each lane is kept in the lanes of ballot j: the kept pixels before this lane's
       are those of the lanes before it, and this lane's before j. */
    uint b0 = nv_ballot(m & 1u, xch), b1 = nv_ballot(m & 2u, xch);
    uint b2 = nv_ballot(m & 4u, xch), b3 = nv_ballot(m & 8u, xch);
    uint x = base + popcount(b0 & below) + popcount(b1 & below) + popcount(b2 & below) +
             popcount(b3 & below);
    uint p[4] = {v.x, v.y, v.z, v.w};
    for (uint j = 0; j < 4; ++j) {
        if (m & (1u << j)) {
            st_px[x] = p[j];
            if (with_idx) st_idx[x] = at + j;
            ++x;
        }
    }
    return popcount(b0) + popcount(b1) + popcount(b2) + popcount(b3);
}

/* This warp's rounds, its kept pixels written from its offset on. `with_idx` is a constant
   at each call (see relocate_tiles). st_px and st_idx hold WROUND words for this warp. */
inline void relocate_warp(__global const uint* px, uint n, uint wmin, __global uint* counts,
                          __global const uint* seg, const uint with_idx,
                          __global uint* out_idx, __global uint* out_px, __local uint* st_px,
                          __local uint* st_idx, __local uint* xch, __local uint* xsum) {
    uint lid = get_local_id(0), lane = lid % WARP, w = lid / WARP;
    uint g = get_group_id(0), first, e;
    uint rounds = warp_segment(n, g, get_num_groups(0), w, &first, &e);
    first += lane * 4;
    uint run = group_offset(counts, xsum);
    /* A segment that keeps nothing has nothing to write (dark regions: H200, 8192² white spots
       on black, compacted_image 0.157-0.160 -> 0.103 ms, the relocation now 0.036); emulated
       ballots need the whole group in step, so there only a group that keeps nothing returns. */
    if (CLPIX_WARP_EMULATED ? counts[g] == 0 : seg[g * WARPS + w] == 0) return;
    for (uint k = 0; k < w; ++k) run += seg[g * WARPS + k];
    const uint unroll = with_idx ? 4u : 2u; /* rounds is a multiple of both */
    uint4 v[WR_UNROLL_MAX];
    uint m[WR_UNROLL_MAX];
    for (uint k = 0; k < rounds; k += unroll) {
        for (uint u = 0; u < unroll; ++u)
            m[u] = load4_kept(px, first + (k + u) * WROUND, e, wmin, &v[u]);
        for (uint u = 0; u < unroll; ++u) {
            uint at = first + (k + u) * WROUND;
            uint total = warp_stage_round(v[u], m[u], at, 0u, with_idx, st_px, st_idx, xch);
            nv_syncwarp();
            for (uint j = lane; j < total; j += WARP) {
                out_px[run + j] = st_px[j];
                if (with_idx) out_idx[run + j] = st_idx[j];
            }
            nv_syncwarp();
            run += total;
        }
    }
}

__kernel __attribute__((reqd_work_group_size(CLPIX_WG, 1, 1)))
void compact_relocate_warps(__global const uint* px, uint n, uint wmin, __global uint* counts,
                            __global const uint* seg, uint with_idx,
                            __global uint* out_idx, __global uint* out_px) {
    __local uint xch[XCH_WORDS];
    __local uint xsum[CLPIX_WG];
    __local uint st_px[WARPS * WROUND];
    __local uint st_idx[WARPS * WROUND];
    uint w = get_local_id(0) / WARP;
    __local uint* sp = st_px + w * WROUND;
    __local uint* si = st_idx + w * WROUND;
    if (with_idx)
        relocate_warp(px, n, wmin, counts, seg, 1u, out_idx, out_px, sp, si, xch, xsum);
    else
        relocate_warp(px, n, wmin, counts, seg, 0u, out_idx, out_px, sp, si, xch, xsum);
}

/* ---- Single-pass scan-order compaction: a decoupled look-back *with fallback* (opt-in:
 * CLPIX_COMPACT_RELOCATE=lookback; the default stays the count + relocation above, as issue 4
 * asks). Work-group t takes tile t, ranks the kept pixels of each warp's segment with ballots
 * as they arrive and stages them in local memory (no pixel stays in registers), publishes its
 * count (AGGREGATE) in its tile's word, looks back over its predecessors' words for its offset,
 * publishes its inclusive prefix (PREFIX), then copies its staged pixels out. The image is read
 * once. H200, 8192² at threshold 512: compacted_image 0.142-0.148 ms, compact (with indices)
 * 0.216-0.221, against 0.206-0.221 and 0.264-0.266 for compact_count_warps +
 * compact_relocate_warps and CUB DeviceSelect::If's 0.171-0.174 in the same calls. A first version that kept the pixels in
 * registers through the look-back (80 registers) and looked back with the whole work-group
 * took 0.30 ms; groups drawing tiles from an atomic ticket instead of their group id, 0.025 ms
 * more; clearing the words with a fill before each launch (no epochs), 0.02 ms more.
 * No forward progress between work-groups is assumed: a group never waits on another without
 * bound. When a predecessor has published nothing after LOOKBACK_SPIN re-reads (it may not have
 * started), the group counts that predecessor's tile itself (the fallback: the same loads, the
 * same count) and looks on past it. The result is the same whatever the order in which groups
 * run; only the time depends on it.
 * A tile's word holds everything one group learns from another: the launch's epoch (high 32
 * bits), the status (2 bits) and the value (30 bits), written by atom_xchg and read by
 * atom_add(.., 0) (cl_khr_int64_base_atomics), so nothing relies on ordering between
 * different locations, and a word left by an earlier launch (another epoch) reads as "nothing
 * yet": the words are never cleared. The host keeps n below 2^30.
 */
#if CLPIX_HAS_INT64_ATOMICS /* the host's query of cl_khr_int64_base_atomics; without it the
                              host does not offer the single pass */
#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable
#define LB_AGGREGATE 1u
#define LB_PREFIX 2u
#define LB_VALUE 0x3fffffffu
/* Rounds a warp stages: pixels only 8 (a tile of WARPS * 8 * WROUND pixels, 32 KiB of local
   memory; in one call, both with a fill before each launch, 4 rounds took 0.183-0.188 ms and 8
   0.173), with indices 4 (their staging doubles it). */
#ifndef LB_ROUNDS_PIXELS /* fewer where local memory is short: lookback_rounds() in plan.rs */
#define LB_ROUNDS_PIXELS 8u
#endif
#define LB_ROUNDS_INDEXED (LB_ROUNDS_PIXELS / 2u)
/* Rounds a warp loads before it ranks them. H200, compacted_image 8192² (pixels: 8 rounds):
   2 rounds 0.142-0.144 ms (38 registers), 4 0.149-0.153 (40-47), all 8 0.203-0.205 (74). */
#ifndef CLPIX_LOOKBACK_BATCH
#define CLPIX_LOOKBACK_BATCH 2u
#endif
/* CLPIX_LOOKBACK_SPIN (re-reads of a silent predecessor's word before counting its tile here)
   and CLPIX_LOOKBACK_DISTRUST_ODD (tests) come from lookback.cl, pasted before this file.
   H200: 0 re-reads took 0.295 ms against 0.168-0.178 with 32 (most predecessors are still
   loading, not absent); 4 and 128 were no different from 32. */

/* Tile t's status and value, or 0 where its word is from another launch. */
inline uint lb_read(volatile __global ulong* state, int tile, uint epoch) {
    ulong s = atom_add(&state[tile], (ulong)0);
    if ((uint)(s >> 32) != epoch) return 0u;
    if (CLPIX_LOOKBACK_DISTRUST_ODD && (tile & 1)) return 0u;
    return (uint)s;
}

inline void lb_publish(volatile __global ulong* state, uint tile, uint epoch, uint status,
                       uint value) {
    atom_xchg(&state[tile], ((ulong)epoch << 32) | (status << 30) | value);
}

/* The look-back runs in warp 0 alone (its lanes read 32 words at once, with no work-group
   barrier); the emulated intrinsics need the whole group in step, so there every warp runs it
   alike, on the words warp 0 read. */
#if CLPIX_WARP_EMULATED
#define LB_LOOKS(w) 1
#else
#define LB_LOOKS(w) ((w) == 0u)
#endif

/* The first of the 4 pixels that lane `lane` of warp w loads in each round of tile t (a warp's
   segment: `rounds` rounds of WROUND pixels). The owner and the fallback both load by it. */
inline uint lb_first(uint t, uint w, uint lane, const uint rounds) {
    return (t * WARPS + w) * rounds * WROUND + lane * 4u;
}

/* The kept pixels of tile t (segments of `rounds` rounds), counted as its owner counts them,
   by the 32 lanes of the looking warp (the result the same in all of them). red holds WARP
   words. */
inline uint lb_tile_kept(__global const uint* px, uint n, uint wmin, uint t, const uint rounds,
                         __local uint* red) {
    uint lane = get_local_id(0) % WARP, c = 0;
    for (uint s = 0; s < WARPS; ++s)
        for (uint r = 0; r < rounds; ++r) {
            uint4 v;
            uint at = lb_first(t, s, lane, rounds) + r * WROUND;
            c += popcount(load4_kept(px, at, n, wmin, &v));
        }
    if (get_local_id(0) < WARP) red[lane] = c;
    nv_syncwarp();
    uint sum = 0;
    for (uint l = 0; l < WARP; ++l) sum += red[l];
    nv_syncwarp();
    return sum;
}

/* The kept pixels of tiles 0..t-1, in the looking warp: predecessors' words, 32 at a time,
 * summed back to the nearest PREFIX; a tile with no word yet is re-read up to LOOKBACK_SPIN
 * times, then counted here. win holds WARP words. */
inline uint lb_exclusive(volatile __global ulong* state, uint epoch, uint t,
                         __global const uint* px, uint n, uint wmin, const uint rounds,
                         __local uint* win) {
    uint lid = get_local_id(0), excl = 0, spins = 0;
    int p = (int)t - 1; /* the nearest tile not yet accounted for */
    while (p >= 0) {
        if (lid < WARP) {
            int q = p - (int)lid;
            win[lid] = q >= 0 ? lb_read(state, q, epoch) : (LB_PREFIX << 30);
        }
        nv_syncwarp();
        uint j = 0, found = 0;
        for (; j < WARP; ++j) {
            uint s = win[j], status = s >> 30;
            if (status == 0u) break;
            excl += s & LB_VALUE;
            if (status == LB_PREFIX) {
                found = 1;
                break;
            }
        }
        nv_syncwarp();
        if (found) break;
        p -= (int)j;
        spins = j > 0 ? 0u : spins;
        if (j < WARP && p >= 0) {
            if (spins < CLPIX_LOOKBACK_SPIN) {
                ++spins;
            } else {
                excl += lb_tile_kept(px, n, wmin, (uint)p, rounds, win);
                --p;
                spins = 0;
            }
        }
    }
    return excl;
}

/* Tile t = this group: each warp ranks the kept pixels of its segment (`rounds` rounds of
   WROUND pixels) with ballots as they are loaded and stages them in scan order in its slice of
   local memory (st_px, st_idx: rounds * WROUND words), then copies them out from its offset.
   with_idx and rounds are constants at each call. */
inline void lookback_tile(__global const uint* px, uint n, uint wmin,
                          volatile __global ulong* state, uint epoch, const uint with_idx,
                          const uint rounds, __global uint* out_idx, __global uint* out_px,
                          __local uint* st_px, __local uint* st_idx, __local uint* xch,
                          __local uint* sh, __local uint* win) {
    uint lid = get_local_id(0), lane = lid % WARP, w = lid / WARP, t = get_group_id(0);
    uint first = lb_first(t, w, lane, rounds);
    uint mine = 0; /* kept so far in this warp's segment */
    const uint batch = min(rounds, (uint)CLPIX_LOOKBACK_BATCH);
    for (uint r0 = 0; r0 < rounds; r0 += batch) {
        uint4 v[LB_ROUNDS_PIXELS];
        uint m[LB_ROUNDS_PIXELS];
        for (uint r = 0; r < batch; ++r)
            m[r] = load4_kept(px, first + (r0 + r) * WROUND, n, wmin, &v[r]);
        for (uint r = 0; r < batch; ++r) {
            uint at = first + (r0 + r) * WROUND;
            mine += warp_stage_round(v[r], m[r], at, mine, with_idx, st_px, st_idx, xch);
        }
    }
    /* sh[0..WARPS): the warps' counts. */
    if (lane == 0) sh[w] = mine;
    barrier(CLK_LOCAL_MEM_FENCE);
    uint count = 0, before = 0;
    for (uint k = 0; k < WARPS; ++k) {
        uint c = sh[k];
        before += k < w ? c : 0u;
        count += c;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid == 0) lb_publish(state, t, epoch, t == 0 ? LB_PREFIX : LB_AGGREGATE, count);
    if (t != 0 && LB_LOOKS(w)) {
        uint excl = lb_exclusive(state, epoch, t, px, n, wmin, rounds, win);
        if (lid == 0) {
            lb_publish(state, t, epoch, LB_PREFIX, excl + count);
            sh[0] = excl;
        }
    }
    /* Also makes every warp's staged pixels visible to its lanes. */
    barrier(CLK_LOCAL_MEM_FENCE);
    uint run = (t == 0 ? 0u : sh[0]) + before;
    for (uint j = lane; j < mine; j += WARP) {
        out_px[run + j] = st_px[j];
        if (with_idx) out_idx[run + j] = st_idx[j];
    }
}

/* The kept pixels of px[0..n) in scan order into out_px; tile t's word in state ends as its
   inclusive prefix (the last one's is the total). The staging (WARPS * LB_ROUNDS_PIXELS *
   WROUND words; with indices, two arrays of WARPS * LB_ROUNDS_INDEXED * WROUND, one after the
   other) is a __local argument sized by the host: as static arrays, Oclgrind counted them twice against its
   32 KiB. */
__kernel __attribute__((reqd_work_group_size(CLPIX_WG, 1, 1)))
void compact_lookback(__global const uint* px, uint n, uint wmin,
                      volatile __global ulong* state, uint epoch, __global uint* out_px,
                      __local uint* st_px) {
    __local uint xch[XCH_WORDS];
    __local uint sh[CLPIX_WG];
    __local uint win[WARP];
    __local uint* sp = st_px + get_local_id(0) / WARP * (LB_ROUNDS_PIXELS * WROUND);
    lookback_tile(px, n, wmin, state, epoch, 0u, LB_ROUNDS_PIXELS, out_px, out_px, sp, sp, xch,
                  sh, win);
}

/* compact_lookback with their part-local indices into out_idx. */
__kernel __attribute__((reqd_work_group_size(CLPIX_WG, 1, 1)))
void compact_lookback_indexed(__global const uint* px, uint n, uint wmin,
                              volatile __global ulong* state, uint epoch,
                              __global uint* out_idx, __global uint* out_px,
                              __local uint* st_px) {
    __local uint xch[XCH_WORDS];
    __local uint sh[CLPIX_WG];
    __local uint win[WARP];
    /* One argument for both arrays, so that the compiler sees they do not overlap (as two
       arguments, H100: 0.249-0.250 ms against 0.239-0.240 for the static arrays). */
    __local uint* st_idx = st_px + WARPS * LB_ROUNDS_INDEXED * WROUND;
    uint at = get_local_id(0) / WARP * (LB_ROUNDS_INDEXED * WROUND);
    lookback_tile(px, n, wmin, state, epoch, 1u, LB_ROUNDS_INDEXED, out_idx, out_px, st_px + at,
                  st_idx + at, xch, sh, win);
}
#endif /* CLPIX_HAS_INT64_ATOMICS */
#endif /* COMPACT_WARP */
