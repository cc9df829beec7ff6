/* Histograms of an image part: RGBA (4 x 256 counters, R then G, B, A) and luminance (1024).
 *
 * Every kernel ADDS its counts into `hist` (zeroed once by the host before the first part), so
 * the parts of an image accumulate into one histogram. Counters are uint: the host refuses
 * images of more than 2^32 - 1 pixels.
 *
 * Arguments, the same for both variants:
 *   px        the part's pixels (r | g << 8 | b << 16 | a << 24)
 *   n         how many
 *   hist      the global histogram (HIST_RGBA_BINS or HIST_LUMA_BINS uints), added to with
 *             atomic_add, once per non-zero bin and work-group
 *   scratch   local memory for the privatised copies (size chosen by the host, see below)
 */

#define HIST_RGBA_BINS 1024u
#define HIST_LUMA_BINS 1024u

#if CLPIX_CONTIGUOUS

/* CPU devices: work-groups of one work-item walking a contiguous range with two plain
 * (non-atomic) sub-histograms in `scratch`, even pixels into the first and odd pixels into the
 * second, so that runs of equal pixels do not wait on one counter. The sub-histograms are
 * HIST_SUB uints apart (not a multiple of 4 KiB: loads and stores to the two copies would
 * alias in the CPU's store-to-load forwarding). scratch: 2 * HIST_SUB uints.
 * GPU-style local atomics ran at 0.51 Gpix/s on PoCL; this at 6.3 (16 cores). */
#define HIST_SUB 1040u

inline void hist_rgba_bump(__local uint* t, uint p) {
    t[p & 0xffu] += 1;
    t[256u + ((p >> 8) & 0xffu)] += 1;
    t[512u + ((p >> 16) & 0xffu)] += 1;
    t[768u + (p >> 24)] += 1;
}

inline void hist_zero(__local uint* t, uint count) {
    for (uint b = 0; b < count; ++b) t[b] = 0;
}

inline void hist_merge(__local const uint* t, uint bins, __global uint* hist) {
    for (uint b = 0; b < bins; ++b) {
        uint s = t[b] + t[HIST_SUB + b];
        if (s) atomic_add(&hist[b], s);
    }
}

__kernel void hist_rgba(__global const uint* px, uint n, __global uint* hist,
                        __local uint* scratch) {
    uint begin, end;
    clpix_range(n, get_group_id(0), get_num_groups(0), &begin, &end);
    hist_zero(scratch, 2 * HIST_SUB);
    __local uint* t0 = scratch;
    __local uint* t1 = scratch + HIST_SUB;
    uint i = begin;
    for (; i + 1 < end; i += 2) {
        hist_rgba_bump(t0, px[i]);
        hist_rgba_bump(t1, px[i + 1]);
    }
    if (i < end) hist_rgba_bump(t0, px[i]);
    hist_merge(scratch, HIST_RGBA_BINS, hist);
}

/* Luminance, 16 pixels at a time: vector arithmetic (the compiler maps uint16 onto the CPU's
 * SIMD registers), then the 16 values are counted alternately into the two sub-tables. */
inline void hist_luma_count16(__local uint* t0, __local uint* t1, uint16 l) {
    t0[l.s0] += 1; t1[l.s1] += 1; t0[l.s2] += 1; t1[l.s3] += 1;
    t0[l.s4] += 1; t1[l.s5] += 1; t0[l.s6] += 1; t1[l.s7] += 1;
    t0[l.s8] += 1; t1[l.s9] += 1; t0[l.sa] += 1; t1[l.sb] += 1;
    t0[l.sc] += 1; t1[l.sd] += 1; t0[l.se] += 1; t1[l.sf] += 1;
}

__kernel void hist_luma(__global const uint* px, uint n, __global uint* hist,
                        __local uint* scratch) {
    uint begin, end;
    clpix_range(n, get_group_id(0), get_num_groups(0), &begin, &end);
    hist_zero(scratch, 2 * HIST_SUB);
    __local uint* t0 = scratch;
    __local uint* t1 = scratch + HIST_SUB;
    uint i = begin;
    for (; end - i >= 16; i += 16) {
        uint16 p = vload16(0, px + i);
        uint16 w = 21u * (p & 0xffu) + 72u * ((p >> 8) & 0xffu) + 7u * ((p >> 16) & 0xffu);
        hist_luma_count16(t0, t1, (1023u * w) / 25500u);
    }
    for (; i < end; ++i) t0[clpix_luma(px[i])] += 1;
    hist_merge(scratch, HIST_LUMA_BINS, hist);
}

