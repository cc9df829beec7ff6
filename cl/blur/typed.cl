/* The blur of every pixel format (docs/SPEC.md, "The blur of every format"), each channel
 * alone, in two passes through an intermediate buffer. CLPIX_FORMAT (formats.h) chooses the
 * element type and channels; the element type chooses the rule:
 *   u8 channels:  q 16-bit weights (sum 2^16); t = (sum q_i p + 2^7) >> 8 (ushort);
 *                 out = (sum q_i t + 2^23) >> 24. uint sums.
 *   u16 channels: q 24-bit weights (sum 2^24); t = (sum q_i p + 2^15) >> 16 (uint, 8
 *                 fractional bits); out = (sum q_i t + 2^31) >> 32. ulong sums.
 *   f32 channels: acc = 0; acc = fma(wt[i], x(pos + i - w), acc) for i = 0..2w, in order.
 * Integer sums are exact, so any order gives the same bits; the f32 sums go in tap order.
 *
 * Buffers hold the channel values of whole rows, packed (width * CH a row). The weights are
 * u32 words (f32 weights as their bits). border.h maps coordinates outside the image.
 *
 * Shapes (defines): BLUR_VPI adjacent pixels a work-item of the horizontal pass writes (a group
 * of L work-items owns L * BLUR_VPI pixels of a row and loads them with their 2w-pixel halo
 * into local memory when BLUR_H_LOCAL, else reads its taps from the row);
 * BLUR_ROWS output rows a work-item of the vertical pass writes down one column value (4
 * adjacent values in blur_typed_v4). Measurements: docs/formats.md.
 */
#if CLPIX_FORMAT == 0 || CLPIX_FORMAT == 3 || CLPIX_FORMAT == 4
#define RULE 0
typedef uchar T;
typedef ushort MID;
typedef uint ACC;
#elif CLPIX_FORMAT == 1 || CLPIX_FORMAT == 5
#define RULE 1
typedef ushort T;
typedef uint MID;
typedef ulong ACC;
#else
#define RULE 2
typedef float T;
typedef float MID;
typedef float ACC;
#endif

#ifndef BLUR_VPI
#define BLUR_VPI 9u
#endif
#ifndef BLUR_ROWS
#define BLUR_ROWS 8
#endif
#ifndef BLUR_H_LOCAL
#define BLUR_H_LOCAL 1
#endif

/* One channel value of pixel px (relative to x0 - w) of the row: from the local tile, or through
   the border from the row itself. */
#if BLUR_H_LOCAL
#define H_AT(px, c) tile[(px) * CH + (c)]
#else
#define H_AT(px, c) h_at(row, (long)x0 - (long)w + (long)(px), width, border, c)
inline T h_at(__global const T* row, long p, uint width, uint border, uint c) {
    long s = blur_map(p, width, border);
    return s < 0 ? (T)0 : row[s * CH + c];
}
#endif

/* The intermediate value of a sum of the horizontal pass. */
inline MID h_done(ACC acc) {
#if RULE == 0
    return (MID)((acc + 128u) >> 8);
#elif RULE == 1
    return (MID)((acc + 32768ul) >> 16);
#else
    return acc;
#endif
}

/* The horizontal pass: mid = the filtered channel values of each row. A group owns a segment
   of L * BLUR_VPI pixels of one row, a work-item BLUR_VPI adjacent pixels (all channels): it
   walks the taps in order with a register window of the BLUR_VPI pixels under them, one new
   pixel and one weight loaded a tap (not 2w + 1 loads a value). Global size: groups * L,
   groups = height * ceil(width / segment). */
