/* Stream compaction (the seed's count, scan, relocate, sort). It follows scan/scan.cl in its
 * program: group_range, TILE and the work-group scans are there.
 *
 * Compaction of image pixels (kept: wsum >= wmin, which is exactly L > threshold):
 *   compact_count      counts[g] = kept pixels in group g's range
 *   compact_relocate   each group writes its kept pixels in scan order from its offset: on
 *                      CPU devices counts[g] after scan_groups(counts); on GPUs the sum of
 *                      counts[0..g), which the group adds up itself (group_offset: no scan
 *                      kernel). Staged through local memory so that the writes are coalesced;
 *                      out_idx (if with_idx) gets the part-local index.
 *   NVIDIA GPUs: compact_count_warps and compact_relocate_warps instead (program variant 1, at
 *   the end of this file): a segment a warp, ranked with warp ballots, no barrier.
 * Sorted compaction (bins b = 1023 - L for L > threshold, b < nbins, so that ascending b is
 * descending L). CPU devices: a stable counting sort by luminance,
 *   compact_hist       ghist[b * G + g] = kept pixels of bin b in group g's range
 *   (scan of ghist: offsets in the order bin, then group: stable)
 *   compact_scatter    each group places its pixels at ghist[b * G + g] onwards, in scan order.
 * GPUs: two stable LSD radix passes of 5 bits of b (radix_hist, radix_scatter, below), whose
 * writes come in runs of equal digit, and radix_single for the groups whose kept pixels share
 * one digit; a one-pass counting sort wrote single pixels to 1024 places per tile and took
 * 1.32 ms on the H200 against 0.82 ms for the two passes. Another,
 * ranked per warp with NVIDIA's warp intrinsics (inline PTX ballots), staged by bin and written
 * in runs, took 0.65-0.68 ms against 0.66-0.68 for the passes (one call): its histogram
 * 0.11 ms, its scatter 0.52, of which the matching was 0.05 and the writes 0.02 (probes). It
 * is on the branch experiment/warp-sort, with a test that runs its logic on any device.
 * Also slower on the H200 and dropped: radix_hist counting by warp ballots (six a step, lane d
 * adding the kept lanes of digit d; no atomics): pass 1's counts 0.156 ms against 0.119 with
 * local atomics, on a random image and on a constant one alike (0.153 / 0.118); the radix
 * scatter ranked by ballots, a counter per digit and warp (H100: 0.711 against 0.700 ms).
 * CPU devices also have compact_relocate_hits and compact_scatter_hits, which write whole
 * PixelHit records (x, y, L, RGBA) instead of index and pixel: the host then copies nothing.
 */

#if !CLPIX_CONTIGUOUS
/* Compaction tile: one 16-byte load (4 pixels) per work-item. */
#define CTILE (CLPIX_WG * 4u)
/* scan/lookback.cl, after this file in the program, counts kept pixels too (range_kept). */
#define PLB_KEPT_COUNTS 1
#endif

#if CLPIX_CONTIGUOUS /* CPU devices: groups of one work-item, each walks its range */

__kernel void compact_count(__global const uint* px, uint n, uint wmin, __global uint* counts) {
    uint g = get_group_id(0), b, e;
    group_range(n, g, get_num_groups(0), &b, &e);
    uint c = 0;
    for (uint i = b; i < e; ++i) c += clpix_wsum(px[i]) >= wmin;
    counts[g] = c;
}

/* Blocks of pixels: the bins of a whole block first (1023 - L for a kept pixel, DROPPED for
   the others; a loop the compiler vectorises), then the positions of the kept ones without a
   branch per pixel (half kept at random would mispredict half the time), then those pixels. */
#define KBLOCK 256u
#define DROPPED 1024u

inline void block_bins(__global const uint* px, uint t, uint len, uint wmin, ushort* bins) {
    for (uint j = 0; j < len; ++j) {
        uint s = clpix_wsum(px[t + j]);
        bins[j] = s >= wmin ? (ushort)(CLPIX_MAX_LUMA - clpix_luma_of_wsum(s)) : (ushort)DROPPED;
    }
}

inline uint kept_positions(const ushort* bins, uint len, ushort* kp) {
    uint k = 0;
    for (uint j = 0; j < len; ++j) {
        kp[k] = (ushort)j;
        k += bins[j] != DROPPED;
    }
    return k;
}

/* Scan position i of a part of `cols` columns at (x0, y0) as image coordinates, for positions
   visited in increasing order (a running row, no division per pixel). */
typedef struct {
    uint cols, x0, y0, row, row_start;
} Walk;

