/* Reductions over the pixels of any format but RGBA8 (that one is reduce.cl, tuned): the
 * brightest or darkest pixel by key, and the statistics of the keys (docs/SPEC.md, "Pixel
 * formats"). One source, specialised by CLPIX_FORMAT:
 *   0 mono8, 1 mono16 (without a define), 2 mono f32, 3 rgb8, 5 rgba16, 6 rgba f32 (formats.h).
 * typed_stats is for integer keys, typed_fstats for f32 keys (each compiles for every format).
 *
 * Pixels are read in chunks (formats.h).
 *
 * Scores: every pixel has a score, 0 for "no key" (NaN); the brightest is the largest score,
 * the first in scan order among equal ones. Integer keys k score k + 1 (or KEY_MAX + 1 - k for
 * the darkest); f32 keys score their order key (or its complement), never 0 for a number.
 * Partials of typed_argbest: partials[g] = (score << 32) | ~index, 0 when the group saw no key.
 * typed_stats (integer keys): partials[2 g] = sum, partials[2 g + 1] = (min << 32) | max.
 * typed_fstats (f32 keys), per group: [count, +inf count, -inf count, (min << 32) | max of the
 * order keys, then 384 sums of signed mantissas by exponent k (see below)]: the exact sum,
 * which the host rounds once. A group's sums are local-memory ints of 12-bit pieces, so a group
 * may see at most 2^19 pixels (the host sizes the grid so).
 */
/* u64 words a group of typed_fstats writes. */
#define FSTATS_WORDS 388u

inline uint score_of(const uint* w, uint j, uint flip) {
#if FLOAT_KEYS
    uint o = order_of_bits(float_key_bits(w, j));
    return (o != 0u && flip) ? ~o : o;
#else
    uint k = int_key(w, j);
    return flip ? KEY_MAX + 1u - k : k + 1u;
#endif
}

/* The best score of the first `count` pixels of a chunk; the first of them that has it. */
inline void visit_best(const uint* w, uint first, uint count, uint flip, uint* best,
                       uint* best_index) {
    uint sc[PPC];
    uint m = 0u;
    for (uint j = 0; j < count; ++j) {
        sc[j] = score_of(w, j, flip);
        m = max(m, sc[j]);
    }
    if (m > *best) {
        uint j = 0;
        while (j + 1u < count && sc[j] != m) ++j;
        *best = m;
        *best_index = first + j;
    }
}

__kernel __attribute__((reqd_work_group_size(CLPIX_WG, 1, 1)))
void typed_argbest(__global const uint* px, uint n, uint flip, __global ulong* partials) {
    __local ulong keys[CLPIX_WG];
    uint lid = get_local_id(0);
    uint best = 0u, best_index = 0u;
#define VISIT(w, first, count) visit_best(w, first, count, flip, &best, &best_index)
    FOR_EACH_CHUNK(px, n, VISIT)
#undef VISIT
    keys[lid] = best ? (((ulong)best << 32) | (ulong)(~best_index)) : 0ul;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint s = CLPIX_WG / 2; s > 0; s >>= 1) {
        if (lid < s) keys[lid] = max(keys[lid], keys[lid + s]);
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0) partials[get_group_id(0)] = keys[0];
}

/* Sum, minimum and maximum of the integer keys of the first `count` pixels of a chunk. */
inline void visit_stats(const uint* w, uint count, ulong* sum, uint* lo, uint* hi) {
    uint s = 0u; /* at most 16 keys of 65535: fits */
    for (uint j = 0; j < count; ++j) {
        uint k = int_key(w, j);
        s += k;
        *lo = min(*lo, k);
        *hi = max(*hi, k);
    }
    *sum += s;
}

__kernel __attribute__((reqd_work_group_size(CLPIX_WG, 1, 1)))
void typed_stats(__global const uint* px, uint n, __global ulong* partials) {
    __local ulong sums[CLPIX_WG];
    __local uint los[CLPIX_WG];
    __local uint his[CLPIX_WG];
    uint lid = get_local_id(0);
    ulong sum = 0;
    uint lo = 0xffffffffu, hi = 0u;
#define VISIT(w, first, count) visit_stats(w, count, &sum, &lo, &hi)
    FOR_EACH_CHUNK(px, n, VISIT)
#undef VISIT
    sums[lid] = sum;
    los[lid] = lo;
    his[lid] = hi;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint s = CLPIX_WG / 2; s > 0; s >>= 1) {
        if (lid < s) {
            sums[lid] += sums[lid + s];
            los[lid] = min(los[lid], los[lid + s]);
            his[lid] = max(his[lid], his[lid + s]);
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0) {
        uint g = get_group_id(0);
        partials[2 * g] = sums[0];
        partials[2 * g + 1] = ((ulong)los[0] << 32) | (ulong)his[0];
    }
}