__kernel void blur_typed_h(__global const T* src, uint width, uint height,
                           __global const uint* q, uint w, uint border, __global MID* mid,
                           __local T* tile) {
    uint L = get_local_size(0), lid = get_local_id(0);
    uint seg = L * BLUR_VPI;
    uint per_row = (width + seg - 1) / seg;
    uint y = get_group_id(0) / per_row;
    uint x0 = (get_group_id(0) % per_row) * seg;
    if (y >= height) return;
    __global const T* row = src + (size_t)y * width * CH;
#if BLUR_H_LOCAL
    /* The segment and its halo, through the border. */
    uint nt = (seg + 2u * w) * CH;
    if (x0 >= w && (ulong)x0 + seg + w <= width) {
        /* Inside the row: a plain copy. */
        __global const T* from = row + (size_t)(x0 - w) * CH;
        /* Unrolled: several loads in flight at once (each alone waits its whole latency). */
#pragma unroll 8
        for (uint k = lid; k < nt; k += L) tile[k] = from[k];
    } else {
        for (uint k = lid; k < nt; k += L) {
            uint px = k / CH;
            long s = blur_map((long)x0 - (long)w + px, width, border);
            tile[k] = s < 0 ? (T)0 : row[s * CH + (k - px * CH)];
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
#else
    (void)tile;
#endif
    uint p0 = lid * BLUR_VPI; /* this work-item's first pixel, from x0 */
    T win[BLUR_VPI * CH];
    ACC acc[BLUR_VPI * CH];
#pragma unroll
    for (uint o = 0; o < BLUR_VPI; ++o) {
#pragma unroll
        for (uint c = 0; c < CH; ++c) {
            acc[o * CH + c] = 0;
            /* win[o] holds pixel p0 + o - 1 before the first tap's shift. */
            win[o * CH + c] = o == 0 ? (T)0 : H_AT(p0 + o - 1, c);
        }
    }
#pragma unroll 4
    for (uint i = 0; i <= 2u * w; ++i) {
#pragma unroll
        for (uint k = 0; k + CH < BLUR_VPI * CH; ++k) win[k] = win[k + CH];
#pragma unroll
        for (uint c = 0; c < CH; ++c) win[(BLUR_VPI - 1) * CH + c] = H_AT(p0 + i + BLUR_VPI - 1, c);
        uint qi = q[i];
#pragma unroll
        for (uint k = 0; k < BLUR_VPI * CH; ++k) {
#if RULE == 2
            acc[k] = fma(as_float(qi), win[k], acc[k]);
#else
            acc[k] += (ACC)qi * win[k];
#endif
        }
    }
    __global MID* out = mid + ((size_t)y * width + x0) * CH;
#pragma unroll
    for (uint o = 0; o < BLUR_VPI; ++o) {
        if (x0 + p0 + o < width) {
#pragma unroll
            for (uint c = 0; c < CH; ++c) out[(p0 + o) * CH + c] = h_done(acc[o * CH + c]);
        }
    }
}

/* The vertical pass: a work-item takes one channel value j of a row and BLUR_ROWS output rows
   from y0, walking the input rows y0 - w .. y0 + BLUR_ROWS - 1 + w once; input row k of the
   walk is tap k - r of output row r, added in tap order. The weights of the rows in flight sit
   in a register window shifted a row at a time; every loop over r is unrolled (the arrays stay
   in registers). Global size: groups * L, groups = ceil(height / BLUR_ROWS) * ceil(width *
   CH / L). */
__kernel void blur_typed_v(__global const MID* mid, uint width, uint height,
                           __global const uint* q, uint w, uint border, __global T* dst) {
    uint L = get_local_size(0);
    uint nvals = width * CH;
    uint per_row = (nvals + L - 1) / L;
    uint j = (get_group_id(0) % per_row) * L + get_local_id(0);
    uint y0 = (get_group_id(0) / per_row) * BLUR_ROWS;
    if (j >= nvals || y0 >= height) return;
    ACC acc[BLUR_ROWS];
    uint wr[BLUR_ROWS]; /* wr[r] = q[k - r], 0 outside the taps */
#pragma unroll
    for (int r = 0; r < BLUR_ROWS; ++r) {
        acc[r] = 0;
        wr[r] = 0u;
    }
    uint taps = 2u * w + 1u;
    /* Unrolled: the next rows' loads in flight while a row is added. */
#pragma unroll 4
    for (uint k = 0; k < taps + BLUR_ROWS - 1u; ++k) {
#pragma unroll
        for (int r = BLUR_ROWS - 1; r > 0; --r) wr[r] = wr[r - 1];
        wr[0] = k < taps ? q[k] : 0u;
        /* The row in 64-bit arithmetic from k: with an int row (blur_row's, or an int counter
           beside k) Mesa's rusticl 22 (LLVM 15) lost one tap of the first output row
           (docs/formats.md). */
        long s = blur_map((long)y0 - (long)w + (long)k, height, border);
        MID t = s < 0 ? (MID)0 : mid[(size_t)(uint)s * nvals + j];
#pragma unroll
        for (int r = 0; r < BLUR_ROWS; ++r) {
#if RULE == 2
            /* Exactly the 2w + 1 taps: a zero weight would still change a -0 or an infinity. */
            if (k - (uint)r < taps) acc[r] = fma(as_float(wr[r]), t, acc[r]);
#else
            acc[r] += (ACC)wr[r] * t;
#endif
        }
    }
    __global T* out = dst + (size_t)y0 * nvals + j;
#pragma unroll
    for (int r = 0; r < BLUR_ROWS; ++r) {
        if (y0 + r < height) {
#if RULE == 0
            out[(size_t)r * nvals] = (T)((acc[r] + (1u << 23)) >> 24);
#elif RULE == 1
            out[(size_t)r * nvals] = (T)((acc[r] + (1ul << 31)) >> 32);
#else
            out[(size_t)r * nvals] = acc[r];
#endif
        }
    }
}

/* blur_typed_v with 4 adjacent channel values a work-item (vector loads and stores), for rows
   of a multiple of 4 values. Global size: groups * L, groups = ceil(height / BLUR_ROWS) *
   ceil(width * CH / 4 / L). */
#if RULE == 0
typedef uint4 ACC4;
typedef ushort4 MID4;
#define WIDEN4(t) convert_uint4(t)
#define NARROW4(a) convert_uchar4(((a) + (1u << 23)) >> 24)
#elif RULE == 1
typedef ulong4 ACC4;
typedef uint4 MID4;
#define WIDEN4(t) convert_ulong4(t)
#define NARROW4(a) convert_ushort4(((a) + (1ul << 31)) >> 32)
#else
typedef float4 ACC4;
typedef float4 MID4;
#define WIDEN4(t) (t)
#define NARROW4(a) (a)
#endif
__kernel void blur_typed_v4(__global const MID* mid, uint width, uint height,
                            __global const uint* q, uint w, uint border, __global T* dst) {
    uint L = get_local_size(0);
    uint nvals = width * CH, nq = nvals / 4u;
    uint per_row = (nq + L - 1) / L;
    uint jq = (get_group_id(0) % per_row) * L + get_local_id(0);
    uint y0 = (get_group_id(0) / per_row) * BLUR_ROWS;
    if (jq >= nq || y0 >= height) return;
    ACC4 acc[BLUR_ROWS];
    uint wr[BLUR_ROWS];
#pragma unroll
    for (int r = 0; r < BLUR_ROWS; ++r) {
        acc[r] = (ACC4)(0);
        wr[r] = 0u;
    }
    uint taps = 2u * w + 1u;
#pragma unroll 2
    for (uint k = 0; k < taps + BLUR_ROWS - 1u; ++k) {
#pragma unroll
        for (int r = BLUR_ROWS - 1; r > 0; --r) wr[r] = wr[r - 1];
        wr[0] = k < taps ? q[k] : 0u;
        long s = blur_map((long)y0 - (long)w + (long)k, height, border);
        ACC4 t = s < 0 ? (ACC4)(0) : WIDEN4(vload4(jq, mid + (size_t)(uint)s * nvals));
#pragma unroll
        for (int r = 0; r < BLUR_ROWS; ++r) {
#if RULE == 2
            if (k - (uint)r < taps) acc[r] = fma((float4)(as_float(wr[r])), t, acc[r]);
#else
            acc[r] += (ACC4)(wr[r]) * t;
#endif
        }
    }
#pragma unroll
    for (int r = 0; r < BLUR_ROWS; ++r) {
        if (y0 + r < height) vstore4(NARROW4(acc[r]), jq, dst + (size_t)(y0 + r) * nvals);
    }
}
