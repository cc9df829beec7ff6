/* Separable Gaussian blur: horizontal pass into an intermediate buffer, then vertical pass.
 *
 * RGBA8 (SPEC.md): integer weights q (sum 65536, symmetric); horizontal h = sum q_i p(x+i)
 * as uint, t = (h + 128) >> 8 as ushort (4 per pixel); vertical v = sum q_i t(y+i) as uint,
 * out = (v + 2^23) >> 24. Integer sums are exact, so any order gives the same bits.
 * f32: acc = 0; acc = acc + wt[i] * x(pos + i - w) for i = 0..2w, in that order, no FMA.
 *
 * Borders (border argument): 0 Clamp, 1 Reflect (no edge repeat, repeated; 0 for n = 1),
 * 2 Wrap, 3 Zero (a zero pixel, which the f32 path still adds as wt * 0).
 *
 * Arguments, all kernels: (src, width, height, weights, w, border, dst[, groups per row][, tile]).
 */
#pragma OPENCL FP_CONTRACT OFF

/* The source coordinate of p on a side of n, or -1 for a zero pixel. */
inline long blur_map(long p, long n, uint border) {
    if (p >= 0 && p < n) return p;
    if (border == 0u) return p < 0 ? 0 : n - 1;
    if (border == 3u) return -1;
    if (border == 2u) {
        long m = p % n;
        return m < 0 ? m + n : m;
    }
    if (n == 1) return 0;
    long period = 2 * (n - 1);
    long m = p % period;
    if (m < 0) m += period;
    return m >= n ? period - m : m;
}

inline uint4 unpack4(uint p) {
    return (uint4)(p & 0xffu, (p >> 8) & 0xffu, (p >> 16) & 0xffu, p >> 24);
}
inline uint pack4(uint4 v) { return v.x | (v.y << 8) | (v.z << 16) | (v.w << 24); }

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
        acc = acc + wt[i] * v;
    }
    return acc;
}

#if CLPIX_CONTIGUOUS

/* CPU devices: one work-item per group walks a range of rows, in blocks of 64 channel values
   (loops the compiler vectorises), the edges through blur_map. */
#define BLK 64

__kernel void blur_h_u8(__global const uint* src, uint width, uint height, __global const uint* q,
                        uint w, uint border, __global ushort* t) {
    uint y0, y1;
    clpix_range(height, get_group_id(0), get_num_groups(0), &y0, &y1);
    size_t n = 4 * (size_t)width;
    size_t a = min((size_t)4 * w, n);
    size_t b = width > 2u * w ? 4 * (size_t)(width - w) : a;
    uint qc = q[w];
    for (uint y = y0; y < y1; ++y) {
        __global const uchar* row = (__global const uchar*)src + y * n;
        __global ushort* out = t + y * n;
        for (size_t j = 0; j < a; ++j) out[j] = h_at_u8(row, width, j, q, w, border);
        size_t j0 = a;
        for (; j0 + BLK <= b; j0 += BLK) {
            uint acc[BLK];
            for (uint k = 0; k < BLK; ++k) acc[k] = qc * (uint)row[j0 + k];
            for (uint d = 1; d <= w; ++d) {
                uint qd = q[w + d];
                __global const uchar* lo = row + j0 - 4 * d;
                __global const uchar* hi = row + j0 + 4 * d;
                for (uint k = 0; k < BLK; ++k) acc[k] += qd * ((uint)lo[k] + (uint)hi[k]);
            }
            for (uint k = 0; k < BLK; ++k) out[j0 + k] = (ushort)((acc[k] + 128u) >> 8);
        }
        for (size_t j = j0; j < n; ++j) out[j] = h_at_u8(row, width, j, q, w, border);
    }
}

