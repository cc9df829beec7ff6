/* Separable Gaussian blur: horizontal pass into an intermediate buffer, then vertical pass.
 *
 * RGBA8 (SPEC.md): integer weights q (sum 65536, symmetric); horizontal h = sum q_i p(x+i)
 * as uint, t = (h + 128) >> 8 as ushort (4 per pixel); vertical v = sum q_i t(y+i) as uint,
 * out = (v + 2^23) >> 24. Integer sums are exact, so any order gives the same bits.
 * f32: acc = 0; acc = fma(wt[i], x(pos + i - w), acc) for i = 0..2w, in that order: one
 * rounding a tap, which no conforming compiler may change (it may fuse a separate multiply and
 * add despite FP_CONTRACT OFF: Intel's CPU compiler did).
 *
 * Borders (border argument): 0 Clamp, 1 Reflect (no edge repeat, repeated; 0 for n = 1),
 * 2 Wrap, 3 Zero (a zero pixel, which the f32 path still adds as wt * 0).
 *
 * Arguments, all kernels: (src, width, height, weights, w, border, dst[, groups per row][, tile]).
 */
#pragma OPENCL FP_CONTRACT OFF

/* blur_map, blur_row: border.h, pasted before this file. */

inline uint4 unpack4(uint p) {
    return (uint4)(p & 0xffu, (p >> 8) & 0xffu, (p >> 16) & 0xffu, p >> 24);
}
inline uint pack4(uint4 v) { return v.x | (v.y << 8) | (v.z << 16) | (v.w << 24); }

/* Pixel p of an RGBA8 row of `width` pixels, through the borders (0 for a zero pixel). */
inline uint row_px(__global const uint* row, long p, uint width, uint border) {
    /* Branches, as its callers had them before: inside the row, blur_map is not evaluated
       (in the register kernel a select cost 2-8% at w = 1 and 2 on the H200). */
    if (p >= 0 && p < (long)width) return row[p];
    long s = blur_map(p, width, border);
    return s < 0 ? 0u : row[s];
}

/* One channel value j (= 4 x + c) of the horizontal pass, borders read through blur_map. */
inline ushort h_at_u8(__global const uchar* row, long width, long j, __global const uint* q,
                      uint w, uint border) {
    long x = j >> 2;
    long c = j & 3;
    uint acc = 0;
    for (uint i = 0; i <= 2u * w; ++i) {
        long s = blur_map(x + (long)i - (long)w, width, border);
        if (s >= 0) acc += q[i] * (uint)row[s * 4 + c];
    }
    return (ushort)((acc + 128u) >> 8);
}

inline float h_at_f32(__global const float* row, long width, long j, __global const float* wt,
                      uint w, uint border) {
    long x = j >> 2;
    long c = j & 3;
    float acc = 0.0f;
    for (uint i = 0; i <= 2u * w; ++i) {
        long s = blur_map(x + (long)i - (long)w, width, border);
        float v = s >= 0 ? row[s * 4 + c] : 0.0f;
        acc = fma(wt[i], v, acc);
    }
    return acc;
}

#ifndef BLUR_W /* the generic kernels; the programs built per radius are in blur_radius.cl */

#if CLPIX_CONTIGUOUS

/* CPU devices: one work-item per group walks a range of rows, in blocks of 64 channel values
   held in four 16-wide vectors (registers), the row edges through blur_map. The fused
   kernels keep a ring of 2w + 1 filtered rows per group (as the rayon path does), so the
   intermediate stays in the cache; the two-pass kernels serve radii too large for a ring. */
#define BLK 64

#define LDB(p, k) convert_uint16(vload16((k), (p)))
/* vstore16 is stored element by element by PoCL; an aligned row takes one vector store. */
#define ST16(T, v, k, p)                                       \
    do {                                                       \
        if ((((size_t)(p)) & (sizeof(T) - 1)) == 0)            \
            ((__global T*)(p))[k] = (v);                       \
        else                                                   \
            vstore16((v), (k), (p));                           \
    } while (0)
#define LDS(p, k) convert_uint16(vload16((k), (p)))

/* Values jb..je (j = 4 x + c) of one intermediate row of the RGBA8 path, into out[j - jb].
   jb is a multiple of 16, so that blocks start at aligned addresses when out is aligned. */