/* The exact sum of f32 keys. Each key is m 2^(k - 150), with m its signed mantissa (24 bits) and
   k = max(biased exponent, 1). A work-item sums its keys in an accumulator `acc` in units of
   2^(base - 150), base its smallest k so far, while its largest k stays within WINDOW of base;
   a key outside the window goes to the group's sums by k instead, as 12-bit halves (local
   atomics). A work-item adds its acc to those sums as 12-bit pieces at k = base, base + 12, ...
   (at its end, and where said below): the sums hold 384 k's. */
#define FSTATS_KS 384u

inline void bins_add(__local int* bins, uint k, int v) {
#if CLPIX_WG == 1
    bins[k] += v; /* a group of one work-item (CPU devices): no atomics */
#else
    atomic_add(&bins[k], v);
#endif
}

/* Adds sign * (hi:lo), a magnitude in units of 2^(base - 150), to the sums by k as `pieces`
   12-bit pieces at k = base, base + 12, ... */
inline void add_pieces(__local int* lows, uint base, int sign, ulong lo, ulong hi, uint pieces) {
    for (uint i = 0; i < pieces; ++i) {
        uint at = 12u * i;
        ulong piece = at < 64u ? (lo >> at) | (at > 52u ? hi << (64u - at) : 0ul)
                               : hi >> (at - 64u);
        int p = (int)(piece & 0xfffu);
        if (p) bins_add(lows, base + at, sign * p);
    }
}

#if defined(cl_khr_fp64) && !defined(CLPIX_FSTATS_NO_F64)
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
/* Devices with f64: acc sums in a double, in units of 2^(base - 150), integers below 2^53 in
   magnitude, so that every addition is exact: a key enters when it is at most 2^52 units
   (k <= base + 28) and acc below 2^52; acc goes to the sums by k (12-bit pieces) when it
   reaches 2^52, and before base moves down (to a smaller k within 28 of the largest seen). */
#define WINDOW 28u

typedef struct {
    double s;
    uint base, top, used;
} Acc;

inline void acc_flush(Acc* a, __local int* lows) {
    if (!a->used || a->s == 0.0) return;
    long v = (long)a->s;
    add_pieces(lows, a->base, v < 0 ? -1 : 1, (ulong)(v < 0 ? -v : v), 0ul, 5u);
    a->s = 0.0;
}

inline int acc_add(Acc* a, int m, uint k, __local int* lows) {
    if (!a->used) {
        a->used = 1u;
        a->base = k;
        a->top = k;
    } else if (k < a->base) {
        if (a->top - k > WINDOW) return 0;
        acc_flush(a, lows);
        a->base = k;
    } else if (k - a->base > WINDOW) {
        return 0;
    }
    a->top = max(a->top, k);
    if (fabs(a->s) >= 0x1p52) acc_flush(a, lows);
    /* m 2^(k - base): exact (a power of two from its bits). */
    a->s += (double)m * as_double((ulong)(1023u + (k - a->base)) << 52);
    return 1;
}
#define ACC_INIT {0.0, 0u, 0u, 0u}
#else
/* Other devices: acc a 128-bit integer (two's complement), |acc| < 2^(19 + 24 + WINDOW + 1)
   never overflows (a group sees at most 2^19 keys). */
#define WINDOW 80u
#define ACC_INIT {0ul, 0ul, 0u, 0u, 0u}

typedef struct {
    ulong lo, hi; /* two's complement */
    uint base, top, used;
} Acc;

inline void acc_shl(Acc* a, uint s) {
    if (s == 0u) return;
    if (s >= 64u) {
        a->hi = a->lo << (s - 64u);
        a->lo = 0ul;
    } else {
        a->hi = (a->hi << s) | (a->lo >> (64u - s));
        a->lo <<= s;
    }
}

