/* The f32 blur on GPUs, both passes in one kernel (pasted after blur.cl, whose blur_map and
 * blur_row it uses; the generic program only). A work-group of 128 work-items takes a tile of
 * FF_W x FF_H output pixels: the horizontal pass of the FF_H + 2w rows the tile needs (through
 * the borders; a zero row is all zeros) into local memory, then the vertical pass from there.
 * Each value is the same sequence of fused multiply-adds as in blur_h_f32 and blur_v_f32
 * (taps in order), so the bits are the two passes' bits; but the intermediate image never goes
 * to global memory: the image is read once (from the cache where tiles overlap) and written
 * once, where the two passes move it four times. The host takes it for w up to FF_MAX_W where
 * (FF_H + 2w) * FF_W float4s fit the device's local memory (blur/cl_radius.rs).
 */
#if !defined(BLUR_W) && !CLPIX_CONTIGUOUS
#define FF_W 32u  /* output pixels a tile row */
#define FF_H 32u  /* output rows a tile */
#define FF_T 128u /* work-items */

__kernel __attribute__((reqd_work_group_size(128, 1, 1)))
void blur_fused_f32(__global const float4* src, uint width, uint height,
                    __global const float* wt, uint w, uint border, __global float4* dst,
                    uint tiles_x, __local float4* hs) {
    uint lid = get_local_id(0), g = get_group_id(0);
    uint ty = g / tiles_x;
    uint x0 = (g - ty * tiles_x) * FF_W, y0 = ty * FF_H;
    uint rows = FF_H + 2u * w;
    /* The horizontal pass of image rows y0 - w .. y0 + FF_H + w - 1 (row r of hs). */
    for (uint k = lid; k < rows * FF_W; k += FF_T) {
        uint r = k / FF_W, c = k - r * FF_W;
        uint x = x0 + c;
        long yy = blur_row((int)(y0 + r) - (int)w, height, border);
        float4 acc = (float4)(0.0f);
        if (yy >= 0 && x < width) {
            __global const float4* row = src + (size_t)yy * width;
            for (uint i = 0; i <= 2u * w; ++i) {
                long p = (long)x + (long)i - (long)w;
                long s = (p >= 0 && p < (long)width) ? p : blur_map(p, width, border);
                float4 v = s >= 0 ? row[s] : (float4)(0.0f);
                acc = fma((float4)(wt[i]), v, acc);
            }
        }
        hs[k] = acc;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    /* The vertical pass: output row r of the tile sums hs rows r .. r + 2w. */
    for (uint k = lid; k < FF_H * FF_W; k += FF_T) {
        uint r = k / FF_W, c = k - r * FF_W;
        uint x = x0 + c, y = y0 + r;
        float4 acc = (float4)(0.0f);
        for (uint i = 0; i <= 2u * w; ++i)
            acc = fma((float4)(wt[i]), hs[(r + i) * FF_W + c], acc);
        if (x < width && y < height) dst[(size_t)y * width + x] = acc;
    }
}
#endif

/* The f32 blur on GPUs built per radius (BLUR_W, with BLUR_F32CH channels a work-item: 1, 2
 * or 4, BLUR_F32CPX columns a work-item, FX work-items apart, and BLUR_F32FX work-items a
 * group): both passes in one kernel, the 2W + 1 output rows in flight in registers, as
 * blur_fused_reg_u8 (blur_radius.cl) does for RGBA8. A group owns RP = FX * CPX * CH / 4
 * neighbouring pixels and walks a strip of rows: each input row's RP + 2W
 * pixels (through the borders; a zero row is all zeros) go into local memory
 * (double-buffered, loaded into registers during the previous row's arithmetic), each
 * work-item filters its channels horizontally, taps in order, and adds the value times wt[k]
 * to the accumulator of every output row it is tap k of; the oldest, then complete, is
 * written. Each output is the same sequence of fused multiply-adds as the two passes' (rows
 * come in order, so each accumulator takes its taps in order), so the bits are theirs. 32
 * bytes of DRAM traffic a pixel, where the two passes move 64. */
#if defined(BLUR_W) && defined(BLUR_F32CH)
#define RCH ((uint)BLUR_F32CH)
#define RVP (4u / RCH)                    /* vectors a pixel */
#define RFX ((uint)BLUR_F32FX)            /* work-items a group */
#ifndef BLUR_F32CPX
#define BLUR_F32CPX 1
#endif
#define RCPX ((uint)BLUR_F32CPX)          /* columns (vectors of a row) a work-item */
#define RPX (RFX * RCPX / RVP)            /* output pixels a group */
#define RSPAN ((RPX + 2u * W) * RVP)      /* vectors of an input row in local memory */
#define RK ((RSPAN + RFX - 1u) / RFX)     /* of them a work-item loads */
#if BLUR_F32CH == 4
typedef float4 rvec;
#elif BLUR_F32CH == 2
typedef float2 rvec;
#else
typedef float rvec;
#endif

/* The RSPAN vectors of input row r (pixels x0 - W ..) a group needs, RK a work-item. */
inline void f32_reg_load(__global const rvec* src, uint width, uint height, uint border,
                         uint x0, long r, rvec* pre) {
    uint lid = get_local_id(0);
    long rs = (r >= 0 && r < (long)height) ? r : blur_map(r, height, border);
    __global const rvec* row = src + (size_t)(rs < 0 ? 0 : rs) * width * RVP;
#pragma unroll
    for (uint m = 0; m < RK; ++m) {
        uint k = lid + m * RFX;
        uint px = k / RVP;
        long p = (long)x0 + (long)px - (long)W;
        rvec v = (rvec)(0.0f);
        if (k < RSPAN && rs >= 0) {
            long s = (p >= 0 && p < (long)width) ? p : blur_map(p, width, border);
            if (s >= 0) v = row[(size_t)s * RVP + (k - px * RVP)];
        }
        pre[m] = v;
    }
}

__kernel __attribute__((reqd_work_group_size(BLUR_F32FX, 1, 1)))
void blur_fused_reg_f32(__global const rvec* src, uint width, uint height,
                        __constant float* wt, uint w, uint border, __global rvec* dst, uint xg,
                        uint strip, __local rvec* tile) {
    uint lid = get_local_id(0);
    uint g = get_group_id(0);
    uint sy = g / xg;
    uint x0 = (g - sy * xg) * RPX;
    long y0 = (long)sy * strip;
    uint rows = (uint)(min(y0 + (long)strip, (long)height) - y0);
    /* Whole runs of TAPS input rows (no barrier under a condition); rows past the strip are
       read but not written. */
    uint nin = (rows + 2u * W + TAPS - 1u) / TAPS * TAPS;
    float wk[TAPS];
    rvec acc[RCPX][TAPS];
#pragma unroll
    for (uint k = 0; k < TAPS; ++k) {
        wk[k] = wt[k];
#pragma unroll
        for (uint c = 0; c < RCPX; ++c) acc[c][k] = (rvec)(0.0f);
    }
    rvec pre[RK];
    f32_reg_load(src, width, height, border, x0, y0 - (long)W, pre);
    for (uint j0 = 0; j0 < nin; j0 += TAPS) {
#pragma unroll
        for (uint u = 0; u < TAPS; ++u) {
            uint j = j0 + u;
            __local rvec* tl = tile + (j & 1u) * RSPAN;
#pragma unroll
            for (uint m = 0; m < RK; ++m) {
                uint k = lid + m * RFX;
                if (k < RSPAN) tl[k] = pre[m];
            }
            barrier(CLK_LOCAL_MEM_FENCE);
            f32_reg_load(src, width, height, border, x0, y0 - (long)W + (long)j + 1, pre);
            /* Column col = lid + c * RFX of the group (vectors of a row: coalesced). */
#pragma unroll
            for (uint c = 0; c < RCPX; ++c) {
                uint col = lid + c * RFX;
                rvec h = (rvec)(0.0f);
#pragma unroll
                for (uint i = 0; i < TAPS; ++i) h = fma((rvec)(wk[i]), tl[col + i * RVP], h);
                /* Input row j is tap k of output row j - k (slot (j - k) % TAPS; j0 % TAPS
                   is 0). */
#pragma unroll
                for (uint k = 0; k < TAPS; ++k) {
                    uint s = (u + TAPS - k) % TAPS;
                    acc[c][s] = fma((rvec)(wk[k]), h, acc[c][s]);
                }
                /* Output row j - 2W (slot (u + 1) % TAPS) is complete; rows before the strip
                   (j < 2W) only clear their slot. */
                rvec done = acc[c][(u + 1u) % TAPS];
                acc[c][(u + 1u) % TAPS] = (rvec)(0.0f);
                if (j >= 2u * W && j - 2u * W < rows && x0 + col / RVP < width)
                    dst[((size_t)(y0 + (long)j - 2 * (long)W) * width + x0) * RVP + col] = done;
            }
        }
    }
}
#endif

/* The f32 two passes built per radius (BLUR_W with BLUR_F32VR, the output rows a work-item
 * of the vertical pass), for radii whose 2W + 1 accumulators a pixel would crowd the
 * registers of blur_fused_reg_f32. Each value is the same sequence of fused multiply-adds as
 * in blur_h_f32 and blur_v_f32, taps in order.
 * Horizontal (blur_h_rad_f32): a group of 128 work-items filters 256 pixels of one row. The
 * row's 256 + 2W pixels go into local memory as four planes, one a channel; work-item t
 * filters 8 neighbouring pixels of one channel from a window of 8 + 2W values streamed 4 at
 * a time, each value added to the outputs it is a tap of; the results go back through planes
 * so that the row is written as whole pixels.
 * Vertical (blur_v_rad_f32): work-item t of 64 takes one pixel column and VR output rows,
 * reading the VR + 2W rows they need once each (from the cache where neighbouring groups'
 * rows overlap), each added to the outputs it is a tap of. */
#ifdef BLUR_W
/* The horizontal filter of 8 neighbouring values of one channel from the local float4 window
   WIN (Q float4s, values streamed 4 at a time), weights WT[k] (private or constant memory: a
   macro), taps in order, sums into ACC[8]. */
#define F32_WINDOW8(WIN, Q, WT, ACC)                                                       \
    do {                                                                                   \
        _Pragma("unroll") for (uint i_ = 0; i_ < 8u; ++i_) (ACC)[i_] = 0.0f;               \
        _Pragma("unroll") for (uint q_ = 0; q_ < (Q); ++q_) {                              \
            float4 f_ = (WIN)[q_];                                                         \
            float v_[4] = {f_.x, f_.y, f_.z, f_.w};                                        \
            _Pragma("unroll") for (uint e_ = 0; e_ < 4u; ++e_) {                           \
                uint k_ = 4u * q_ + e_; /* window position: tap k_ - i_ of output i_ */    \
                _Pragma("unroll") for (uint i_ = 0; i_ < 8u; ++i_)                         \
                    if (k_ >= i_ && k_ - i_ <= 2u * W)                                     \
                        (ACC)[i_] = fma((WT)[k_ - i_], v_[e_], (ACC)[i_]);                 \
            }                                                                              \
        }                                                                                  \
    } while (0)
#endif

#if defined(BLUR_W) && defined(BLUR_F32VR)
#define HRT 128u                              /* work-items of a horizontal group */
#define HRPX 256u                             /* its output pixels, 8 a work-item */
#define HRQ ((2u * W + 11u) / 4u)             /* float4s of a work-item's window */
#define HRPL0 (HRPX + 4u * ((W + 1u) / 2u))
/* Floats of an input plane: 4 more than a multiple of 8, so that the two planes a quarter
   warp reads lie in different banks. */
#define HRPL (HRPL0 + ((HRPL0 % 8u) == 0u ? 4u : 0u))
#define HRHS (HRPX + 4u)                      /* floats of a result plane, likewise */
#define HRK ((HRPL + HRT - 1u) / HRT)         /* input pixels a work-item loads */
#define VRR ((uint)BLUR_F32VR)

__kernel __attribute__((reqd_work_group_size(128, 1, 1)))
void blur_h_rad_f32(__global const float4* src, uint width, uint height,
                    __constant float* wt, uint w, uint border, __global float4* t,
                    uint xg, __local float4* lm4) {
    __local float* in = (__local float*)lm4;  /* 4 planes of HRPL */
    __local float* hb = in + 4u * HRPL;       /* 4 planes of HRHS */
    uint lid = get_local_id(0);
    uint g = get_group_id(0);
    uint y = g / xg;
    uint x0 = (g - y * xg) * HRPX;
    __global const float4* row = src + (size_t)y * width;
#pragma unroll
    for (uint m = 0; m < HRK; ++m) {
        uint k = lid + m * HRT;
        if (k < HRPL) {
            long p = (long)x0 + (long)k - (long)W;
            long s = (p >= 0 && p < (long)width) ? p : blur_map(p, width, border);
            float4 v = s >= 0 ? row[s] : (float4)(0.0f);
            in[k] = v.x;
            in[HRPL + k] = v.y;
            in[2u * HRPL + k] = v.z;
            in[3u * HRPL + k] = v.w;
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    /* Lane l of a warp: channel (l / 4) % 4, block of 8 pixels l % 4 + 4 (l / 16): a quarter
       warp reads 4 neighbouring blocks of two planes. */
    uint lane = lid & 31u;
    uint c = (lane >> 2) & 3u;
    uint hp = 8u * ((lid >> 5) * 8u + (lane & 3u) + 4u * (lane >> 4));
    __local const float4* win = (__local const float4*)(in + c * HRPL + hp);
    float acc[8];
    F32_WINDOW8(win, HRQ, wt, acc);
    __local float4* hq = (__local float4*)(hb + c * HRHS + hp);
    hq[0] = (float4)(acc[0], acc[1], acc[2], acc[3]);
    hq[1] = (float4)(acc[4], acc[5], acc[6], acc[7]);
    barrier(CLK_LOCAL_MEM_FENCE);
    __global float4* out = t + (size_t)y * width;
#pragma unroll
    for (uint m = 0; m < HRPX / HRT; ++m) {
        uint k = lid + m * HRT;
        if (x0 + k < width)
            out[x0 + k] = (float4)(hb[k], hb[HRHS + k], hb[2u * HRHS + k], hb[3u * HRHS + k]);
    }
}

/* Pixel x of row p of t through the borders (a zero pixel for a zero row). */
inline float4 f32_rad_row(__global const float4* t, uint width, uint height, uint border,
                          uint x, long p) {
    long r = (p >= 0 && p < (long)height) ? p : blur_map(p, height, border);
    return r >= 0 ? t[(size_t)r * width + x] : (float4)(0.0f);
}

__kernel __attribute__((reqd_work_group_size(64, 1, 1)))
void blur_v_rad_f32(__global const float4* t, uint width, uint height, __constant float* wt,
                    uint w, uint border, __global float4* dst, uint xg) {
    uint g = get_group_id(0);
    uint yb = g / xg;
    uint x = (g - yb * xg) * 64u + get_local_id(0);
    if (x >= width) return;
    long y0 = (long)yb * VRR;
    float4 acc[VRR];
#pragma unroll
    for (uint k = 0; k < VRR; ++k) acc[k] = (float4)(0.0f);
#pragma unroll
    for (uint j = 0; j < VRR + 2u * W; ++j) {
        float4 v = f32_rad_row(t, width, height, border, x, y0 + (long)j - (long)W);
        /* Row j is tap j - k of output row k. */
#pragma unroll
        for (uint k = 0; k < VRR; ++k)
            if (j >= k && j - k <= 2u * W) acc[k] = fma((float4)(wt[j - k]), v, acc[k]);
    }
#pragma unroll
    for (uint k = 0; k < VRR; ++k) {
        long y = y0 + k;
        if (y < (long)height) dst[(size_t)y * width + x] = acc[k];
    }
}
#endif

/* The f32 vertical pass built per radius walking strips (BLUR_F32VS gives VSR): work-item l of
 * 128 takes one float lane (a channel of a pixel: coalesced) and a strip of output rows, in
 * blocks of VSR rows: a window of the VSR + 2W input rows they need in registers, the next
 * block's VSR rows loaded during this block's arithmetic, the window shifted by VSR after it.
 * Each input value is read about once (where blur_v_rad_f32 reads VR + 2W rows for VR
 * outputs), and each output is the same fused multiply-adds, taps in order. */
#if defined(BLUR_W) && defined(BLUR_F32VS)
#define VSR ((uint)BLUR_F32VS)
#define VSWIN (VSR + 2u * W)

/* Lane value of row p of t through the borders (0 for a zero row); t points at the lane. */
inline float f32_vs_row(__global const float* t, uint lanes, uint height, uint border, int p) {
    long r = blur_row(p, height, border);
    return r < 0 ? 0.0f : t[(size_t)r * lanes];
}

__kernel __attribute__((reqd_work_group_size(128, 1, 1)))
void blur_vs_rad_f32(__global const float* t, uint width, uint height, __constant float* wt,
                     uint w, uint border, __global float* dst, uint xg, uint strip) {
    uint g = get_group_id(0);
    uint sy = g / xg;
    uint c = (g - sy * xg) * 128u + get_local_id(0);
    uint lanes = width * 4u;
    if (c >= lanes) return;
    t += c;
    dst += c;
    uint y0 = sy * strip;
    uint rows = min(strip, height - y0);
    int top = (int)y0 - (int)W; /* input row 0 */
    float wk[2u * W + 1u];
#pragma unroll
    for (uint k = 0; k <= 2u * W; ++k) wk[k] = wt[k];
    float x[VSWIN];
    float nx[VSR];
#pragma unroll
    for (uint u = 0; u < 2u * W; ++u) x[u] = f32_vs_row(t, lanes, height, border, top + (int)u);
#pragma unroll
    for (uint i = 0; i < VSR; ++i)
        nx[i] = f32_vs_row(t, lanes, height, border, top + (int)(2u * W + i));
    __global float* out = dst + (size_t)y0 * lanes;
    for (uint o = 0; o < rows; o += VSR) {
#pragma unroll
        for (uint i = 0; i < VSR; ++i) x[2u * W + i] = nx[i];
        if (o + VSR < rows) {
#pragma unroll
            for (uint i = 0; i < VSR; ++i)
                nx[i] = f32_vs_row(t, lanes, height, border, top + (int)(o + VSR + 2u * W + i));
        }
#pragma unroll
        for (uint i = 0; i < VSR; ++i) {
            float acc = 0.0f;
#pragma unroll
            for (uint k = 0; k <= 2u * W; ++k) acc = fma(wk[k], x[i + k], acc);
            if (o + i < rows) out[(size_t)(o + i) * lanes] = acc;
        }
#pragma unroll
        for (uint k = 0; k < 2u * W; ++k) x[k] = x[k + VSR];
    }
}
#endif

/* The f32 blur in one kernel built per radius, in column bands (BLUR_F32BAND; GPUs): a group
 * of FB_T = 256 work-items owns FB_X = 64 neighbouring pixels and a strip of output rows, and
 * walks the strip's input rows FB_R = 8 at a time (a step):
 * 1. the step's rows (FB_X + 2W pixels each, through the borders; loaded into registers during
 *    the previous step) go into local memory as channel planes;
 * 2. horizontal: warp r filters row r, each work-item 8 neighbouring pixels of one channel
 *    from a window streamed 4 values at a time (as blur_h_rad_f32), into filtered planes;
 * 3. vertical: work-item l takes float lane l of the band (channel l % 4 of pixel l / 4), keeps
 *    the last FB_R + 2W filtered values of its lane in registers, shifted step by step, and
 *    writes the FB_R output rows the step completes (coalesced).
 * Two barriers a step. Each output is the same fused multiply-adds, taps in order, as the two
 * passes', but the intermediate image never leaves the chip: 32 bytes of DRAM traffic a pixel. */
#if defined(BLUR_W) && defined(BLUR_F32BAND)
#define FB_R 8u
#define FB_X 64u
#define FB_T 256u
#define FB_SPAN (FB_X + 2u * W)
#define FB_TS0 ((FB_SPAN + 3u) / 4u * 4u)
/* Floats of an input plane: 4 more than a multiple of 8, so that the two planes a quarter warp
   reads lie in different banks. */
#define FB_TS (FB_TS0 + ((FB_TS0 % 8u) == 0u ? 4u : 0u))
/* Floats of a filtered plane: 8 more than a multiple of 32, so that the vertical reads of a
   warp (8 pixels, 4 channels) hit 32 banks. */
#define FB_FS 72u
#define FB_K ((FB_R * FB_SPAN + FB_T - 1u) / FB_T) /* input pixels a work-item loads a step */
#define FB_Q ((2u * W + 11u) / 4u)                 /* float4s of a horizontal window */
#define FB_WIN (FB_R + 2u * W)

/* The step's input pixels of this work-item: element lid + m FB_T of the FB_R x FB_SPAN
   block, row rr[m] from image row y, source column sx[m] (-1: a zero pixel or none). */
inline void fb_load(__global const float4* src, uint width, uint height, uint border,
                    const int* sx, const uint* rr, int y, float4* pre) {
#pragma unroll
    for (uint m = 0; m < FB_K; ++m) {
        long ry = blur_row(y + (int)rr[m], height, border);
        pre[m] = (ry >= 0 && sx[m] >= 0) ? src[(size_t)ry * width + (uint)sx[m]]
                                         : (float4)(0.0f);
    }
}

__kernel __attribute__((reqd_work_group_size(256, 1, 1)))
void blur_fused_band_f32(__global const float4* src, uint width, uint height,
                         __constant float* wt, uint w, uint border, __global float* dst,
                         uint xg, uint strip) {
    /* Declared as float4s: their float4 accesses need 16-byte alignment (NVIDIA faults). */
    __local float4 tin4[FB_R * FB_TS];
    __local float4 hf4[FB_R * FB_FS];
    __local float* tin = (__local float*)tin4;
    __local float* hf = (__local float*)hf4;
    uint lid = get_local_id(0);
    uint g = get_group_id(0);
    uint sy = g / xg;
    uint x0 = (g - sy * xg) * FB_X;
    uint y0 = sy * strip;
    uint rows = min(strip, height - y0);
    uint steps = (rows + 2u * W + FB_R - 1u) / FB_R;
    int top = (int)y0 - (int)W; /* the strip's first input row */
    float wk[2u * W + 1u];
#pragma unroll
    for (uint k = 0; k <= 2u * W; ++k) wk[k] = wt[k];
    int sx[FB_K];
    uint rr[FB_K];
    uint kk[FB_K];
#pragma unroll
    for (uint m = 0; m < FB_K; ++m) {
        uint e = lid + m * FB_T;
        uint r = e / FB_SPAN;
        uint k = e - r * FB_SPAN;
        int p = (int)(x0 + k) - (int)W;
        long sp = (uint)p < width ? (long)p : blur_map(p, width, border);
        sx[m] = e < FB_R * FB_SPAN ? (int)sp : -1;
        rr[m] = e < FB_R * FB_SPAN ? r : 0u;
        kk[m] = k;
    }
    /* Horizontal: warp r, channel c, block b of 8 pixels (a quarter warp reads 4 neighbouring
       blocks of two planes). */
    uint hr = lid >> 5;
    uint lane = lid & 31u;
    uint hc = (lane >> 2) & 3u;
    uint hb = (lane & 3u) + 4u * (lane >> 4);
    __local const float4* win = (__local const float4*)(tin + (hr * 4u + hc) * FB_TS + 8u * hb);
    __local float* hout = hf + (hr * 4u + hc) * FB_FS + 8u * hb;
    /* Vertical: float lane lid of the band. */
    uint vx = lid >> 2;
    uint vc = lid & 3u;
    bool lane_ok = x0 + vx < width;
    __local const float* vin = hf + vc * FB_FS + vx;
    __global float* out = dst + ((size_t)y0 * width + x0) * 4u + lid;
    float x[FB_WIN];
#pragma unroll
    for (uint i = 0; i < FB_WIN; ++i) x[i] = 0.0f;
    float4 pre[FB_K];
    fb_load(src, width, height, border, sx, rr, top, pre);
    for (uint s = 0; s < steps; ++s) {
#pragma unroll
        for (uint m = 0; m < FB_K; ++m) {
            if (lid + m * FB_T < FB_R * FB_SPAN) {
                __local float* t = tin + rr[m] * 4u * FB_TS + kk[m];
                t[0] = pre[m].x;
                t[FB_TS] = pre[m].y;
                t[2u * FB_TS] = pre[m].z;
                t[3u * FB_TS] = pre[m].w;
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        if (s + 1u < steps)
            fb_load(src, width, height, border, sx, rr, top + (int)((s + 1u) * FB_R), pre);
        float acc[8];
        F32_WINDOW8(win, FB_Q, wk, acc);
        ((__local float4*)hout)[0] = (float4)(acc[0], acc[1], acc[2], acc[3]);
        ((__local float4*)hout)[1] = (float4)(acc[4], acc[5], acc[6], acc[7]);
        barrier(CLK_LOCAL_MEM_FENCE);
        /* Input rows s FB_R .. s FB_R + FB_R - 1 of the strip are now filtered; output row
           o = s FB_R + i - 2W takes window values i .. i + 2W. */
#pragma unroll
        for (uint i = 0; i < FB_R; ++i) x[2u * W + i] = vin[i * 4u * FB_FS];
        int o0 = (int)(s * FB_R) - 2 * (int)W;
        if (lane_ok) {
#pragma unroll
            for (uint i = 0; i < FB_R; ++i) {
                float a = 0.0f;
#pragma unroll
                for (uint k = 0; k <= 2u * W; ++k) a = fma(wk[k], x[i + k], a);
                int o = o0 + (int)i;
                if (o >= 0 && (uint)o < rows) out[(size_t)o * width * 4u] = a;
            }
        }
#pragma unroll
        for (uint k = 0; k < 2u * W; ++k) x[k] = x[k + FB_R];
    }
}
#endif