inline Walk walk_from(uint b, uint cols, uint x0, uint y0) {
    Walk w;
    w.cols = max(cols, 1u);
    w.x0 = x0;
    w.y0 = y0;
    w.row = b / w.cols;
    w.row_start = w.row * w.cols;
    return w;
}

/* A PixelHit (Rust, repr(C)): x, y, luminance as u16 then rgba bytes, 2 bytes of padding. */
inline void put_hit(__global uint* out, uint d, Walk* w, uint i, uint luma, uint p) {
    while (i - w->row_start >= w->cols) {
        w->row_start += w->cols;
        ++w->row;
    }
    vstore4((uint4)(w->x0 + i - w->row_start, w->y0 + w->row, luma | (p << 16), p >> 16), d, out);
}

/* The relocations write, per kept pixel: its pixel (OUT_PIXELS), its part-local scan index
   and its pixel (OUT_INDEXED), or a whole PixelHit (OUT_HITS). */
#define OUT_PIXELS 0u
#define OUT_INDEXED 1u
#define OUT_HITS 2u

/* Kept pixel p (scan position i, bin `bin`) written at output position d. */
inline void place(uint mode, uint d, uint i, uint bin, uint p, Walk* w, __global uint* out_idx,
                  __global uint* out_px) {
    if (mode == OUT_HITS) {
        put_hit(out_px, d, w, i, CLPIX_MAX_LUMA - bin, p);
    } else {
        if (mode == OUT_INDEXED) out_idx[d] = i;
        out_px[d] = p;
    }
}

/* Group g's pixels [b, e) in scan order from offsets[g] on. */
inline void relocate(__global const uint* px, uint b, uint e, uint wmin, uint o, uint mode,
                     Walk w, __global uint* out_idx, __global uint* out_px) {
    ushort bins[KBLOCK], kp[KBLOCK];
    for (uint t = b; t < e; t += KBLOCK) {
        uint len = min(e - t, KBLOCK);
        block_bins(px, t, len, wmin, bins);
        uint k = kept_positions(bins, len, kp);
        for (uint j = 0; j < k; ++j, ++o)
            place(mode, o, t + kp[j], bins[kp[j]], px[t + kp[j]], &w, out_idx, out_px);
    }
}

__kernel void compact_relocate(__global const uint* px, uint n, uint wmin,
                               __global const uint* offsets, uint with_idx,
                               __global uint* out_idx, __global uint* out_px) {
    uint g = get_group_id(0), b, e;
    group_range(n, g, get_num_groups(0), &b, &e);
    relocate(px, b, e, wmin, offsets[g], with_idx ? OUT_INDEXED : OUT_PIXELS,
             walk_from(0, 1, 0, 0), out_idx, out_px);
}

/* CPU devices only: the kept pixels as PixelHits of a part of `cols` columns at (x0, y0). */
__kernel void compact_relocate_hits(__global const uint* px, uint n, uint wmin,
                                    __global const uint* offsets, uint cols, uint x0, uint y0,
                                    __global uint* out) {
    uint g = get_group_id(0), b, e;
    group_range(n, g, get_num_groups(0), &b, &e);
    relocate(px, b, e, wmin, offsets[g], OUT_HITS, walk_from(b, cols, x0, y0), out, out);
}

__kernel void compact_hist(__global const uint* px, uint n, uint wmin, uint nbins,
                           __global uint* ghist) {
    uint g = get_group_id(0), G = get_num_groups(0), b, e;
    group_range(n, g, G, &b, &e);
    /* Two histograms (dropped pixels in bin 1024), so that runs of equal luminance do not
       wait on each other's increments. */
    uint h0[DROPPED + 1], h1[DROPPED + 1];
    for (uint k = 0; k <= DROPPED; ++k) h0[k] = h1[k] = 0;
    ushort bins[KBLOCK];
    for (uint t = b; t < e; t += KBLOCK) {
        uint len = min(e - t, KBLOCK);
        block_bins(px, t, len, wmin, bins);
        uint j = 0;
        for (; j + 1 < len; j += 2) {
            ++h0[bins[j]];
            ++h1[bins[j + 1]];
        }
        if (j < len) ++h0[bins[j]];
    }
    for (uint k = 0; k < nbins; ++k) ghist[k * G + g] = h0[k] + h1[k];
}