inline void hrow_u8(__global const uchar* row, uint width, __global const uint* q, uint w,
                    uint border, size_t jb, size_t je, __global ushort* out) {
    size_t need = (size_t)4 * w > jb ? (size_t)4 * w - jb : 0;
    size_t a = min(jb + ((need + 15) & ~(size_t)15), je);
    size_t lim = width > 2u * w ? 4 * (size_t)(width - w) : 0;
    size_t b = min(je, max(a, lim));
    uint qc = q[w];
    for (size_t j = jb; j < a; ++j) out[j - jb] = h_at_u8(row, width, j, q, w, border);
    size_t j0 = a;
    for (; j0 + BLK <= b; j0 += BLK) {
        __global const uchar* c = row + j0;
        uint16 a0 = qc * LDB(c, 0), a1 = qc * LDB(c, 1), a2 = qc * LDB(c, 2), a3 = qc * LDB(c, 3);
        for (uint d = 1; d <= w; ++d) {
            uint qd = q[w + d];
            __global const uchar* lo = c - 4 * d;
            __global const uchar* hi = c + 4 * d;
            a0 += qd * (LDB(lo, 0) + LDB(hi, 0));
            a1 += qd * (LDB(lo, 1) + LDB(hi, 1));
            a2 += qd * (LDB(lo, 2) + LDB(hi, 2));
            a3 += qd * (LDB(lo, 3) + LDB(hi, 3));
        }
        __global ushort* o = out + (j0 - jb);
        ST16(ushort16, convert_ushort16((a0 + 128u) >> 8), 0, o);
        ST16(ushort16, convert_ushort16((a1 + 128u) >> 8), 1, o);
        ST16(ushort16, convert_ushort16((a2 + 128u) >> 8), 2, o);
        ST16(ushort16, convert_ushort16((a3 + 128u) >> 8), 3, o);
    }
    for (size_t j = j0; j < je; ++j) out[j - jb] = h_at_u8(row, width, j, q, w, border);
}

/* Values jb..je of one intermediate row of the f32 path, taps in order. */
inline void hrow_f32(__global const float* row, uint width, __global const float* wt, uint w,
                     uint border, size_t jb, size_t je, __global float* out) {
    size_t need = (size_t)4 * w > jb ? (size_t)4 * w - jb : 0;
    size_t a = min(jb + ((need + 15) & ~(size_t)15), je);
    size_t lim = width > 2u * w ? 4 * (size_t)(width - w) : 0;
    size_t b = min(je, max(a, lim));
    for (size_t j = jb; j < a; ++j) out[j - jb] = h_at_f32(row, width, j, wt, w, border);
    size_t j0 = a;
    for (; j0 + BLK <= b; j0 += BLK) {
        float16 a0 = (float16)(0.0f), a1 = a0, a2 = a0, a3 = a0;
        __global const float* p = row + j0 - 4 * (size_t)w;
        for (uint i = 0; i <= 2u * w; ++i, p += 4) {
            float wi = wt[i];
            a0 = fma((float16)(wi), vload16(0, p), a0);
            a1 = fma((float16)(wi), vload16(1, p), a1);
            a2 = fma((float16)(wi), vload16(2, p), a2);
            a3 = fma((float16)(wi), vload16(3, p), a3);
        }
        __global float* o = out + (j0 - jb);
        ST16(float16, a0, 0, o);
        ST16(float16, a1, 1, o);
        ST16(float16, a2, 2, o);
        ST16(float16, a3, 3, o);
    }
    for (size_t j = j0; j < je; ++j) out[j - jb] = h_at_f32(row, width, j, wt, w, border);
}

/* Output row y of the RGBA8 path from 2w + 1 rows: rows[i] = base + off[i] (zero rows are
   real zero rows in the ring; in the two-pass kernel they are skipped, which is exact). */
