/* Reductions over the pixels of an image part: arg-best luminance and luminance statistics.
 *
 * Each work-group writes one partial result; the host combines the partials (a few hundred
 * values), as the brightest-pixel seed does.
 *
 * Arg-best: flip = 0 finds the brightest pixel, flip = 1 the darkest. A pixel's score is
 * its weighted sum (or 25500 minus it), so the luminance L' = L (or 1023 - L) is a
 * non-decreasing function of the score: the hot loop only takes maxima of scores, and the
 * luminance and index are worked out when a block's best improves. Ties go to the smallest
 * index: keys are (L' << 32) | ~index and the largest key wins; key 0 means "no pixel".
 * Partials: partials[2 g] = key, partials[2 g + 1] = the winning pixel.
 *
 * u32_stats: sum, minimum and maximum of a uint array, each extreme at its first index.
 * Partials: partials[3 g] = sum (ulong), partials[3 g + 1] = (min << 32) | index (the smallest
 * key wins), partials[3 g + 2] = (max << 32) | ~index (the largest key wins). Indices are
 * below n <= UINT_MAX, so a group that saw nothing reports the neutral keys ULONG_MAX and 0.
 */

/* "No element seen yet": no valid index equals it (indices are below n <= UINT_MAX). */
#define CLPIX_NO_INDEX 0xffffffffu

/* Visits element `v` at `index`; a work-item visits its indices in increasing order, so a
   strictly better value is needed to move an extreme (ties keep the first index). */
inline void stats_visit(uint v, uint index, uint* lo, uint* lo_i, uint* hi, uint* hi_i) {
    if (v < *lo || *lo_i == CLPIX_NO_INDEX) { *lo = v; *lo_i = index; }
    if (v > *hi || *hi_i == CLPIX_NO_INDEX) { *hi = v; *hi_i = index; }
}
inline ulong min_key(uint lo, uint lo_i) { return ((ulong)lo << 32) | (ulong)lo_i; }
inline ulong max_key(uint hi, uint hi_i) { return ((ulong)hi << 32) | (ulong)(~hi_i); }

inline uint score_of(uint p, uint flip) {
    uint s = clpix_wsum(p);
    return flip ? CLPIX_MAX_WSUM - s : s;
}
inline uint4 score_of4(uint4 p, uint flip) {
    uint4 s = clpix_wsum4(p);
    return flip ? (uint4)(CLPIX_MAX_WSUM) - s : s;
}
/* L' of a score. */
inline uint flipped_luma(uint score, uint flip) {
    return flip ? CLPIX_MAX_LUMA - clpix_luma_of_wsum(CLPIX_MAX_WSUM - score)
                : clpix_luma_of_wsum(score);
}
inline ulong make_key(uint l, uint index) { return ((ulong)l << 32) | (ulong)(~index); }

#if CLPIX_CONTIGUOUS

#define BLOCK 512u

__kernel void luma_argbest(__global const uint* px, uint n, uint flip, __global ulong* partials) {
    uint g = get_group_id(0);
    uint begin, end;
    clpix_range(n, g, get_num_groups(0), &begin, &end);
    int best = -1;
    uint best_index = 0;
    for (uint b = begin; b < end; b += BLOCK) {
        uint e = min(end, b + BLOCK);
        uint m = 0;
        for (uint i = b; i < e; ++i) m = max(m, score_of(px[i], flip));
        int l = (int)flipped_luma(m, flip);
        if (l > best) {
            uint i = b;
            while ((int)flipped_luma(score_of(px[i], flip), flip) != l) ++i;
            best = l;
            best_index = i;
        }
    }
    partials[2 * g] = best < 0 ? 0 : make_key((uint)best, best_index);
    partials[2 * g + 1] = best < 0 ? 0 : px[best_index];
}

__kernel void luma_stats(__global const uint* px, uint n, __global ulong* partials) {
    uint g = get_group_id(0);
    uint begin, end;
    clpix_range(n, g, get_num_groups(0), &begin, &end);
    ulong sum = 0;
    uint lo = CLPIX_MAX_WSUM, hi = 0;
    for (uint b = begin; b < end; b += BLOCK) {
        uint e = min(end, b + BLOCK);
        uint s = 0; /* at most 512 * 1023: fits */
        for (uint i = b; i < e; ++i) {
            uint w = clpix_wsum(px[i]);
            s += clpix_luma_of_wsum(w);
            lo = min(lo, w);
            hi = max(hi, w);
        }
        sum += s;
    }
    partials[2 * g] = sum;
    /* An empty range reports min 1023 and max 0: neutral for the host's min and max. */
    partials[2 * g + 1] = ((ulong)clpix_luma_of_wsum(lo) << 32) | clpix_luma_of_wsum(hi);
}

