/* The sorted compaction's radix passes on GPUs, pasted after compact.cl, whose GPU section
   (CLPIX_WG, the group scans, pass_len, group_range) they use. CPU devices sort with
   compact.cl's compact_hist and compact_scatter instead. */

#if !CLPIX_CONTIGUOUS

/* ---- Sorted compaction on GPUs: two stable LSD radix passes of 5 bits.
 * Pass 1 reads the image, keeps L > threshold and orders the kept pixels by the low 5 bits of
 * their bin; pass 2 reads that result and orders it by the high 5 bits. Each pass:
 *   radix_hist     ghist[d * G + g] = kept pixels of digit d in group g's range
 *   (scan of ghist, in the order digit, then group: stable)
 *   radix_scatter  each group ranks the pixels of a tile by digit in local memory (a counter
 *                  per digit and work-item, scanned in the order digit, work-item: stable since
 *                  a work-item holds consecutive pixels), stages them in that order and writes
 *                  runs of equal digit to consecutive addresses (coalesced). Each pixel's digit
 *                  is computed once and staged beside it (H200, both passes: 0.838 -> 0.761 ms
 *                  with the padded histogram below). radix_scatter_indexed also carries the
 *                  scan indices (hits).
 */
#define RADIX 32u
/* Pixels per work-item in a radix tile: the fixed cost of a tile (its counters, scan and
   barriers) is paid once per 16 pixels. */
#ifndef RADIX_PER /* the host passes 8 where local memory is short (radix_per() in src/cl/grid.rs) */
#define RADIX_PER 16u
#endif
#define RADIX_TILE (CLPIX_WG * RADIX_PER)
/* Counters two to a word: word (d % 16) * CLPIX_WG + l holds the counts of digits d and
   d + 16 of work-item l in its low and high halves (a tile holds fewer than 2^16 pixels, so
   the halves never carry into each other, even scanned). A word of padding every 16, so that
   the raking work-items (16 consecutive words each) hit different banks. */
#define PC(j) ((j) + ((j) >> 4))
#define PC_WORDS PC(16u * CLPIX_WG)
/* The counters, then the staged tile (pixels and indices), in the same local memory. */
#define RADIX_POOL (PC_WORDS > 2u * RADIX_TILE ? PC_WORDS : 2u * RADIX_TILE)

/* The digit of a pixel whose weighted sum is s (the scatter has s already), and of pixel p. */
inline uint radix_digit_of_wsum(uint s, uint shift) {
    return ((CLPIX_MAX_LUMA - clpix_luma_of_wsum(s)) >> shift) & (RADIX - 1u);
}
inline uint radix_digit(uint p, uint shift) { return radix_digit_of_wsum(clpix_wsum(p), shift); }

/* Histogram copies per work-group, so that one digit's increments spread over addresses;
   copies RHIST_STRIDE words apart, RADIX + 1 so that they spread over banks too (H200:
   sorted compaction 0.772 -> 0.760 ms). */
#define RHIST_COPIES 8u
#define RHIST_STRIDE (RADIX + 1u)
/* Loads in flight per work-item (H200, pass 1's counts: 0.119 / 0.114 / 0.110 ms with 1 / 2 /
   4; a define, so that a sweep can set it). */
#ifndef RHIST_INFLIGHT
#define RHIST_INFLIGHT 4u
#endif

/* A radix pass's length: n, or at most the count the device left at len_at[at] (pass 2 takes
   pass 1's number of kept pixels there, so that the host need not read it between the passes:
   H200, sorted compacted image, first kernel's start to last one's end 0.767-0.775 ms ->
   0.702-0.711, with scan_single 0.695-0.699). */
#define LEN_GIVEN 0xffffffffu
inline uint pass_len(uint n, __global const uint* len_at, uint at) {
    return at == LEN_GIVEN ? n : min(n, len_at[at]);
}

/* Whether groups whose kept pixels share one digit skip the ranking (radix_single, below; a
   define, so that a sweep can compare). */