inline void vrow_u8_ring(__global const ushort* ring, size_t ms, size_t n, uint s0, uint taps,
                         __global const uint* q, uint w, __global uchar* ob) {
    uint qc = q[w];
    size_t j0 = 0;
#define SLOT(i) ((s0 + (i)) >= taps ? (s0 + (i)) - taps : (s0 + (i)))
    for (; j0 + BLK <= n; j0 += BLK) {
        __global const ushort* c = ring + SLOT(w) * ms + j0;
        uint16 a0 = qc * LDS(c, 0), a1 = qc * LDS(c, 1), a2 = qc * LDS(c, 2), a3 = qc * LDS(c, 3);
        for (uint d = 1; d <= w; ++d) {
            uint qd = q[w + d];
            __global const ushort* lo = ring + SLOT(w - d) * ms + j0;
            __global const ushort* hi = ring + SLOT(w + d) * ms + j0;
            a0 += qd * (LDS(lo, 0) + LDS(hi, 0));
            a1 += qd * (LDS(lo, 1) + LDS(hi, 1));
            a2 += qd * (LDS(lo, 2) + LDS(hi, 2));
            a3 += qd * (LDS(lo, 3) + LDS(hi, 3));
        }
        __global uchar* o = ob + j0;
        ST16(uchar16, convert_uchar16((a0 + (1u << 23)) >> 24), 0, o);
        ST16(uchar16, convert_uchar16((a1 + (1u << 23)) >> 24), 1, o);
        ST16(uchar16, convert_uchar16((a2 + (1u << 23)) >> 24), 2, o);
        ST16(uchar16, convert_uchar16((a3 + (1u << 23)) >> 24), 3, o);
    }
    for (size_t j = j0; j < n; ++j) {
        uint acc = 0;
        for (uint i = 0; i <= 2u * w; ++i) acc += q[i] * (uint)ring[SLOT(i) * ms + j];
        ob[j] = (uchar)((acc + (1u << 23)) >> 24);
    }
}

inline void vrow_f32_ring(__global const float* ring, size_t ms, size_t n, uint s0, uint taps,
                          __global const float* wt, uint w, __global float* ob) {
    size_t j0 = 0;
    for (; j0 + BLK <= n; j0 += BLK) {
        float16 a0 = (float16)(0.0f), a1 = a0, a2 = a0, a3 = a0;
        for (uint i = 0; i <= 2u * w; ++i) {
            float wi = wt[i];
            __global const float* p = ring + SLOT(i) * ms + j0;
            a0 = fma((float16)(wi), vload16(0, p), a0);
            a1 = fma((float16)(wi), vload16(1, p), a1);
            a2 = fma((float16)(wi), vload16(2, p), a2);
            a3 = fma((float16)(wi), vload16(3, p), a3);
        }
        __global float* o = ob + j0;
        ST16(float16, a0, 0, o);
        ST16(float16, a1, 1, o);
        ST16(float16, a2, 2, o);
        ST16(float16, a3, 3, o);
    }
    for (size_t j = j0; j < n; ++j) {
        float acc = 0.0f;
        for (uint i = 0; i <= 2u * w; ++i) acc = fma(wt[i], ring[SLOT(i) * ms + j], acc);
        ob[j] = acc;
    }
#undef SLOT
}

/* Fused: each group blurs its rows with its own ring of 2w + 1 rows of one column strip
   (STRIP pixels: the ring stays in the cache), strip after strip. Ring rows start an odd
   multiple of RING_PAD values apart (a strip row rounded up to a multiple of 2 RING_PAD, plus
   RING_PAD), so that they are never a power of two bytes apart (sharing the cache's sets, as
   they did at 8 KiB apart). */
#define STRIP 1024
#define RING_PAD 32

__kernel void blur_ring_u8(__global const uint* src, uint width, uint height,
                           __global const uint* q, uint w, uint border, __global ushort* ring,
                           __global uint* dst) {
    uint y0, y1;
    clpix_range(height, get_group_id(0), get_num_groups(0), &y0, &y1);
    if (y0 >= y1) return;
    uint taps = 2u * w + 1u;
    size_t n = 4 * (size_t)width;
    size_t sv = 4 * (size_t)min((uint)STRIP, width); /* values of a strip row */
    size_t ms = (sv + 2 * RING_PAD - 1) / (2 * RING_PAD) * (2 * RING_PAD) + RING_PAD;
    __global ushort* rg = ring + (size_t)get_group_id(0) * taps * ms;
    __global const uchar* sb = (__global const uchar*)src;
    long first = (long)y0 - (long)w; /* the virtual row in slot 0 */
    for (size_t jb = 0; jb < n; jb += sv) {
        size_t je = min(jb + sv, n);
        for (long v = first; v < (long)y1 + (long)w; ++v) {
            __global ushort* slot = rg + (size_t)((v - first) % taps) * ms;
            long r = blur_map(v, height, border);
            if (r < 0) {
                for (size_t j = 0; j < je - jb; ++j) slot[j] = 0;
            } else {
                hrow_u8(sb + (size_t)r * n, width, q, w, border, jb, je, slot);
            }
            long y = v - (long)w; /* the output row now complete */
            if (y >= (long)y0)
                vrow_u8_ring(rg, ms, je - jb, (uint)((y - (long)y0) % taps), taps, q, w,
                             (__global uchar*)dst + (size_t)y * n + jb);
        }
    }
}