#else /* GPU: grid-stride, 16-byte loads, local atomics into privatised copies per work-group */

/* One copy of the histogram per work-group, in local memory. (Interleaved copies, a lane group
 * each, split bank conflicts and the contention of constant images: no gain on the H100 or the
 * H200, docs/performance.md.) */

inline void hist_local_zero(__local uint* scratch, uint count) {
    for (uint b = get_local_id(0); b < count; b += CLPIX_WG) scratch[b] = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
}

/* Adds the group's non-zero counts to the global histogram. */
inline void hist_local_merge(__local uint* scratch, uint bins, __global uint* hist) {
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint b = get_local_id(0); b < bins; b += CLPIX_WG) {
        uint s = scratch[b];
        if (s) atomic_add(&hist[b], s);
    }
}

inline void hist_rgba_inc(__local uint* t, uint p) {
    atomic_inc(&t[p & 0xffu]);
    atomic_inc(&t[256u + ((p >> 8) & 0xffu)]);
    atomic_inc(&t[512u + ((p >> 16) & 0xffu)]);
    atomic_inc(&t[768u + (p >> 24)]);
}

inline void hist_rgba_inc4(__local uint* t, uint4 p) {
    hist_rgba_inc(t, p.x);
    hist_rgba_inc(t, p.y);
    hist_rgba_inc(t, p.z);
    hist_rgba_inc(t, p.w);
}

__kernel __attribute__((reqd_work_group_size(CLPIX_WG, 1, 1)))
void hist_rgba(__global const uint* px, uint n, __global uint* hist,
               __local uint* scratch) {
    hist_local_zero(scratch, HIST_RGBA_BINS);
    __local uint* t = scratch;
    uint gid = get_global_id(0);
    uint stride = get_global_size(0);
    __global const uint4* px4 = (__global const uint4*)px;
    uint n4 = n >> 2;
    /* Two 16-byte loads in flight per iteration. */
    uint i = gid;
    for (; i + stride < n4; i += 2 * stride) {
        uint4 a = px4[i];
        uint4 b = px4[i + stride];
        hist_rgba_inc4(t, a);
        hist_rgba_inc4(t, b);
    }
    if (i < n4) hist_rgba_inc4(t, px4[i]);
    if (gid < (n & 3u)) hist_rgba_inc(t, px[(n4 << 2) + gid]);
    hist_local_merge(scratch, HIST_RGBA_BINS, hist);
}

inline void hist_luma_inc4(__local uint* t, uint4 p) {
    uint4 l = clpix_luma4(p);
    atomic_inc(&t[l.x]);
    atomic_inc(&t[l.y]);
    atomic_inc(&t[l.z]);
    atomic_inc(&t[l.w]);
}

__kernel __attribute__((reqd_work_group_size(CLPIX_WG, 1, 1)))
void hist_luma(__global const uint* px, uint n, __global uint* hist,
               __local uint* scratch) {
    hist_local_zero(scratch, HIST_LUMA_BINS);
    __local uint* t = scratch;
    uint gid = get_global_id(0);
    uint stride = get_global_size(0);
    __global const uint4* px4 = (__global const uint4*)px;
    uint n4 = n >> 2;
    uint i = gid;
    for (; i + stride < n4; i += 2 * stride) {
        uint4 a = px4[i];
        uint4 b = px4[i + stride];
        hist_luma_inc4(t, a);
        hist_luma_inc4(t, b);
    }
    if (i < n4) hist_luma_inc4(t, px4[i]);
    if (gid < (n & 3u)) atomic_inc(&t[clpix_luma(px[(n4 << 2) + gid])]);
    hist_local_merge(scratch, HIST_LUMA_BINS, hist);
}

#endif