#ifndef RADIX_SINGLE_DIGIT
#define RADIX_SINGLE_DIGIT 1
#endif
/* After a pass's RADIX * G digit counts and one spare word, radix_hist leaves two words a
   group: the digit of all its kept pixels if they share one (0 if it keeps none), else RADIX;
   and its number of kept pixels. The scan of the counts leaves them alone. */
#define GROUP_INFO(G, g) (RADIX * (G) + 1u + 2u * (g))

__kernel __attribute__((reqd_work_group_size(CLPIX_WG, 1, 1)))
void radix_hist(__global const uint* px, uint n, uint wmin, uint shift,
                __global const uint* len_at, uint at, __global uint* ghist) {
    __local uint h[RHIST_COPIES * RHIST_STRIDE];
    __local uint tally[2]; /* digits with pixels (16 high bits) and their sum; kept pixels */
    n = pass_len(n, len_at, at);
    uint g = get_group_id(0), G = get_num_groups(0), b, e;
    group_range(n, g, G, &b, &e);
    uint lid = get_local_id(0);
    for (uint k = lid; k < RHIST_COPIES * RHIST_STRIDE; k += CLPIX_WG) h[k] = 0;
    if (lid < 2) tally[lid] = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    __local uint* mine = h + (lid % RHIST_COPIES) * RHIST_STRIDE;
    /* RHIST_INFLIGHT 16-byte loads in flight before the counting. */
    for (uint t = b; t < e; t += RHIST_INFLIGHT * CTILE) {
        uint4 p[RHIST_INFLIGHT];
        uint m[RHIST_INFLIGHT];
        for (uint u = 0; u < RHIST_INFLIGHT; ++u)
            m[u] = load4_kept(px, t + u * CTILE + lid * 4u, e, wmin, &p[u]);
        for (uint u = 0; u < RHIST_INFLIGHT; ++u) {
            if (m[u] & 1u) atomic_inc(&mine[radix_digit(p[u].x, shift)]);
            if (m[u] & 2u) atomic_inc(&mine[radix_digit(p[u].y, shift)]);
            if (m[u] & 4u) atomic_inc(&mine[radix_digit(p[u].z, shift)]);
            if (m[u] & 8u) atomic_inc(&mine[radix_digit(p[u].w, shift)]);
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint d = lid; d < RADIX; d += CLPIX_WG) {
        uint s = 0;
        for (uint c = 0; c < RHIST_COPIES; ++c) s += h[c * RHIST_STRIDE + d];
        ghist[d * G + g] = s;
        if (s != 0) {
            atomic_add(&tally[0], (1u << 16) | d);
            atomic_add(&tally[1], s);
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid == 0) {
        uint t = tally[0];
        ghist[GROUP_INFO(G, g)] = t >> 16 == 0 ? 0u : t >> 16 == 1 ? (t & 0xffffu) : RADIX;
        ghist[GROUP_INFO(G, g) + 1] = tally[1];
    }
}

/* flags of radix_scatter */
#define RADIX_WITH_IDX 1u /* write out_idx */
#define RADIX_SRC_IDX 2u  /* indices come from src_idx (pass 2); else the scan position */

/* The local memory of a radix scatter work-group. */
typedef struct {
    /* The counters, then the staged tile (pixels and indices). */
    uint pool[RADIX_POOL];
    uint sh[CLPIX_WG];
    /* Each digit's next output position, and its first place in the staged tile. */
    uint goff[RADIX];
    uint dstart[RADIX];
    /* The staged pixels' digits, so that the writes need not compute them again. */
    uchar st_d[RADIX_TILE];
} RadixLocal;

/* The size of RadixLocal as this compiler lays it out, for the host's test of its plan: the
   scatter kernels take it as a __local argument of radix_local_bytes() bytes. */
__kernel void radix_local_size(__global uint* out) {
    out[0] = (uint)sizeof(RadixLocal);
}

/* One radix pass of group g (see above). `flags` is a constant where each kernel below calls
 * it, so that without indices the compiler drops their loads, stores and branches (H200, one
 * call: compacted_image_sorted 0.686-0.692 ms, against 0.760 with the flags read at run time).
 * Both kernels take 126-128 registers on NVIDIA: two groups an SM. */
inline void radix_scatter_tiles(__global const uint* px, __global const uint* src_idx, uint n,
                                uint wmin, uint shift, __global const uint* offsets,
                                const uint flags, __global uint* out_idx,
                                __global uint* out_px, __local RadixLocal* loc) {
    __local uint* sh = loc->sh;
    __local uint* goff = loc->goff;
    __local uint* dstart = loc->dstart;
    __local uchar* st_d = loc->st_d;
    __local uint* cnt = loc->pool;
    __local uint* st_px = loc->pool;
    __local uint* st_idx = loc->pool + RADIX_TILE;
    uint g = get_group_id(0), G = get_num_groups(0), b, e;
    group_range(n, g, G, &b, &e);
    uint lid = get_local_id(0);
    /* radix_single takes the groups whose kept pixels share one digit. */
    if (RADIX_SINGLE_DIGIT && offsets[GROUP_INFO(G, g)] < RADIX) return;
    for (uint d = lid; d < RADIX; d += CLPIX_WG) goff[d] = offsets[d * G + g];
    /* The next tile's loads are issued before this tile's work, so that their latency
       overlaps its barriers (pass 1 on the H200: 0.42 -> 0.40 ms). */
    uint with_src = flags & RADIX_SRC_IDX;
    uint nv[RADIX_PER], nvi[RADIX_PER];
    if (b < e) {
        load_run(px, b, e, RADIX_PER, nv);
        if (with_src) load_run(src_idx, b, e, RADIX_PER, nvi);
    }
    for (uint t = b; t < e; t += RADIX_TILE) {
        uint first = t + lid * RADIX_PER;
        uint v[RADIX_PER], vi[RADIX_PER], r[RADIX_PER];
        /* Each pixel's digit, computed once: four to a word, a byte each. */
        uint dg[RADIX_PER / 4];
        for (uint k = 0; k < RADIX_PER; ++k) {
            v[k] = nv[k];
            vi[k] = with_src ? nvi[k] : first + k;
        }
        if (t + RADIX_TILE < e) {
            load_run(px, t + RADIX_TILE, e, RADIX_PER, nv);
            if (with_src) load_run(src_idx, t + RADIX_TILE, e, RADIX_PER, nvi);
        }
        /* This work-item's counters (a column only it touches until the barrier). */
        for (uint q = 0; q < 16u; ++q) cnt[PC(q * CLPIX_WG + lid)] = 0;
        uint keep = 0;
        for (uint k = 0; k < RADIX_PER; ++k) {
            uint s = clpix_wsum(v[k]);
            uint d = radix_digit_of_wsum(s, shift);
            if (k % 4u == 0) dg[k / 4u] = 0;
            dg[k / 4u] |= d << (8u * (k % 4u));
            r[k] = 0;
            if (first + k < e && s >= wmin) {
                keep |= 1u << k;
                uint lane = (d >> 4) * 16u;
                uint j = PC((d & 15u) * CLPIX_WG + lid);
                uint c = cnt[j];
                r[k] = (c >> lane) & 0xffffu;
                cnt[j] = c + (1u << lane);
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        /* Exclusive scan of the counters in the order (digit, work-item), both halves at once:
           work-item l rakes words 16 l .. 16 l + 15; the high halves (digits 16..31) then
           start after all the low ones. */
        uint s = 0;
        for (uint q = 0; q < 16u; ++q) s += cnt[PC(lid * 16u + q)];
        uint total;
        uint x = wg_scan(s, sh, &total) + ((total & 0xffffu) << 16);
        for (uint q = 0; q < 16u; ++q) {
            uint j = PC(lid * 16u + q);
            uint c = cnt[j];
            cnt[j] = x;
            x += c;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        for (uint d = lid; d < RADIX; d += CLPIX_WG) {
            dstart[d] = (cnt[PC((d & 15u) * CLPIX_WG)] >> ((d >> 4) * 16u)) & 0xffffu;
        }
        for (uint k = 0; k < RADIX_PER; ++k) {
            if (keep & (1u << k)) {
                uint d = (dg[k / 4u] >> (8u * (k % 4u))) & 0xffu;
                r[k] += (cnt[PC((d & 15u) * CLPIX_WG + lid)] >> ((d >> 4) * 16u)) & 0xffffu;
            }
        }
        /* The counters are read: the staged tile may take their place. */
        barrier(CLK_LOCAL_MEM_FENCE);
        for (uint k = 0; k < RADIX_PER; ++k) {
            if (keep & (1u << k)) {
                st_px[r[k]] = v[k];
                st_d[r[k]] = (uchar)(dg[k / 4u] >> (8u * (k % 4u)));
                if (flags & RADIX_WITH_IDX) st_idx[r[k]] = vi[k];
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        /* Runs of equal digit go to consecutive addresses. */
        uint kept = (total & 0xffffu) + (total >> 16);
        /* A constant trip count, so that the loop unrolls and its local loads overlap
           (compact_sorted on the H200: 0.813-0.817 ms against 0.833-0.838). */
        for (uint q = 0; q < RADIX_PER; ++q) {
            uint j = q * CLPIX_WG + lid;
            if (j >= kept) break;
            uint d = st_d[j];
            uint at = goff[d] + j - dstart[d];
            out_px[at] = st_px[j];
            if (flags & RADIX_WITH_IDX) out_idx[at] = st_idx[j];
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        /* (The end of the last digit is `kept`, a private value: PoCL 3.1 lost a store of it
           by one work-item to local memory, read by another after two barriers.) */
        for (uint d = lid; d < RADIX; d += CLPIX_WG)
            goff[d] += (d + 1 < RADIX ? dstart[d + 1] : kept) - dstart[d];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
}

/* Pixels only (the compacted image): both passes. The length is pass_len(n, len_at, at). */
__kernel __attribute__((reqd_work_group_size(CLPIX_WG, 1, 1)))
void radix_scatter(__global const uint* px, uint n, uint wmin, uint shift,
                   __global const uint* len_at, uint at, __global const uint* offsets,
                   __global uint* out_px, __local RadixLocal* loc) {
    radix_scatter_tiles(px, px, pass_len(n, len_at, at), wmin, shift, offsets, 0u, out_px,
                        out_px, loc);
}

/* Pixels and their scan indices (hits): pass 1 takes the indices from the scan position, pass 2
   (RADIX_SRC_IDX in flags) from src_idx. */
__kernel __attribute__((reqd_work_group_size(CLPIX_WG, 1, 1)))
void radix_scatter_indexed(__global const uint* px, __global const uint* src_idx, uint n,
                           uint wmin, uint shift, __global const uint* len_at, uint at,
                           __global const uint* offsets, uint flags, __global uint* out_idx,
                           __global uint* out_px, __local RadixLocal* loc) {
    radix_scatter_tiles(px, src_idx, pass_len(n, len_at, at), wmin, shift, offsets,
                        flags | RADIX_WITH_IDX, out_idx, out_px, loc);
}

/* ---- Radix passes of single-digit groups. A group whose kept pixels all have one digit in
 * this pass (every group of a constant image; in pass 2 every group where the kept luminances
 * share their high 5 bits, as above threshold 991) needs no ranking: its pixels go to that
 * digit's offset in scan order. radix_hist records which groups these are (GROUP_INFO);
 * radix_scatter leaves them to radix_single, launched after it with the same arguments. A
 * group that keeps none returns at once in both (dark regions under a high threshold), and one
 * that keeps all its pixels (pass 2 always) copies them without a scan. H200, 8192², sorted
 * compacted image, one call: constant image 1.104-1.106 -> 0.516-0.519 ms; random image
 * 0.652-0.656 -> 0.665-0.666 (radix_single's launches, 0.007-0.009 ms a pass, all its groups
 * returning). Dropped: the same path inside radix_scatter (random 0.662-0.667, constant
 * 0.617-0.620: there the copy runs at radix_scatter's occupancy, two groups an SM), and each
 * work-item reading its group's 33 scanned counts to find the digit (random 0.735, a cost
 * paid by every group before its ranking). */

/* [b, e) copied from output position `run` on, with their indices (see relocate_tiles). */
inline void copy_run(__global const uint* px, __global const uint* src_idx, uint b, uint e,
                     uint run, const uint with_idx, const uint with_src,
                     __global uint* out_idx, __global uint* out_px) {
    uint i = b + get_local_id(0);
    /* 4 loads in flight a work-item before their stores. */
    for (; i + 3u * CLPIX_WG < e; i += 4u * CLPIX_WG) {
        uint v[4], vi[4];
        for (uint u = 0; u < 4u; ++u) {
            v[u] = px[i + u * CLPIX_WG];
            vi[u] = with_src ? src_idx[i + u * CLPIX_WG] : i + u * CLPIX_WG;
        }
        for (uint u = 0; u < 4u; ++u) {
            out_px[run - b + i + u * CLPIX_WG] = v[u];
            if (with_idx) out_idx[run - b + i + u * CLPIX_WG] = vi[u];
        }
    }
    for (; i < e; i += CLPIX_WG) {
        out_px[run - b + i] = px[i];
        if (with_idx) out_idx[run - b + i] = with_src ? src_idx[i] : i;
    }
}

inline void radix_single_group(__global const uint* px, __global const uint* src_idx, uint n,
                               uint wmin, __global const uint* offsets, const uint flags,
                               __global uint* out_idx, __global uint* out_px, __local uint* sh,
                               __local uint* st_px, __local uint* st_idx) {
    uint g = get_group_id(0), G = get_num_groups(0), b, e;
    group_range(n, g, G, &b, &e);
    uint single = offsets[GROUP_INFO(G, g)], kept = offsets[GROUP_INFO(G, g) + 1];
    if (!RADIX_SINGLE_DIGIT || single == RADIX || kept == 0) return;
    uint run = offsets[single * G + g];
    const uint with_idx = flags & RADIX_WITH_IDX, with_src = flags & RADIX_SRC_IDX;
    if (kept == e - b)
        copy_run(px, src_idx, b, e, run, with_idx, with_src, out_idx, out_px);
    else
        relocate_tiles(px, src_idx, b, e, wmin, run, with_idx, with_src, out_idx, out_px, sh,
                       st_px, st_idx);
}

/* radix_scatter's single-digit groups (same arguments). */
__kernel __attribute__((reqd_work_group_size(CLPIX_WG, 1, 1)))
void radix_single(__global const uint* px, uint n, uint wmin, uint shift,
                  __global const uint* len_at, uint at, __global const uint* offsets,
                  __global uint* out_px) {
    __local uint sh[CLPIX_WG];
    __local uint st_px[RTILE];
    radix_single_group(px, px, pass_len(n, len_at, at), wmin, offsets, 0u, out_px, out_px, sh,
                       st_px, st_px);
}

/* radix_scatter_indexed's single-digit groups (same arguments). */
__kernel __attribute__((reqd_work_group_size(CLPIX_WG, 1, 1)))
void radix_single_indexed(__global const uint* px, __global const uint* src_idx, uint n,
                          uint wmin, uint shift, __global const uint* len_at, uint at,
                          __global const uint* offsets, uint flags, __global uint* out_idx,
                          __global uint* out_px) {
    __local uint sh[CLPIX_WG];
    __local uint st_px[RTILE];
    __local uint st_idx[RTILE];
    radix_single_group(px, src_idx, pass_len(n, len_at, at), wmin, offsets,
                       flags | RADIX_WITH_IDX, out_idx, out_px, sh, st_px, st_idx);
}

#endif /* !CLPIX_CONTIGUOUS */