__kernel void blur_ring_f32(__global const float* src, uint width, uint height,
                            __global const float* wt, uint w, uint border, __global float* ring,
                            __global float* dst) {
    uint y0, y1;
    clpix_range(height, get_group_id(0), get_num_groups(0), &y0, &y1);
    if (y0 >= y1) return;
    uint taps = 2u * w + 1u;
    size_t n = 4 * (size_t)width;
    size_t sv = 4 * (size_t)min((uint)STRIP, width); /* values of a strip row */
    size_t ms = (sv + 2 * RING_PAD - 1) / (2 * RING_PAD) * (2 * RING_PAD) + RING_PAD;
    __global float* rg = ring + (size_t)get_group_id(0) * taps * ms;
    long first = (long)y0 - (long)w;
    for (size_t jb = 0; jb < n; jb += sv) {
        size_t je = min(jb + sv, n);
        for (long v = first; v < (long)y1 + (long)w; ++v) {
            __global float* slot = rg + (size_t)((v - first) % taps) * ms;
            long r = blur_map(v, height, border);
            if (r < 0) {
                for (size_t j = 0; j < je - jb; ++j) slot[j] = 0.0f;
            } else {
                hrow_f32(src + (size_t)r * n, width, wt, w, border, jb, je, slot);
            }
            long y = v - (long)w;
            if (y >= (long)y0)
                vrow_f32_ring(rg, ms, je - jb, (uint)((y - (long)y0) % taps), taps, wt, w,
                              dst + (size_t)y * n + jb);
        }
    }
}

/* Two passes, for radii whose rings would not pay: every row filtered once into t. */
__kernel void blur_h_u8(__global const uint* src, uint width, uint height, __global const uint* q,
                        uint w, uint border, __global ushort* t) {
    uint y0, y1;
    clpix_range(height, get_group_id(0), get_num_groups(0), &y0, &y1);
    size_t n = 4 * (size_t)width;
    for (uint y = y0; y < y1; ++y)
        hrow_u8((__global const uchar*)src + y * n, width, q, w, border, 0, n, t + y * n);
}

__kernel void blur_h_f32(__global const float* src, uint width, uint height,
                         __global const float* wt, uint w, uint border, __global float* t) {
    uint y0, y1;
    clpix_range(height, get_group_id(0), get_num_groups(0), &y0, &y1);
    size_t n = 4 * (size_t)width;
    for (uint y = y0; y < y1; ++y) hrow_f32(src + y * n, width, wt, w, border, 0, n, t + y * n);
}

__kernel void blur_v_u8(__global const ushort* t, uint width, uint height, __global const uint* q,
                        uint w, uint border, __global uint* dst) {
    uint y0, y1;
    clpix_range(height, get_group_id(0), get_num_groups(0), &y0, &y1);
    size_t n = 4 * (size_t)width;
    __global uchar* ob = (__global uchar*)dst;
    for (uint y = y0; y < y1; ++y) {
        size_t j0 = 0;
        for (; j0 + BLK <= n; j0 += BLK) {
            uint16 a0 = (uint16)(0u), a1 = a0, a2 = a0, a3 = a0;
            for (uint i = 0; i <= 2u * w; ++i) {
                long r = blur_map((long)y + (long)i - (long)w, height, border);
                if (r < 0) continue;
                __global const ushort* p = t + (size_t)r * n + j0;
                uint qi = q[i];
                a0 += qi * LDS(p, 0);
                a1 += qi * LDS(p, 1);
                a2 += qi * LDS(p, 2);
                a3 += qi * LDS(p, 3);
            }
            __global uchar* o = ob + y * n + j0;
            ST16(uchar16, convert_uchar16((a0 + (1u << 23)) >> 24), 0, o);
            ST16(uchar16, convert_uchar16((a1 + (1u << 23)) >> 24), 1, o);
            ST16(uchar16, convert_uchar16((a2 + (1u << 23)) >> 24), 2, o);
            ST16(uchar16, convert_uchar16((a3 + (1u << 23)) >> 24), 3, o);
        }
        for (size_t j = j0; j < n; ++j) {
            uint acc = 0;
            for (uint i = 0; i <= 2u * w; ++i) {
                long r = blur_map((long)y + (long)i - (long)w, height, border);
                if (r >= 0) acc += q[i] * (uint)t[(size_t)r * n + j];
            }
            ob[y * n + j] = (uchar)((acc + (1u << 23)) >> 24);
        }
    }
}