__kernel void u32_stats(__global const uint* a, uint n, __global ulong* partials) {
    uint g = get_group_id(0);
    uint begin, end;
    clpix_range(n, g, get_num_groups(0), &begin, &end);
    ulong sum = 0;
    uint lo = UINT_MAX, lo_i = CLPIX_NO_INDEX, hi = 0, hi_i = CLPIX_NO_INDEX;
    /* Blocks: sum, min and max are a vectorised loop; the index search runs only when a
       block beats the extreme so far. `e` never wraps, even near n = UINT_MAX. */
    for (uint b = begin, e; b < end; b = e) {
        e = end - b > BLOCK ? b + BLOCK : end;
        ulong s = 0;
        uint m = UINT_MAX, mx = 0;
        for (uint i = b; i < e; ++i) {
            uint v = a[i];
            s += v;
            m = min(m, v);
            mx = max(mx, v);
        }
        sum += s;
        if (m < lo || lo_i == CLPIX_NO_INDEX) {
            uint i = b;
            while (a[i] != m) ++i;
            lo = m;
            lo_i = i;
        }
        if (mx > hi || hi_i == CLPIX_NO_INDEX) {
            uint i = b;
            while (a[i] != mx) ++i;
            hi = mx;
            hi_i = i;
        }
    }
    partials[3 * g] = sum;
    partials[3 * g + 1] = min_key(lo, lo_i);
    partials[3 * g + 2] = max_key(hi, hi_i);
}

#else /* GPU: grid-stride loops, coalesced 16-byte loads, a local-memory tree per group */

__kernel __attribute__((reqd_work_group_size(CLPIX_WG, 1, 1)))
void luma_argbest(__global const uint* px, uint n, uint flip, __global ulong* partials) {
    __local ulong keys[CLPIX_WG];
    uint lid = get_local_id(0);
    uint gid = get_global_id(0);
    uint stride = get_global_size(0);
    __global const uint4* px4 = (__global const uint4*)px;
    uint n4 = n >> 2;
    int best = -1;
    uint best_index = 0;
    /* Two 16-byte loads in flight per iteration; this work-item's indices only grow, so a
       strictly larger luminance keeps the first index. */
    uint i = gid;
    for (; i + stride < n4; i += 2 * stride) {
        uint4 a = score_of4(px4[i], flip);
        uint4 b = score_of4(px4[i + stride], flip);
        uint ma = max(max(a.x, a.y), max(a.z, a.w));
        uint mb = max(max(b.x, b.y), max(b.z, b.w));
        int la = (int)flipped_luma(ma, flip);
        int lb = (int)flipped_luma(mb, flip);
        if (la > best || lb > best) {
            uint q[8] = {a.x, a.y, a.z, a.w, b.x, b.y, b.z, b.w};
            for (uint k = 0; k < 8; ++k) {
                int l = (int)flipped_luma(q[k], flip);
                if (l > best) {
                    best = l;
                    best_index = (k < 4 ? i : i + stride) * 4 + (k & 3);
                }
            }
        }
    }
    if (i < n4) {
        uint4 a = score_of4(px4[i], flip);
        uint q[4] = {a.x, a.y, a.z, a.w};
        for (uint k = 0; k < 4; ++k) {
            int l = (int)flipped_luma(q[k], flip);
            if (l > best) { best = l; best_index = i * 4 + k; }
        }
    }
    /* The last n % 4 pixels: larger than every index above, so visited last. */
    if (gid < (n & 3u)) {
        uint t = (n4 << 2) + gid;
        int l = (int)flipped_luma(score_of(px[t], flip), flip);
        if (l > best) { best = l; best_index = t; }
    }
    keys[lid] = best < 0 ? 0 : make_key((uint)best, best_index);
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint s = CLPIX_WG / 2; s > 0; s >>= 1) {
        if (lid < s) keys[lid] = max(keys[lid], keys[lid + s]);
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0) {
        ulong k = keys[0];
        uint g = get_group_id(0);
        partials[2 * g] = k;
        partials[2 * g + 1] = k ? px[~(uint)k] : 0;
    }
}

/* Sums, minima and maxima of a work-group, each work-item's in element `lid` of the local
   arrays: a tree in local memory; the group's results end in element 0. */
