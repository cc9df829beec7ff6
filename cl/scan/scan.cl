/* Prefix sums: the exclusive scan of uint arrays. Its own program, and the first file of the
 * compaction's program, whose kernels use its group ranges and work-group scans.
 *
 * Every kernel splits its n elements among the G work-groups it is launched with: group g
 * walks the contiguous range group_range(n, g, G) (a multiple of TILE elements on GPUs, so
 * that 16-byte loads stay aligned), which the scan and the relocation need: a group's output
 * follows the output of the groups before it.
 *
 * Scan (reduce-then-scan, no inter-group waiting: OpenCL promises no forward progress
 * between work-groups):
 *   scan_reduce   sums[g] = sum of group g's range
 *   scan_groups   one work-group: sums[0..m) exclusive-scanned in place (plus carry),
 *                 sums[m] = carry + total; any m, in tiles with a running prefix
 *   scan_apply    group g rescans its range starting from sums[g]; dst may equal src
 * GPUs scan short arrays (the radix passes' digit counts) with scan_single instead: one
 * work-group, one kernel. All additions wrap (uint).
 */


#if CLPIX_CONTIGUOUS
#define TILE 1u
#else
/* GPU scan tile: SCAN_CHUNKS chunks of CLPIX_WG 16-byte loads, work-item l holding element
   quad l of each chunk (loads and stores coalesced); one work-group scan of SCAN_CHUNKS sums
   per tile. */
#define SCAN_CHUNKS 8u
#define SCAN_PER (4u * SCAN_CHUNKS)
#define TILE (CLPIX_WG * SCAN_PER)
#endif

/* The range of group g among G: a multiple of TILE elements (the last one shorter). */
inline void group_range(uint n, uint g, uint G, uint* begin, uint* end) {
    ulong per = ((ulong)n + G - 1) / G;
    per = (per + TILE - 1) / TILE * TILE;
    ulong b = min((ulong)n, (ulong)g * per);
    *begin = (uint)b;
    *end = (uint)min((ulong)n, b + per);
}

#if CLPIX_CONTIGUOUS /* CPU devices: groups of one work-item, each walks its range */

__kernel void scan_reduce(__global const uint* src, uint n, __global uint* sums) {
    uint g = get_group_id(0), b, e;
    group_range(n, g, get_num_groups(0), &b, &e);
    uint s = 0;
    for (uint i = b; i < e; ++i) s += src[i];
    sums[g] = s;
}

__kernel void scan_groups(__global uint* sums, uint m, uint carry) {
    uint s = carry;
    for (uint i = 0; i < m; ++i) {
        uint v = sums[i];
        sums[i] = s;
        s += v;
    }
    sums[m] = s;
}

__kernel void scan_apply(__global const uint* src, uint n, __global uint* dst,
                         __global const uint* sums) {
    uint g = get_group_id(0), b, e;
    group_range(n, g, get_num_groups(0), &b, &e);
    uint s = sums[g];
    for (uint i = b; i < e; ++i) {
        uint v = src[i];
        dst[i] = s;
        s += v;
    }
}
#else /* GPU: work-groups of CLPIX_WG, coalesced loads, local-memory scans */

/* Exclusive scan of one value per work-item across the work-group; *total gets the sum.
 * sh holds CLPIX_WG uints. Ends with a barrier, so sh may be reused at once.
 * (A raking scan with three barriers instead of these eighteen was slower on the H200:
 * compacted_image 0.260 against 0.235 ms.) */
inline uint wg_scan(uint v, __local uint* sh, uint* total) {
    uint lid = get_local_id(0);
    sh[lid] = v;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint off = 1; off < CLPIX_WG; off <<= 1) {
        uint t = lid >= off ? sh[lid - off] : 0u;
        barrier(CLK_LOCAL_MEM_FENCE);
        sh[lid] += t;
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    uint incl = sh[lid];
    *total = sh[CLPIX_WG - 1];
    barrier(CLK_LOCAL_MEM_FENCE);
    return incl - v;
}