__kernel void blur_v_f32(__global const float* t, uint width, uint height,
                         __global const float* wt, uint w, uint border, __global float* dst) {
    uint y0, y1;
    clpix_range(height, get_group_id(0), get_num_groups(0), &y0, &y1);
    size_t n = 4 * (size_t)width;
    for (uint y = y0; y < y1; ++y) {
        size_t j0 = 0;
        for (; j0 + BLK <= n; j0 += BLK) {
            float16 a0 = (float16)(0.0f), a1 = a0, a2 = a0, a3 = a0;
            for (uint i = 0; i <= 2u * w; ++i) {
                long r = blur_map((long)y + (long)i - (long)w, height, border);
                float wi = wt[i];
                if (r < 0) {
                    /* A zero row still adds fma(wt, 0, acc) (it turns -0 into +0). */
                    float16 z = (float16)(0.0f);
                    a0 = fma((float16)(wi), z, a0);
                    a1 = fma((float16)(wi), z, a1);
                    a2 = fma((float16)(wi), z, a2);
                    a3 = fma((float16)(wi), z, a3);
                    continue;
                }
                __global const float* p = t + (size_t)r * n + j0;
                a0 = fma((float16)(wi), vload16(0, p), a0);
                a1 = fma((float16)(wi), vload16(1, p), a1);
                a2 = fma((float16)(wi), vload16(2, p), a2);
                a3 = fma((float16)(wi), vload16(3, p), a3);
            }
            __global float* o = dst + y * n + j0;
            ST16(float16, a0, 0, o);
            ST16(float16, a1, 1, o);
            ST16(float16, a2, 2, o);
            ST16(float16, a3, 3, o);
        }
        for (size_t j = j0; j < n; ++j) {
            float acc = 0.0f;
            for (uint i = 0; i <= 2u * w; ++i) {
                long r = blur_map((long)y + (long)i - (long)w, height, border);
                float v = r >= 0 ? t[(size_t)r * n + j] : 0.0f;
                acc = fma(wt[i], v, acc);
            }
            dst[y * n + j] = acc;
        }
    }
}

#else /* GPUs: row tiles in local memory, several outputs per work-item */

#define TI 128u      /* work-items per tile */
#define TPX 4u       /* output pixels per work-item */
#define TW (TI * TPX)
#define VR 8         /* output rows per work-item of the vertical pass */