/* Group g (of G) places its pixels [b, e) at their bins' offsets, in scan order. */
inline void scatter(__global const uint* px, uint g, uint G, uint b, uint e, uint wmin,
                    uint nbins, __global const uint* offsets, uint mode, Walk w,
                    __global uint* out_idx, __global uint* out_px) {
    uint o[1024];
    for (uint k = 0; k < nbins; ++k) o[k] = offsets[k * G + g];
    ushort bins[KBLOCK], kp[KBLOCK];
    for (uint t = b; t < e; t += KBLOCK) {
        uint len = min(e - t, KBLOCK);
        block_bins(px, t, len, wmin, bins);
        uint k = kept_positions(bins, len, kp);
        for (uint j = 0; j < k; ++j) {
            uint bin = bins[kp[j]];
            place(mode, o[bin]++, t + kp[j], bin, px[t + kp[j]], &w, out_idx, out_px);
        }
    }
}

__kernel void compact_scatter(__global const uint* px, uint n, uint wmin, uint nbins,
                              __global const uint* offsets, uint with_idx,
                              __global uint* out_idx, __global uint* out_px) {
    uint g = get_group_id(0), G = get_num_groups(0), b, e;
    group_range(n, g, G, &b, &e);
    scatter(px, g, G, b, e, wmin, nbins, offsets, with_idx ? OUT_INDEXED : OUT_PIXELS,
            walk_from(0, 1, 0, 0), out_idx, out_px);
}

/* CPU devices only: compact_scatter writing PixelHits (see compact_relocate_hits). */
__kernel void compact_scatter_hits(__global const uint* px, uint n, uint wmin, uint nbins,
                                   __global const uint* offsets, uint cols, uint x0, uint y0,
                                   __global uint* out) {
    uint g = get_group_id(0), G = get_num_groups(0), b, e;
    group_range(n, g, G, &b, &e);
    scatter(px, g, G, b, e, wmin, nbins, offsets, OUT_HITS, walk_from(b, cols, x0, y0), out,
            out);
}

#else /* GPU: work-groups of CLPIX_WG, coalesced loads, local-memory scans */

/* The kept pixels of the groups before this one, summed from the unscanned counts[] (at most a
 * few KiB, from L2), so that no scan kernel runs between the count and the relocation (H200,
 * warp relocation: compacted_image 0.207 ms against 0.217-0.219 with scan_groups between);
 * the last group writes the total at counts[G]. sh holds CLPIX_WG words. */
inline uint group_offset(__global uint* counts, __local uint* sh) {
    uint g = get_group_id(0), G = get_num_groups(0), s = 0;
    for (uint k = get_local_id(0); k < g; k += CLPIX_WG) s += counts[k];
    uint run = wg_sum(s, sh);
    if (g == G - 1 && get_local_id(0) == 0) counts[G] = run + counts[g];
    return run;
}

/* The 4 pixels at i (i a multiple of 4) and which of them are kept (bit k: pixel i + k), 0 at
   and beyond e. */
inline uint load4_kept(__global const uint* px, uint i, uint e, uint wmin, uint4* v) {
    uint4 p;
    if (i + 4 <= e) {
        p = ((__global const uint4*)px)[i >> 2];
    } else {
        p.x = i < e ? px[i] : 0u;
        p.y = i + 1 < e ? px[i + 1] : 0u;
        p.z = i + 2 < e ? px[i + 2] : 0u;
        p.w = i + 3 < e ? px[i + 3] : 0u;
    }
    *v = p;
    uint4 s = clpix_wsum4(p);
    return (s.x >= wmin && i < e ? 1u : 0u) | (s.y >= wmin && i + 1 < e ? 2u : 0u) |
           (s.z >= wmin && i + 2 < e ? 4u : 0u) | (s.w >= wmin && i + 3 < e ? 8u : 0u);
}

/* This work-item's share of the kept pixels of px[b, e) (b a multiple of 4). */
inline uint range_kept(__global const uint* px, uint b, uint e, uint wmin) {
    uint c = 0;
    uint i = b + get_local_id(0) * 4;
    __global const uint4* p4 = (__global const uint4*)px;
    for (; i + 4 * CLPIX_WG + 4 <= e; i += 8 * CLPIX_WG) {
        int4 a = clpix_wsum4(p4[i >> 2]) >= (uint4)(wmin);
        int4 d = clpix_wsum4(p4[(i >> 2) + CLPIX_WG]) >= (uint4)(wmin);
        /* Vector comparisons give -1 for true. */
        int4 t = a + d;
        c += (uint)(-(t.x + t.y + t.z + t.w));
    }
    for (; i < e; i += 4 * CLPIX_WG) {
        for (uint k = i; k < min(e, i + 4); ++k) c += clpix_wsum(px[k]) >= wmin;
    }
    return c;
}

