/* Single-pass kernels with a decoupled look-back *with fallback*, portable (issue 30): every
 * GPU whose driver offers cl_khr_int64_base_atomics. Pasted after scan.cl, whose tile helpers
 * they use (load_tile, wg_scan_chunks, store_tile, range_sum); in the compaction's program also
 * after compact.cl, whose range_kept counts a tile's kept pixels (PLB_KEPT_COUNTS).
 *
 * Work-group t takes tile t: it computes the tile's value (the sum of its elements, or the
 * number of its kept pixels), publishes it in its tile's word (AGGREGATE), then the whole
 * group looks back over its predecessors' words, 32 at a time, summing values back to the
 * nearest inclusive prefix (PREFIX), publishes its own inclusive prefix, and writes its tile
 * from its exclusive prefix. Tile 0 publishes its prefix at once.
 * No forward progress between work-groups is assumed: a predecessor silent after
 * CLPIX_LOOKBACK_SPIN re-reads (it may not have started) has its tile's value computed here,
 * from the same input (the fallback), so no group waits on another without bound, and the
 * result does not depend on the order in which groups run; only the time does.
 * A word holds everything one group learns from another: the launch's epoch (high 30 bits),
 * the status (2 bits) and the value (32 bits), written by atom_xchg and read by
 * atom_add(.., 0), so nothing relies on ordering between locations; a word of an earlier
 * launch (another epoch) reads as "nothing yet", so the words are never cleared (the host
 * zeroes them when the epochs wrap at 2^30). The input must not be the output: a fallback may
 * read a predecessor's tile after its owner wrote it.
 * The whole group runs the look-back: every branch in it depends only on local memory that
 * all work-items read alike, so the barriers inside are uniform.
 */
#if !CLPIX_CONTIGUOUS && CLPIX_HAS_INT64_ATOMICS
#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable
#define PLB_AGGREGATE 1u
#define PLB_PREFIX 2u
/* Words read at once: one a work-item of the first 32. */
#define PLB_WINDOW (CLPIX_WG < 32u ? CLPIX_WG : 32u)
/* The tile's value: the sum of its elements, or the number of its kept pixels. */
#define PLB_SUM 0u
#define PLB_KEPT 1u
/* Re-reads of a silent predecessor's word before computing its value here (also NVIDIA's
   look-back's, compact_nv.cl). */
#ifndef CLPIX_LOOKBACK_SPIN
#define CLPIX_LOOKBACK_SPIN 32u
#endif
/* Tests: never trust the words of odd tiles, so that the fallback runs wherever it can. */
#ifndef CLPIX_LOOKBACK_DISTRUST_ODD
#define CLPIX_LOOKBACK_DISTRUST_ODD 0
#endif

/* Tile `tile`'s status (bits 32-33) and value (low 32 bits), or 0 for another launch's word. */
inline ulong plb_read(volatile __global ulong* words, int tile, uint epoch) {
    ulong s = atom_add(&words[tile], (ulong)0);
    if ((uint)(s >> 34) != epoch) return 0;
    if (CLPIX_LOOKBACK_DISTRUST_ODD && (tile & 1)) return 0;
    return s & (((ulong)3 << 32) | 0xffffffffUL);
}

inline void plb_publish(volatile __global ulong* words, uint tile, uint epoch, uint status,
                        uint value) {
    atom_xchg(&words[tile], ((ulong)epoch << 34) | ((ulong)status << 32) | (ulong)value);
}

/* Tile p's value (tiles of `len` elements), the same in every work-item. sh: CLPIX_WG words. */
inline uint plb_tile_value(__global const uint* src, uint n, uint wmin, uint p, uint len,
                           const uint mode, __local uint* sh) {
    uint b = p * len, e = min(n, b + len);
#ifdef PLB_KEPT_COUNTS /* the compaction's program, whose compact.cl defines range_kept */
    uint v = mode == PLB_KEPT ? range_kept(src, b, e, wmin) : range_sum(src, b, e);
#else /* the scan's own program: sums only */
    uint v = range_sum(src, b, e);
#endif
    return wg_sum(v, sh);
}

/* The values of tiles 0..t-1 (t >= 1) plus carry, the same in every work-item. */
inline uint plb_exclusive(volatile __global ulong* words, uint epoch, uint t,
                          __global const uint* src, uint n, uint wmin, uint len, const uint mode,
                          uint carry, __local ulong* win, __local uint* sh) {
    uint lid = get_local_id(0), excl = 0, spins = 0;
    int p = (int)t - 1; /* the nearest tile not yet accounted for */
    while (p >= 0) {
        if (lid < PLB_WINDOW) {
            int q = p - (int)lid;
            win[lid] = q >= 0 ? plb_read(words, q, epoch) : (ulong)0;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        uint j = 0, found = 0;
        for (; j < PLB_WINDOW; ++j) {
            ulong s = win[j];
            uint status = (uint)(s >> 32);
            if (status == 0u) break;
            excl += (uint)s;
            if (status == PLB_PREFIX) {
                found = 1u;
                break;
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        if (found) return excl; /* tile 0's prefix holds the carry */
        p -= (int)j;
        spins = j > 0 ? 0u : spins;
        if (j < PLB_WINDOW && p >= 0) {
            if (spins < CLPIX_LOOKBACK_SPIN) {
                ++spins;
            } else {
                excl += plb_tile_value(src, n, wmin, (uint)p, len, mode, sh);
                if (p == 0) return excl + carry;
                --p;
                spins = 0;
            }
        }
    }
    return excl + carry; /* not reached: tile 0's word is a prefix or its value counted here */
}

/* Publishes tile t's value, looks back, publishes its inclusive prefix; returns its exclusive
   prefix (carry for tile 0), the same in every work-item. */
inline uint plb_offset(volatile __global ulong* words, uint epoch, uint t, uint value,
                       __global const uint* src, uint n, uint wmin, uint len, const uint mode,
                       uint carry, __local ulong* win, __local uint* sh) {
    uint lid = get_local_id(0);
    if (t == 0) {
        if (lid == 0) plb_publish(words, 0, epoch, PLB_PREFIX, carry + value);
        return carry;
    }
    if (lid == 0) plb_publish(words, t, epoch, PLB_AGGREGATE, value);
    uint excl = plb_exclusive(words, epoch, t, src, n, wmin, len, mode, carry, win, sh);
    if (lid == 0) plb_publish(words, t, epoch, PLB_PREFIX, excl + value);
    return excl;
}

/* The exclusive scan of src[0, n) from carry into dst (not src), a tile of TILE elements a
   work-group; the last tile's word ends as carry + the total. */
__kernel __attribute__((reqd_work_group_size(CLPIX_WG, 1, 1)))
void scan_lookback(__global const uint* src, uint n, __global uint* dst, uint carry,
                   volatile __global ulong* words, uint epoch) {
    __local uint sh[SCAN_CHUNKS * CLPIX_WG];
    __local ulong win[PLB_WINDOW];
    uint t = get_group_id(0), b = t * TILE;
    uint4 v[SCAN_CHUNKS];
    load_tile(src, b, n, v);
    uint s[SCAN_CHUNKS], excl[SCAN_CHUNKS], total[SCAN_CHUNKS];
    quad_sums(v, s);
    wg_scan_chunks(s, sh, excl, total);
    uint sum = 0;
    for (uint c = 0; c < SCAN_CHUNKS; ++c) sum += total[c];
    uint run = plb_offset(words, epoch, t, sum, src, n, 0u, TILE, PLB_SUM, carry, win, sh);
    store_tile(dst, b, n, run, v, excl, total);
}
#endif