inline uint wg_sum(uint v, __local uint* sh) {
    uint lid = get_local_id(0);
    sh[lid] = v;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint s = CLPIX_WG / 2; s > 0; s >>= 1) {
        if (lid < s) sh[lid] += sh[lid + s];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    uint t = sh[0];
    barrier(CLK_LOCAL_MEM_FENCE);
    return t;
}
/* Exclusive scans of SCAN_CHUNKS values per work-item across the work-group, chunk by chunk
 * (sh holds SCAN_CHUNKS * CLPIX_WG uints); total[c] gets chunk c's sum. Ends with a barrier. */
inline void wg_scan_chunks(const uint* v, __local uint* sh, uint* excl, uint* total) {
    uint lid = get_local_id(0);
    for (uint c = 0; c < SCAN_CHUNKS; ++c) sh[c * CLPIX_WG + lid] = v[c];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint off = 1; off < CLPIX_WG; off <<= 1) {
        uint t[SCAN_CHUNKS];
        for (uint c = 0; c < SCAN_CHUNKS; ++c)
            t[c] = lid >= off ? sh[c * CLPIX_WG + lid - off] : 0u;
        barrier(CLK_LOCAL_MEM_FENCE);
        for (uint c = 0; c < SCAN_CHUNKS; ++c) sh[c * CLPIX_WG + lid] += t[c];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    for (uint c = 0; c < SCAN_CHUNKS; ++c) {
        excl[c] = sh[c * CLPIX_WG + lid] - v[c];
        total[c] = sh[c * CLPIX_WG + CLPIX_WG - 1];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
}

/* Element quad `lid` of each chunk of the tile at t (0 beyond e). */
inline void load_tile(__global const uint* src, uint t, uint e, uint4* v) {
    uint lid = get_local_id(0);
    if (t + TILE <= e) {
        __global const uint4* s4 = (__global const uint4*)(src + t);
        for (uint c = 0; c < SCAN_CHUNKS; ++c) v[c] = s4[c * CLPIX_WG + lid];
    } else {
        for (uint c = 0; c < SCAN_CHUNKS; ++c) {
            uint f = t + (c * CLPIX_WG + lid) * 4;
            v[c] = (uint4)(f < e ? src[f] : 0u, f + 1 < e ? src[f + 1] : 0u,
                           f + 2 < e ? src[f + 2] : 0u, f + 3 < e ? src[f + 3] : 0u);
        }
    }
}

/* This work-item's share of the sum of src[b, e) (b a multiple of 4): 16-byte loads while
   they fit, two in flight. */
inline uint range_sum(__global const uint* src, uint b, uint e) {
    uint s = 0;
    uint i = b + get_local_id(0) * 4;
    __global const uint4* s4 = (__global const uint4*)src;
    for (; i + 4 * CLPIX_WG + 4 <= e; i += 8 * CLPIX_WG) {
        uint4 a = s4[i >> 2], c = s4[(i >> 2) + CLPIX_WG];
        uint4 t = a + c;
        s += t.x + t.y + t.z + t.w;
    }
    for (; i < e; i += 4 * CLPIX_WG) {
        if (i + 4 <= e) {
            uint4 a = s4[i >> 2];
            s += a.x + a.y + a.z + a.w;
        } else {
            for (uint k = i; k < e; ++k) s += src[k];
        }
    }
    return s;
}

__kernel __attribute__((reqd_work_group_size(CLPIX_WG, 1, 1)))
void scan_reduce(__global const uint* src, uint n, __global uint* sums) {
    __local uint sh[CLPIX_WG];
    uint g = get_group_id(0), b, e;
    group_range(n, g, get_num_groups(0), &b, &e);
    uint t = wg_sum(range_sum(src, b, e), sh);
    if (get_local_id(0) == 0) sums[g] = t;
}

__kernel __attribute__((reqd_work_group_size(CLPIX_WG, 1, 1)))
void scan_groups(__global uint* sums, uint m, uint carry) {
    __local uint sh[CLPIX_WG];
    uint lid = get_local_id(0);
    uint run = carry;
    for (uint t = 0; t < m; t += CLPIX_WG) {
        uint i = t + lid;
        uint v = i < m ? sums[i] : 0u;
        uint total;
        uint x = wg_scan(v, sh, &total);
        if (i < m) sums[i] = run + x;
        run += total;
    }
    if (lid == 0) sums[m] = run;
}

/* The exclusive scan from `run` of the tile at t (its quads v, their exclusive scans excl
   and sums total from wg_scan_chunks) into dst, up to e; returns run + the tile's sum. */
inline uint store_tile(__global uint* dst, uint t, uint e, uint run, const uint4* v,
                       const uint* excl, const uint* total) {
    uint lid = get_local_id(0);
    for (uint c = 0; c < SCAN_CHUNKS; ++c) {
        uint x = run + excl[c];
        uint4 o;
        o.x = x;
        o.y = o.x + v[c].x;
        o.z = o.y + v[c].y;
        o.w = o.z + v[c].z;
        uint f = t + (c * CLPIX_WG + lid) * 4;
        if (t + TILE <= e) {
            ((__global uint4*)dst)[f >> 2] = o;
        } else {
            if (f < e) dst[f] = o.x;
            if (f + 1 < e) dst[f + 1] = o.y;
            if (f + 2 < e) dst[f + 2] = o.z;
            if (f + 3 < e) dst[f + 3] = o.w;
        }
        run += total[c];
    }
    return run;
}

/* The quads' sums of a loaded tile. */
inline void quad_sums(const uint4* v, uint* s) {
    for (uint c = 0; c < SCAN_CHUNKS; ++c) s[c] = v[c].x + v[c].y + v[c].z + v[c].w;
}

/* The exclusive scan of src[b, e) into dst from `run`; returns run + their sum. */
inline uint scan_range(__global const uint* src, uint b, uint e, __global uint* dst, uint run,
                       __local uint* sh) {
    /* The next tile's loads are issued before this tile's scan, so that their latency
       overlaps the barriers. dst may equal src: a tile is read before any of it is written. */
    uint4 v[SCAN_CHUNKS], next[SCAN_CHUNKS];
    if (b < e) load_tile(src, b, e, next);
    for (uint t = b; t < e; t += TILE) {
        for (uint c = 0; c < SCAN_CHUNKS; ++c) v[c] = next[c];
        if (t + TILE < e) load_tile(src, t + TILE, e, next);
        uint s[SCAN_CHUNKS], excl[SCAN_CHUNKS], total[SCAN_CHUNKS];
        quad_sums(v, s);
        wg_scan_chunks(s, sh, excl, total);
        run = store_tile(dst, t, e, run, v, excl, total);
    }
    return run;
}

__kernel __attribute__((reqd_work_group_size(CLPIX_WG, 1, 1)))
void scan_apply(__global const uint* src, uint n, __global uint* dst, __global const uint* sums) {
    __local uint sh[SCAN_CHUNKS * CLPIX_WG];
    uint g = get_group_id(0), b, e;
    group_range(n, g, get_num_groups(0), &b, &e);
    scan_range(src, b, e, dst, sums[g], sh);
}

/* A short array's whole scan in one work-group, one kernel rather than three (the radix
   passes' 32 x G digit counts): sums[0] = carry, sums[1] = carry + the total, as
   scan_groups leaves them for one group. */
__kernel __attribute__((reqd_work_group_size(CLPIX_WG, 1, 1)))
void scan_single(__global const uint* src, uint n, __global uint* dst, uint carry,
                 __global uint* sums) {
    __local uint sh[SCAN_CHUNKS * CLPIX_WG];
    uint run = scan_range(src, 0, n, dst, carry, sh);
    if (get_local_id(0) == 0) {
        sums[0] = carry;
        sums[1] = run;
    }
}

#endif
