/* Histograms with a bin count and a range per call, of any pixel format (docs/SPEC.md,
 * "Histograms of every format"): of each channel (HIST_KEY 0: CH histograms, channel c's
 * counters at c * bins) or of the key (HIST_KEY 1: one histogram). Specialised by
 * CLPIX_FORMAT (formats.h), HIST_KEY and HIST_LOCAL.
 *
 * The bin of a value comes from a table the host made for the call: the bins' lower bounds
 * t_0..t_bins (t_bins: just past the last bin), integers, or the bits of f32s (each the smallest
 * f32 not below the f64 edge k of numpy's bins on the values as f64). A value counts when
 * t_0 <= v <= thi, in the last bin b with t_b <= v: an estimate from (v - lo) * scale, checked
 * against its bounds and, where wrong, a binary search (so the answer does not depend on the
 * estimate, and no loop runs long: rusticl stops long loops). The table is copied to local
 * memory where it fits (HIST_TABLE_LOCAL).
 *
 * HIST_LOCAL 1: each work-group counts into its own copy in local memory (`scratch`, bins * the
 * histograms' count uints; atomics, or plain adds in a group of one work-item) and adds it into
 * `hist` once per non-zero counter; HIST_LOCAL 0 (too many bins for local memory): atomics on
 * `hist` directly. One histogram (keys, or a mono format's channel): a work-item counts runs of
 * one bin and adds each run at once (a constant image costs an atomic per run, not a pixel).
 * `hist` is zeroed by the host; parts add into it.
 */

#ifndef HIST_KEY
#define HIST_KEY 0
#endif
#ifndef HIST_LOCAL
#define HIST_LOCAL 1
#endif
#ifndef HIST_TABLE_LOCAL
#define HIST_TABLE_LOCAL 0
#endif
#if HIST_TABLE_LOCAL
#define TABLE_SPACE __local
#else
#define TABLE_SPACE __global
#endif
#define HIST_NONE 0xffffffffu
#if HIST_KEY
#define HIST_OUT 1u
#else
#define HIST_OUT CH
#endif

inline uint bin_of(uint v, TABLE_SPACE const uint* table, uint bins, uint thi, float lo,
                   float scale, uint shift) {
#if FLOAT_KEYS
#define HIST_AT(k) as_float(table[k])
    float x = as_float(v);
    if (!(x >= HIST_AT(0) && x <= as_float(thi))) return HIST_NONE; /* NaN: not counted */
    float e = (x - lo) * scale;
#else
#define HIST_AT(k) table[k]
    uint x = v;
    if (!(x >= HIST_AT(0) && x <= thi)) return HIST_NONE;
    /* Bins of 2^shift values from t_0 = lo (the host's fast case): no table. */
    if (shift != HIST_NONE) return (x - table[0]) >> shift;
    float e = ((float)x - lo) * scale;
#endif
    /* NaN (0 · inf where bins / span overflows f32, inf · 0 where it underflows) estimates bin
       0, as on the host: a NaN converted to uint is undefined and was a bin past the table. */
    uint b = !(e >= 1.0f) ? 0u : (e >= (float)bins ? bins - 1u : (uint)e);
    /* The estimate is right but near a bound; else a binary search for the last bound not
       above x (bounded: never more than log2(bins) steps, whatever the estimate). */
    uint first, last;
    if (x < HIST_AT(b)) {
        first = 0u;
        last = b;
    } else if (b + 1u < bins && x >= HIST_AT(b + 1u)) {
        first = b + 1u;
        last = bins;
    } else {
        return b;
    }
    while (last - first > 1u) {
        uint mid = first + (last - first) / 2u;
        if (x >= HIST_AT(mid)) first = mid; else last = mid;
    }
    return first;
#undef HIST_AT
}

#if HIST_LOCAL
#if CLPIX_WG == 1
#define HIST_ADD(i, k) (scratch[i] += (k))
#else
#define HIST_ADD(i, k) atomic_add(&scratch[i], (k))
#endif
#else
#define HIST_ADD(i, k) atomic_add(&hist[i], (k))
#endif

/* Counts the first `count` pixels of a chunk; one histogram: into the run (*last, *run). */
inline void visit_hist(const uint* w, uint count, TABLE_SPACE const uint* table, uint bins,
                       uint thi, float lo, float scale, uint shift, __global uint* hist,
                       __local uint* scratch, uint* last, uint* run) {
    for (uint j = 0; j < count; ++j) {
#if HIST_KEY || CH == 1
#if HIST_KEY && FLOAT_KEYS
        uint b = bin_of(float_key_bits(w, j), table, bins, thi, lo, scale, shift);
#elif HIST_KEY
        uint b = bin_of(int_key(w, j), table, bins, thi, lo, scale, shift);
#else
        uint b = bin_of(channel_of(w, j, 0u), table, bins, thi, lo, scale, shift);
#endif
        if (b == HIST_NONE) continue;
        if (b == *last) {
            *run += 1u;
        } else {
            if (*run) HIST_ADD(*last, *run);
            *last = b;
            *run = 1u;
        }
#else
        for (uint ch = 0; ch < CH; ++ch) {
            uint b = bin_of(channel_of(w, j, ch), table, bins, thi, lo, scale, shift);
            if (b != HIST_NONE) HIST_ADD(ch * bins + b, 1u);
        }
#endif
    }
}

__kernel __attribute__((reqd_work_group_size(CLPIX_WG, 1, 1)))
void typed_hist(__global const uint* px, uint n, __global const uint* gtable, uint bins,
                uint thi, float lo, float scale, uint shift, __global uint* hist,
                __local uint* scratch) {
    uint lid = get_local_id(0);
#if HIST_LOCAL
    for (uint k = lid; k < HIST_OUT * bins; k += CLPIX_WG) scratch[k] = 0u;
#endif
#if HIST_TABLE_LOCAL
    /* After the counters (HIST_LOCAL) or alone. */
    __local uint* table = scratch + (HIST_LOCAL ? HIST_OUT * bins : 0u);
    for (uint k = lid; k <= bins; k += CLPIX_WG) table[k] = gtable[k];
#else
    __global const uint* table = gtable;
#endif
    barrier(CLK_LOCAL_MEM_FENCE);
    uint last = HIST_NONE, run = 0u;
#define VISIT(w, first, count)                                                                 \
    visit_hist(w, count, table, bins, thi, lo, scale, shift, hist, scratch, &last, &run)
    FOR_EACH_CHUNK(px, n, VISIT)
#undef VISIT
    if (run) HIST_ADD(last, run);
#if HIST_LOCAL
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint k = lid; k < HIST_OUT * bins; k += CLPIX_WG) {
        uint s = scratch[k];
        if (s) atomic_add(&hist[k], s);
    }
#endif
}