__kernel void blur_v_u8(__global const ushort* t, uint width, uint height, __global const uint* q,
                        uint w, uint border, __global uint* dst) {
    uint y0, y1;
    clpix_range(height, get_group_id(0), get_num_groups(0), &y0, &y1);
    size_t n = 4 * (size_t)width;
    __global uchar* ob = (__global uchar*)dst;
    for (uint y = y0; y < y1; ++y) {
        for (size_t j0 = 0; j0 < n; j0 += BLK) {
            uint len = (uint)min((size_t)BLK, n - j0);
            uint acc[BLK];
            for (uint k = 0; k < BLK; ++k) acc[k] = 0;
            for (uint i = 0; i <= 2u * w; ++i) {
                long r = blur_map((long)y + (long)i - (long)w, height, border);
                if (r < 0) continue;
                __global const ushort* rp = t + (size_t)r * n + j0;
                uint qi = q[i];
                if (len == BLK) {
                    for (uint k = 0; k < BLK; ++k) acc[k] += qi * (uint)rp[k];
                } else {
                    for (uint k = 0; k < len; ++k) acc[k] += qi * (uint)rp[k];
                }
            }
            for (uint k = 0; k < len; ++k)
                ob[y * n + j0 + k] = (uchar)((acc[k] + (1u << 23)) >> 24);
        }
    }
}

__kernel void blur_h_f32(__global const float* src, uint width, uint height,
                         __global const float* wt, uint w, uint border, __global float* t) {
    uint y0, y1;
    clpix_range(height, get_group_id(0), get_num_groups(0), &y0, &y1);
    size_t n = 4 * (size_t)width;
    size_t a = min((size_t)4 * w, n);
    size_t b = width > 2u * w ? 4 * (size_t)(width - w) : a;
    for (uint y = y0; y < y1; ++y) {
        __global const float* row = src + y * n;
        __global float* out = t + y * n;
        for (size_t j = 0; j < a; ++j) out[j] = h_at_f32(row, width, j, wt, w, border);
        size_t j0 = a;
        for (; j0 + BLK <= b; j0 += BLK) {
            float acc[BLK];
            for (uint k = 0; k < BLK; ++k) acc[k] = 0.0f;
            for (uint i = 0; i <= 2u * w; ++i) {
                float wi = wt[i];
                __global const float* p = row + j0 + 4 * (long)i - 4 * (long)w;
                for (uint k = 0; k < BLK; ++k) acc[k] = acc[k] + wi * p[k];
            }
            for (uint k = 0; k < BLK; ++k) out[j0 + k] = acc[k];
        }
        for (size_t j = j0; j < n; ++j) out[j] = h_at_f32(row, width, j, wt, w, border);
    }
}

__kernel void blur_v_f32(__global const float* t, uint width, uint height,
                         __global const float* wt, uint w, uint border, __global float* dst) {
    uint y0, y1;
    clpix_range(height, get_group_id(0), get_num_groups(0), &y0, &y1);
    size_t n = 4 * (size_t)width;
    for (uint y = y0; y < y1; ++y) {
        for (size_t j0 = 0; j0 < n; j0 += BLK) {
            uint len = (uint)min((size_t)BLK, n - j0);
            float acc[BLK];
            for (uint k = 0; k < BLK; ++k) acc[k] = 0.0f;
            for (uint i = 0; i <= 2u * w; ++i) {
                long r = blur_map((long)y + (long)i - (long)w, height, border);
                float wi = wt[i];
                if (r < 0) {
                    float z = wi * 0.0f;
                    for (uint k = 0; k < BLK; ++k) acc[k] = acc[k] + z;
                    continue;
                }
                __global const float* rp = t + (size_t)r * n + j0;
                if (len == BLK) {
                    for (uint k = 0; k < BLK; ++k) acc[k] = acc[k] + wi * rp[k];
                } else {
                    for (uint k = 0; k < len; ++k) acc[k] = acc[k] + wi * rp[k];
                }
            }
            for (uint k = 0; k < len; ++k) dst[y * n + j0 + k] = acc[k];
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
        long p = (long)x0 + (long)k - (long)w;
        long s = (p >= 0 && p < (long)width) ? p : blur_map(p, width, border);
        tile[k] = s < 0 ? 0u : row[s];
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
        for (uint j = 0; j < TPX; ++j) acc[j] = acc[j] + wi * tile[lid + j * TI + i];
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
            acc = acc + wt[i] * v;
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
            if (i >= -iw && i <= iw) acc[k] = acc[k] + wt[i + iw] * tv;
        }
    }
#pragma unroll
    for (int k = 0; k < VR; ++k) {
        long y = y0 + k;
        if (y < (long)height) dst[(size_t)y * width + x] = acc[k];
    }
}

#endif