/* Loads the tile's TW + 2w pixels (x0 - w ..) into local memory, in as many steps as needed. */
__kernel __attribute__((reqd_work_group_size(128, 1, 1)))
void blur_h_u8(__global const uint* src, uint width, uint height, __global const uint* q, uint w,
               uint border, __global ushort* t, uint tiles, __local uint* tile) {
    uint lid = get_local_id(0);
    uint g = get_group_id(0);
    uint y = g / tiles;
    uint x0 = (g - y * tiles) * TW;
    __global const uint* row = src + (size_t)y * width;
    uint span = TW + 2u * w;
    for (uint k = lid; k < span; k += TI) {
        tile[k] = row_px(row, (long)x0 + (long)k - (long)w, width, border);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    uint4 acc[TPX];
    uint qc = q[w];
#pragma unroll
    for (uint j = 0; j < TPX; ++j) acc[j] = qc * unpack4(tile[lid + j * TI + w]);
    for (uint d = 1; d <= w; ++d) {
        uint qd = q[w + d];
#pragma unroll
        for (uint j = 0; j < TPX; ++j) {
            uint c = lid + j * TI + w;
            acc[j] += qd * (unpack4(tile[c - d]) + unpack4(tile[c + d]));
        }
    }
    __global ushort* out = t + (size_t)y * 4 * width;
#pragma unroll
    for (uint j = 0; j < TPX; ++j) {
        uint x = x0 + lid + j * TI;
        if (x < width) vstore4(convert_ushort4((acc[j] + 128u) >> 8), x, out);
    }
}

/* The same without local memory, for halos larger than the device's local memory. */
__kernel __attribute__((reqd_work_group_size(128, 1, 1)))
void blur_h_u8_direct(__global const uint* src, uint width, uint height, __global const uint* q,
                      uint w, uint border, __global ushort* t, uint tiles) {
    uint lid = get_local_id(0);
    uint g = get_group_id(0);
    uint y = g / tiles;
    uint x0 = (g - y * tiles) * TW;
    __global const uint* row = src + (size_t)y * width;
    __global ushort* out = t + (size_t)y * 4 * width;
    for (uint j = 0; j < TPX; ++j) {
        uint x = x0 + lid + j * TI;
        if (x >= width) continue;
        uint4 acc = (uint4)(0u);
        for (uint i = 0; i <= 2u * w; ++i) {
            long s = blur_map((long)x + (long)i - (long)w, width, border);
            if (s >= 0) acc += q[i] * unpack4(row[s]);
        }
        vstore4(convert_ushort4((acc + 128u) >> 8), x, out);
    }
}

/* One column, VR output rows per work-item; groups of 128 neighbouring columns (coalesced). */
__kernel __attribute__((reqd_work_group_size(128, 1, 1)))
void blur_v_u8(__global const ushort* t, uint width, uint height, __global const uint* q, uint w,
               uint border, __global uint* dst, uint xg) {
    uint g = get_group_id(0);
    uint yb = g / xg;
    uint x = (g - yb * xg) * TI + get_local_id(0);
    if (x >= width) return;
    long y0 = (long)yb * VR;
    uint4 acc[VR];
#pragma unroll
    for (int k = 0; k < VR; ++k) acc[k] = (uint4)(0u);
    int iw = (int)w;
    for (int j = -iw; j < VR + iw; ++j) {
        long p = y0 + j;
        long r = (p >= 0 && p < (long)height) ? p : blur_map(p, height, border);
        if (r < 0) continue;
        uint4 tv = convert_uint4(vload4((size_t)r * width + x, t));
#pragma unroll
        for (int k = 0; k < VR; ++k) {
            int i = j - k;
            if (i >= -iw && i <= iw) acc[k] += q[i + iw] * tv;
        }
    }
#pragma unroll
    for (int k = 0; k < VR; ++k) {
        long y = y0 + k;
        if (y < (long)height) dst[(size_t)y * width + x] = pack4((acc[k] + (1u << 23)) >> 24);
    }
}

__kernel __attribute__((reqd_work_group_size(128, 1, 1)))
void blur_h_f32(__global const float4* src, uint width, uint height, __global const float* wt,
                uint w, uint border, __global float4* t, uint tiles, __local float4* tile) {
    uint lid = get_local_id(0);
    uint g = get_group_id(0);
    uint y = g / tiles;
    uint x0 = (g - y * tiles) * TW;
    __global const float4* row = src + (size_t)y * width;
    uint span = TW + 2u * w;
    for (uint k = lid; k < span; k += TI) {
        long p = (long)x0 + (long)k - (long)w;
        long s = (p >= 0 && p < (long)width) ? p : blur_map(p, width, border);
        tile[k] = s < 0 ? (float4)(0.0f) : row[s];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    float4 acc[TPX];
#pragma unroll
    for (uint j = 0; j < TPX; ++j) acc[j] = (float4)(0.0f);
    for (uint i = 0; i <= 2u * w; ++i) {
        float wi = wt[i];
#pragma unroll
        for (uint j = 0; j < TPX; ++j) acc[j] = fma((float4)(wi), tile[lid + j * TI + i], acc[j]);
    }
    __global float4* out = t + (size_t)y * width;
#pragma unroll
    for (uint j = 0; j < TPX; ++j) {
        uint x = x0 + lid + j * TI;
        if (x < width) out[x] = acc[j];
    }
}

__kernel __attribute__((reqd_work_group_size(128, 1, 1)))
void blur_h_f32_direct(__global const float4* src, uint width, uint height,
                       __global const float* wt, uint w, uint border, __global float4* t,
                       uint tiles) {
    uint lid = get_local_id(0);
    uint g = get_group_id(0);
    uint y = g / tiles;
    uint x0 = (g - y * tiles) * TW;
    __global const float4* row = src + (size_t)y * width;
    __global float4* out = t + (size_t)y * width;
    for (uint j = 0; j < TPX; ++j) {
        uint x = x0 + lid + j * TI;
        if (x >= width) continue;
        float4 acc = (float4)(0.0f);
        for (uint i = 0; i <= 2u * w; ++i) {
            long s = blur_map((long)x + (long)i - (long)w, width, border);
            float4 v = s >= 0 ? row[s] : (float4)(0.0f);
            acc = fma(wt[i], v, acc);
        }
        out[x] = acc;
    }
}

__kernel __attribute__((reqd_work_group_size(128, 1, 1)))
void blur_v_f32(__global const float4* t, uint width, uint height, __global const float* wt,
                uint w, uint border, __global float4* dst, uint xg) {
    uint g = get_group_id(0);
    uint yb = g / xg;
    uint x = (g - yb * xg) * TI + get_local_id(0);
    if (x >= width) return;
    long y0 = (long)yb * VR;
    float4 acc[VR];
#pragma unroll
    for (int k = 0; k < VR; ++k) acc[k] = (float4)(0.0f);
    int iw = (int)w;
    for (int j = -iw; j < VR + iw; ++j) {
        long p = y0 + j;
        long r = (p >= 0 && p < (long)height) ? p : blur_map(p, height, border);
        float4 tv = r >= 0 ? t[(size_t)r * width + x] : (float4)(0.0f);
#pragma unroll
        for (int k = 0; k < VR; ++k) {
            int i = j - k;
            if (i >= -iw && i <= iw) acc[k] = fma((__typeof__(acc[k]))(wt[i + iw]), tv, acc[k]);
        }
    }
#pragma unroll
    for (int k = 0; k < VR; ++k) {
        long y = y0 + k;
        if (y < (long)height) dst[(size_t)y * width + x] = acc[k];
    }
}

#endif

/* Images in parts (bands of output rows, see blur.rs): the vertical pass of one band over a
   window of intermediate rows t (contiguous, rows + k - 1 of them), taps i0 .. i0 + k of the
   weights, so that a band can take its taps in several chunks. acc carries the running sum
   between chunks (reset when first); the last chunk writes the result to dst. The f32 sum is
   acc = fma(wt[i], t, acc) in the order of the taps, exactly as in one pass.
   Arguments: (t, n values a row, rows, weights, i0, k, acc, first, last, dst). */
#if CLPIX_CONTIGUOUS
/* CPU devices: one work-item per group walks a range of rows, in blocks of 64 values. */
__kernel void blur_band_v_u8(__global const ushort* t, uint n, uint rows, __global const uint* q,
                             uint i0, uint k, __global uint* acc, uint first, uint last,
                             __global uchar* dst) {
    uint y0, y1;
    clpix_range(rows, get_group_id(0), get_num_groups(0), &y0, &y1);
    for (size_t y = y0; y < y1; ++y) {
        size_t j0 = 0;
        for (; j0 + BLK <= n; j0 += BLK) {
            __global uint* ac = acc + y * n + j0;
            uint16 a0 = (uint16)(0u), a1 = a0, a2 = a0, a3 = a0;
            if (!first) {
                a0 = vload16(0, ac);
                a1 = vload16(1, ac);
                a2 = vload16(2, ac);
                a3 = vload16(3, ac);
            }
            for (uint i = 0; i < k; ++i) {
                __global const ushort* p = t + (y + i) * n + j0;
                uint qi = q[i0 + i];
                a0 += qi * LDS(p, 0);
                a1 += qi * LDS(p, 1);
                a2 += qi * LDS(p, 2);
                a3 += qi * LDS(p, 3);
            }
            if (last) {
                __global uchar* o = dst + y * n + j0;
                ST16(uchar16, convert_uchar16((a0 + (1u << 23)) >> 24), 0, o);
                ST16(uchar16, convert_uchar16((a1 + (1u << 23)) >> 24), 1, o);
                ST16(uchar16, convert_uchar16((a2 + (1u << 23)) >> 24), 2, o);
                ST16(uchar16, convert_uchar16((a3 + (1u << 23)) >> 24), 3, o);
            } else {
                ST16(uint16, a0, 0, ac);
                ST16(uint16, a1, 1, ac);
                ST16(uint16, a2, 2, ac);
                ST16(uint16, a3, 3, ac);
            }
        }
        for (size_t j = j0; j < n; ++j) {
            size_t idx = y * n + j;
            uint s = first ? 0u : acc[idx];
            for (uint i = 0; i < k; ++i) s += q[i0 + i] * (uint)t[(y + i) * n + j];
            if (last)
                dst[idx] = (uchar)((s + (1u << 23)) >> 24);
            else
                acc[idx] = s;
        }
    }
}

__kernel void blur_band_v_f32(__global const float* t, uint n, uint rows,
                              __global const float* wt, uint i0, uint k, __global float* acc,
                              uint first, uint last, __global float* dst) {
    uint y0, y1;
    clpix_range(rows, get_group_id(0), get_num_groups(0), &y0, &y1);
    for (size_t y = y0; y < y1; ++y) {
        __global float* out = (last ? dst : acc) + y * n;
        size_t j0 = 0;
        for (; j0 + BLK <= n; j0 += BLK) {
            __global const float* ac = acc + y * n + j0;
            float16 a0 = (float16)(0.0f), a1 = a0, a2 = a0, a3 = a0;
            if (!first) {
                a0 = vload16(0, ac);
                a1 = vload16(1, ac);
                a2 = vload16(2, ac);
                a3 = vload16(3, ac);
            }
            for (uint i = 0; i < k; ++i) {
                __global const float* p = t + (y + i) * n + j0;
                float wi = wt[i0 + i];
                a0 = fma((float16)(wi), vload16(0, p), a0);
                a1 = fma((float16)(wi), vload16(1, p), a1);
                a2 = fma((float16)(wi), vload16(2, p), a2);
                a3 = fma((float16)(wi), vload16(3, p), a3);
            }
            __global float* o = out + j0;
            ST16(float16, a0, 0, o);
            ST16(float16, a1, 1, o);
            ST16(float16, a2, 2, o);
            ST16(float16, a3, 3, o);
        }
        for (size_t j = j0; j < n; ++j) {
            float s = first ? 0.0f : acc[y * n + j];
            for (uint i = 0; i < k; ++i) s = fma(wt[i0 + i], t[(y + i) * n + j], s);
            out[j] = s;
        }
    }
}

#else
/* GPUs: one value per work-item, grid-stride (neighbouring work-items, neighbouring values). */
__kernel void blur_band_v_u8(__global const ushort* t, uint n, uint rows, __global const uint* q,
                             uint i0, uint k, __global uint* acc, uint first, uint last,
                             __global uchar* dst) {
    size_t total = (size_t)n * rows;
    for (size_t idx = get_global_id(0); idx < total; idx += get_global_size(0)) {
        size_t y = idx / n;
        size_t j = idx - y * n;
        uint s = first ? 0u : acc[idx];
        __global const ushort* p = t + y * n + j;
        for (uint i = 0; i < k; ++i) s += q[i0 + i] * (uint)p[(size_t)i * n];
        if (last)
            dst[idx] = (uchar)((s + (1u << 23)) >> 24);
        else
            acc[idx] = s;
    }
}

__kernel void blur_band_v_f32(__global const float* t, uint n, uint rows,
                              __global const float* wt, uint i0, uint k, __global float* acc,
                              uint first, uint last, __global float* dst) {
    size_t total = (size_t)n * rows;
    for (size_t idx = get_global_id(0); idx < total; idx += get_global_size(0)) {
        size_t y = idx / n;
        size_t j = idx - y * n;
        float s = first ? 0.0f : acc[idx];
        __global const float* p = t + y * n + j;
        for (uint i = 0; i < k; ++i) s = fma(wt[i0 + i], p[(size_t)i * n], s);
        if (last)
            dst[idx] = s;
        else
            acc[idx] = s;
    }
}
#endif

#endif /* !BLUR_W */