inline void group_sum_min_max(__local ulong* sums, __local ulong* los, __local ulong* his,
                              uint lid) {
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint s = CLPIX_WG / 2; s > 0; s >>= 1) {
        if (lid < s) {
            sums[lid] += sums[lid + s];
            los[lid] = min(los[lid], los[lid + s]);
            his[lid] = max(his[lid], his[lid + s]);
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
}

__kernel __attribute__((reqd_work_group_size(CLPIX_WG, 1, 1)))
void luma_stats(__global const uint* px, uint n, __global ulong* partials) {
    __local ulong sums[CLPIX_WG];
    __local ulong los[CLPIX_WG];
    __local ulong his[CLPIX_WG];
    uint lid = get_local_id(0);
    uint gid = get_global_id(0);
    uint stride = get_global_size(0);
    __global const uint4* px4 = (__global const uint4*)px;
    uint n4 = n >> 2;
    ulong sum = 0;
    uint lo = CLPIX_MAX_WSUM, hi = 0;
    uint i = gid;
    for (; i + stride < n4; i += 2 * stride) {
        uint4 a = clpix_wsum4(px4[i]);
        uint4 b = clpix_wsum4(px4[i + stride]);
        uint4 la = clpix_luma_of_wsum4(a), lb = clpix_luma_of_wsum4(b);
        uint4 t = la + lb;
        sum += t.x + t.y + t.z + t.w;
        uint4 mn = min(a, b), mx = max(a, b);
        lo = min(lo, min(min(mn.x, mn.y), min(mn.z, mn.w)));
        hi = max(hi, max(max(mx.x, mx.y), max(mx.z, mx.w)));
    }
    if (i < n4) {
        uint4 a = clpix_wsum4(px4[i]);
        uint4 la = clpix_luma_of_wsum4(a);
        sum += la.x + la.y + la.z + la.w;
        lo = min(lo, min(min(a.x, a.y), min(a.z, a.w)));
        hi = max(hi, max(max(a.x, a.y), max(a.z, a.w)));
    }
    if (gid < (n & 3u)) {
        uint w = clpix_wsum(px[(n4 << 2) + gid]);
        sum += clpix_luma_of_wsum(w);
        lo = min(lo, w);
        hi = max(hi, w);
    }
    sums[lid] = sum;
    los[lid] = lo;
    his[lid] = hi;
    group_sum_min_max(sums, los, his, lid);
    if (lid == 0) {
        uint g = get_group_id(0);
        partials[2 * g] = sums[0];
        /* A group that saw no pixel reports lo > hi, which the host ignores. */
        partials[2 * g + 1] = his[0] < los[0]
            ? ((ulong)CLPIX_MAX_LUMA << 32)
            : ((ulong)clpix_luma_of_wsum((uint)los[0]) << 32) | clpix_luma_of_wsum((uint)his[0]);
    }
}

inline ulong sum4(uint4 v) { return (ulong)v.x + v.y + v.z + v.w; }

__kernel __attribute__((reqd_work_group_size(CLPIX_WG, 1, 1)))
void u32_stats(__global const uint* a, uint n, __global ulong* partials) {
    __local ulong sums[CLPIX_WG];
    __local ulong los[CLPIX_WG];
    __local ulong his[CLPIX_WG];
    uint lid = get_local_id(0);
    uint gid = get_global_id(0);
    uint stride = get_global_size(0);
    __global const uint4* a4 = (__global const uint4*)a;
    uint n4 = n >> 2;
    ulong sum = 0;
    uint lo = UINT_MAX, lo_i = CLPIX_NO_INDEX, hi = 0, hi_i = CLPIX_NO_INDEX;
    /* Two 16-byte loads in flight per iteration; the eight elements are visited in index
       order only when one of them may move an extreme. */
    uint i = gid;
    for (; i + stride < n4; i += 2 * stride) {
        uint4 x = a4[i];
        uint4 y = a4[i + stride];
        sum += sum4(x) + sum4(y);
        uint4 mn = min(x, y), mx = max(x, y);
        uint m = min(min(mn.x, mn.y), min(mn.z, mn.w));
        uint M = max(max(mx.x, mx.y), max(mx.z, mx.w));
        if (m < lo || M > hi || lo_i == CLPIX_NO_INDEX) {
            uint q[8] = {x.x, x.y, x.z, x.w, y.x, y.y, y.z, y.w};
            for (uint k = 0; k < 8; ++k)
                stats_visit(q[k], (k < 4 ? i : i + stride) * 4 + (k & 3), &lo, &lo_i, &hi, &hi_i);
        }
    }
    if (i < n4) {
        uint4 x = a4[i];
        sum += sum4(x);
        uint q[4] = {x.x, x.y, x.z, x.w};
        for (uint k = 0; k < 4; ++k) stats_visit(q[k], i * 4 + k, &lo, &lo_i, &hi, &hi_i);
    }
    /* The last n % 4 elements: larger indices than every one above, so visited last. */
    if (gid < (n & 3u)) {
        uint t = (n4 << 2) + gid;
        sum += a[t];
        stats_visit(a[t], t, &lo, &lo_i, &hi, &hi_i);
    }
    sums[lid] = sum;
    los[lid] = min_key(lo, lo_i);
    his[lid] = max_key(hi, hi_i);
    group_sum_min_max(sums, los, his, lid);
    if (lid == 0) {
        uint g = get_group_id(0);
        partials[3 * g] = sums[0];
        partials[3 * g + 1] = los[0];
        partials[3 * g + 2] = his[0];
    }
}

#endif