__kernel __attribute__((reqd_work_group_size(CLPIX_WG, 1, 1)))
void compact_count(__global const uint* px, uint n, uint wmin, __global uint* counts) {
    __local uint sh[CLPIX_WG];
    uint g = get_group_id(0), b, e;
    group_range(n, g, get_num_groups(0), &b, &e);
    uint t = wg_sum(range_kept(px, b, e, wmin), sh);
    if (get_local_id(0) == 0) counts[g] = t;
}

/* Relocation tile: 8 consecutive pixels per work-item (two 16-byte loads in flight), so that
   the work-group scan and its barriers are paid once per 8 pixels. */
#define RELOC_PER 8u
#define RTILE (CLPIX_WG * RELOC_PER)

/* This work-item's `per` consecutive elements of a tile of CLPIX_WG * per elements at t (0 at
   and beyond e), in 16-byte loads where the tile is whole. `per`, a multiple of 4, is a
   constant at every call, so the loops unroll. */
inline void load_run(__global const uint* src, uint t, uint e, uint per, uint* v) {
    uint first = t + get_local_id(0) * per;
    if (t + CLPIX_WG * per <= e) {
        __global const uint4* s4 = (__global const uint4*)(src + first);
        for (uint q = 0; q < per / 4; ++q) {
            uint4 a = s4[q];
            v[4 * q] = a.x;
            v[4 * q + 1] = a.y;
            v[4 * q + 2] = a.z;
            v[4 * q + 3] = a.w;
        }
    } else {
        for (uint k = 0; k < per; ++k) v[k] = first + k < e ? src[first + k] : 0u;
    }
}

/* The kept pixels of [b, e) written in scan order from output position `run` on. Their indices
   (with_idx) are the scan positions, or with_src the values of src_idx at them. `with_idx` and
   `with_src` are constants where the callers call it, so that the pixels-only copy has no index
   loads or stores (H200, one call: compacted_image 0.224 ms, against 0.239-0.241 with the flag
   read in the loop). */
inline void relocate_tiles(__global const uint* px, __global const uint* src_idx, uint b, uint e,
                           uint wmin, uint run, const uint with_idx, const uint with_src,
                           __global uint* out_idx, __global uint* out_px, __local uint* sh,
                           __local uint* st_px, __local uint* st_idx) {
    uint lid = get_local_id(0);
    for (uint t = b; t < e; t += RTILE) {
        uint first = t + lid * RELOC_PER;
        uint v[RELOC_PER], vi[RELOC_PER];
        load_run(px, t, e, RELOC_PER, v);
        if (with_src) load_run(src_idx, t, e, RELOC_PER, vi);
        uint m = 0;
        for (uint k = 0; k < RELOC_PER; ++k)
            m |= (clpix_wsum(v[k]) >= wmin && first + k < e ? 1u : 0u) << k;
        uint total;
        uint x = wg_scan(popcount(m), sh, &total);
        for (uint k = 0; k < RELOC_PER; ++k) {
            if (m & (1u << k)) {
                st_px[x] = v[k];
                if (with_idx) st_idx[x] = with_src ? vi[k] : first + k;
                ++x;
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        for (uint q = 0; q < RELOC_PER; ++q) {
            uint j = q * CLPIX_WG + lid;
            if (j >= total) break;
            out_px[run + j] = st_px[j];
            if (with_idx) out_idx[run + j] = st_idx[j];
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        run += total;
    }
}

__kernel __attribute__((reqd_work_group_size(CLPIX_WG, 1, 1)))
void compact_relocate(__global const uint* px, uint n, uint wmin, __global uint* counts,
                      uint with_idx, __global uint* out_idx, __global uint* out_px) {
    __local uint sh[CLPIX_WG];
    __local uint st_px[RTILE];
    __local uint st_idx[RTILE];
    uint g = get_group_id(0), b, e;
    group_range(n, g, get_num_groups(0), &b, &e);
    uint run = group_offset(counts, sh);
    if (counts[g] == 0) return; /* nothing kept: nothing to write */
    if (with_idx)
        relocate_tiles(px, px, b, e, wmin, run, 1u, 0u, out_idx, out_px, sh, st_px, st_idx);
    else
        relocate_tiles(px, px, b, e, wmin, run, 0u, 0u, out_idx, out_px, sh, st_px, st_idx);
}

/* The GPU radix passes of the sorted compaction are in radix.cl, pasted after this file. */
#endif

/* The scan-order kernels for NVIDIA GPUs (COMPACT_WARP) are in compact_nv.cl, pasted after this
   file. */