/* Adds the signed mantissa m (|m| < 2^24) at k, or returns 0 when k is outside the window. */
inline int acc_add(Acc* a, int m, uint k, __local int* lows) {
    if (!a->used) {
        a->used = 1u;
        a->base = k;
        a->top = k;
    } else if (k < a->base) {
        if (a->top - k > WINDOW) return 0;
        acc_shl(a, a->base - k);
        a->base = k;
    } else {
        if (k - a->base > WINDOW) return 0;
        a->top = max(a->top, k);
    }
    uint d = k - a->base;
    ulong u = (ulong)abs(m);
    ulong lo = d < 64u ? u << d : 0ul;
    ulong hi = d == 0u ? 0ul : (d < 64u ? u >> (64u - d) : u << (d - 64u));
    if (m < 0) { /* negate the 128-bit value */
        lo = ~lo + 1ul;
        hi = ~hi + (lo == 0ul ? 1ul : 0ul);
    }
    a->lo += lo;
    a->hi += hi + (a->lo < lo ? 1ul : 0ul);
    return 1;
}

/* Adds acc into the sums by k: its magnitude in 12-bit pieces, each with acc's sign. */
inline void acc_flush(Acc* a, __local int* lows) {
    if (!a->used) return;
    ulong lo = a->lo, hi = a->hi;
    int sign = 1;
    if ((long)hi < 0) {
        lo = ~lo + 1ul;
        hi = ~hi + (lo == 0ul ? 1ul : 0ul);
        sign = -1;
    }
    add_pieces(lows, a->base, sign, lo, hi, 11u);
}

#endif

/* Counts, bounds and the exact sum of the f32 keys of a chunk's first `count` pixels. */
inline void visit_fstats(const uint* w, uint count, __local int* highs, __local int* lows,
                         Acc* acc, uint* n, uint* pinf, uint* ninf, uint* lo, uint* hi) {
    for (uint j = 0; j < count; ++j) {
        uint b = float_key_bits(w, j);
        uint o = order_of_bits(b);
        if (o == 0u) continue;
        *n += 1u;
        *lo = min(*lo, o);
        *hi = max(*hi, o);
        uint e = (b >> 23) & 0xffu;
        if (e == 0xffu) {
            if (b >> 31) *ninf += 1u; else *pinf += 1u;
            continue;
        }
        uint m = (b & 0x7fffffu) | (e ? 0x800000u : 0u);
        if (m == 0u) continue;
        uint k = max(e, 1u);
        int sm = (b >> 31) ? -(int)m : (int)m;
        if (acc_add(acc, sm, k, lows)) continue;
        int h = (int)(m >> 12), l = (int)(m & 0xfffu);
        if (b >> 31) { h = -h; l = -l; }
        bins_add(highs, k, h);
        bins_add(lows, k, l);
    }
}

__kernel __attribute__((reqd_work_group_size(CLPIX_WG, 1, 1)))
void typed_fstats(__global const uint* px, uint n, __global ulong* partials) {
    __local int highs[FSTATS_KS];
    __local int lows[FSTATS_KS];
    __local ulong counts[CLPIX_WG];
    __local ulong infs[CLPIX_WG];
    __local uint los[CLPIX_WG];
    __local uint his[CLPIX_WG];
    uint lid = get_local_id(0);
    for (uint k = lid; k < FSTATS_KS; k += CLPIX_WG) {
        highs[k] = 0;
        lows[k] = 0;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    uint count = 0u, pinf = 0u, ninf = 0u, lo = 0xffffffffu, hi = 0u;
    Acc acc = ACC_INIT;
#define VISIT(w, first, n_)                                                                    \
    visit_fstats(w, n_, highs, lows, &acc, &count, &pinf, &ninf, &lo, &hi)
    FOR_EACH_CHUNK(px, n, VISIT)
#undef VISIT
    acc_flush(&acc, lows);
    counts[lid] = count;
    infs[lid] = ((ulong)pinf << 32) | ninf;
    los[lid] = lo;
    his[lid] = hi;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint s = CLPIX_WG / 2; s > 0; s >>= 1) {
        if (lid < s) {
            counts[lid] += counts[lid + s];
            infs[lid] += infs[lid + s];
            los[lid] = min(los[lid], los[lid + s]);
            his[lid] = max(his[lid], his[lid + s]);
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    __global ulong* out = partials + (ulong)get_group_id(0) * FSTATS_WORDS;
    if (lid == 0) {
        out[0] = counts[0];
        out[1] = infs[0] >> 32;
        out[2] = infs[0] & 0xffffffffu;
        out[3] = ((ulong)los[0] << 32) | (ulong)his[0];
    }
    for (uint k = lid; k < FSTATS_KS; k += CLPIX_WG)
        out[4u + k] = (ulong)((long)highs[k] * 4096l + (long)lows[k]);
}
