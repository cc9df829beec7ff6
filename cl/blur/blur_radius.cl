/* The blur's programs built per radius (BLUR_W defined), pasted after blur.cl, whose helpers
   they use; without BLUR_W this file adds nothing. */

#ifdef BLUR_W
/* The programs built per radius, by named defines: BLUR_W (the radius W), and BLUR_CPX, or
   BLUR_VCH and BLUR_HP with BLUR_BAND_ROWS, BLUR_BAND_T128 or BLUR_TENSOR (0 when not given).
   The fused RGBA8 blur specialised on its radius W, its blocks a work-item (BLUR_CPX) and
   adjacent columns a block (BLUR_VX; GPUs, small radii), built as a program of its own per
   variant so that the 2W + 1 output rows in flight live in registers. A group of FX
   work-items owns COLS = FX * CPX * VX neighbouring columns (block b of work-item l is block
   b * FX + l of the group: coalesced) and a strip of output rows. Row by row it stores the
   input row's COLS + 2W pixels into local memory (loaded into registers AHEAD rows earlier;
   double-buffered, one barrier a row), each work-item filters its blocks horizontally (a
   block's VX + 2W pixels read as vectors, unpacked once for its VX outputs), keeps the filtered
   values of the last 2W + 1 rows (BLUR_REG_RING) or adds them into accumulators of the 2W + 1
   output rows they belong to, and writes the output row now complete. Rows come in unrolled
   runs of 2W + 1, so that every value has a fixed register. 8 bytes of DRAM traffic a pixel;
   the sums are the two-pass kernels' integer sums. BLUR_REG_PRMT=1 (NVIDIA, inline PTX) moves
   the bytes with byte permutes rather than shifts and masks, and sums the horizontal taps with
   two-way dot products (BLUR_REG_DP2A, on with it). */
#ifndef BLUR_CPX
#define BLUR_CPX 0
#endif
#ifndef BLUR_VCH
#define BLUR_VCH 0
#endif
#ifndef BLUR_HP
#define BLUR_HP 0
#endif
#ifndef BLUR_BAND_ROWS
#define BLUR_BAND_ROWS 0
#endif
#ifndef BLUR_BAND_T128
#define BLUR_BAND_T128 0
#endif
#ifndef BLUR_TENSOR
#define BLUR_TENSOR 0
#endif
#define W ((uint)BLUR_W)
#define CPX ((uint)BLUR_CPX)
#define TAPS (2u * W + 1u)
#define FX 64u
#ifndef BLUR_VX
#define BLUR_VX 1
#endif
#define VX ((uint)BLUR_VX)
#define COLS (FX * CPX * VX)
#define FSPAN (COLS + 2u * W)
#define FK ((FSPAN + FX - 1u) / FX)
/* Vectors of VX words a block of VX adjacent columns reads from the tile (its VX + 2W pixels),
   and the words of each of the tile's two rows (FSPAN, rounded up so that the last block's
   vectors stay inside). */
#define NV ((VX + 2u * W + VX - 1u) / VX)
#define TSTRIDE (COLS + NV * VX)

#if BLUR_CPX != 0 /* the fused kernel's programs */

/* The kernel takes the arguments every blur kernel begins with; its radius argument w is W. */

#ifndef BLUR_REG_MAP32
#define BLUR_REG_MAP32 1
#endif
#if BLUR_REG_MAP32
/* blur_map in 32-bit arithmetic (the host runs this kernel on sides below 2^30 only). Its
   64-bit division, inlined for each load, had made the whole kernel slower: H200, 8192², w = 2,
   kernel 0.396 ms with it (the general path is taken by the edge groups only). */
BLUR_DEFINE_MAP(reg_map, int)
#define REG_T int
#else
#define reg_map(p, n, border) blur_map((p), (n), (border))
#define REG_T long
#endif

/* The FSPAN pixels of input row r (through the borders) a group needs, FK a work-item. */
inline void reg_load(__global const uint* src, uint width, uint height, uint border, uint x0,
                     long r, uint* pre) {
    uint lid = get_local_id(0);
    REG_T rs = (r >= 0 && r < (long)height) ? (REG_T)r : reg_map((REG_T)r, (REG_T)height, border);
    __global const uint* row = src + (size_t)(rs < 0 ? 0 : rs) * width;
    /* A group whose pixels and halo lie inside the row (most of them: the test is the same
       for the whole group) loads them without a bound test each. */
    if (rs >= 0 && x0 >= W && (ulong)x0 + (ulong)(FSPAN - W) <= (ulong)width) {
        __global const uint* b = row + (x0 - W);
#pragma unroll
        for (uint m = 0; m < FK; ++m) {
            uint k = lid + m * FX;
            pre[m] = (m + 1u < FK || k < FSPAN) ? b[k] : 0u;
        }
        return;
    }
#pragma unroll
    for (uint m = 0; m < FK; ++m) {
        uint k = lid + m * FX;
        REG_T p = (REG_T)x0 + (REG_T)k - (REG_T)W;
        /* Written out here rather than through row_px(): NVIDIA's build of that was slower
           (H200, 8192², kernel ms, one call: w = 2 0.422-0.428 against 0.407-0.411). */
        uint v = 0u;
        if (k < FSPAN && rs >= 0) {
            if (p >= 0 && p < (REG_T)width) {
                v = row[p];
            } else {
                REG_T s = reg_map(p, (REG_T)width, border);
                v = s < 0 ? 0u : row[s];
            }
        }
        pre[m] = v;
    }
}

/* A block is VX adjacent columns (BLUR_VX 1, 2 or 4; block b of work-item l is block
   b * FX + l of the group: coalesced): its VX + 2W pixels are read from the tile as NV vectors
   and unpacked once for the VX outputs, which are stored as one vector where aligned. */
#if BLUR_VX == 4
typedef uint4 vx_t;
#define VX_SPLIT(v, a, o) ((a)[(o)] = (v).s0, (a)[(o) + 1] = (v).s1, (a)[(o) + 2] = (v).s2, \
                           (a)[(o) + 3] = (v).s3)
#define VX_MAKE(a) ((uint4)((a)[0], (a)[1], (a)[2], (a)[3]))
#elif BLUR_VX == 2
typedef uint2 vx_t;
#define VX_SPLIT(v, a, o) ((a)[(o)] = (v).s0, (a)[(o) + 1] = (v).s1)
#define VX_MAKE(a) ((uint2)((a)[0], (a)[1]))
#elif BLUR_VX == 1
typedef uint vx_t;
#define VX_SPLIT(v, a, o) ((a)[(o)] = (v))
#define VX_MAKE(a) ((a)[0])
#else
#error "BLUR_VX is 1, 2 or 4"
#endif

#ifndef BLUR_REG_RING
#define BLUR_REG_RING (BLUR_W >= 2)
#endif
#ifndef BLUR_REG_PRMT
#define BLUR_REG_PRMT 0
#endif
#if BLUR_REG_PRMT
/* NVIDIA's byte permute (PTX prmt): byte k of the result is byte (s >> 4k) & 7 of b:a.
   CLPIX_WARP_EMULATED=1 computes it in plain OpenCL C, for tests. */
inline uint reg_prmt(uint a, uint b, uint s) {
#if CLPIX_WARP_EMULATED
    ulong x = ((ulong)b << 32) | (ulong)a;
    uint r = 0u;
    for (uint k = 0; k < 4u; ++k)
        r |= (uint)((x >> (8u * ((s >> (4u * k)) & 7u))) & 0xfful) << (8u * k);
    return r;
#else
    uint r;
    __asm__("prmt.b32 %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(s));
    return r;
#endif
}
#ifndef BLUR_REG_DP2A
#define BLUR_REG_DP2A 1
#endif
/* NVIDIA's two-way dot products (PTX dp2a, 16-bit halves of a times bytes 0-1 (lo) or 2-3 (hi)
   of b, plus c): the horizontal taps of two channels of a pair of pixels, one instruction a
   channel. */
inline uint reg_dp2a_lo(uint a, uint b, uint c) {
#if CLPIX_WARP_EMULATED
    return c + (a & 0xffffu) * (b & 0xffu) + (a >> 16) * ((b >> 8) & 0xffu);
#else
    uint r;
    __asm__("dp2a.lo.u32.u32 %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(c));
    return r;
#endif
}
inline uint reg_dp2a_hi(uint a, uint b, uint c) {
#if CLPIX_WARP_EMULATED
    return c + (a & 0xffffu) * ((b >> 16) & 0xffu) + (a >> 16) * (b >> 24);
#else
    uint r;
    __asm__("dp2a.hi.u32.u32 %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(c));
    return r;
#endif
}
/* A channel's byte of a pixel; a finished sum v of channel ch of column i kept (vo[i][ch]);
   the output pixel of column i: byte 3 of each channel's sum, three permutes. */
#define REG_BYTE(x, ch) reg_prmt((x), 0u, 0x4440u | (ch))
#define REG_OUT(i, ch, v) (vo[i][ch] = (v))
#define REG_PIXEL(i) \
    reg_prmt(reg_prmt(vo[i][0], vo[i][1], 0x4473u), reg_prmt(vo[i][2], vo[i][3], 0x7300u), 0x7610u)
#else
/* The same in shifts and masks, each sum's byte ORed into the output pixel o[i] at once. */
#define REG_BYTE(x, ch) (((x) >> (8u * (ch))) & 0xffu)
#define REG_OUT(i, ch, v) (o[i] |= ((v) >> 24) << (8u * (ch)))
#endif
/* The vertical step of value (block c, column i, channel ch) of the register kernel: input
   row j's filtered value t joins the rows in registers, and the sum of the output row now
   complete goes to REG_OUT (its byte is the sum's bits 24-31).
   - BLUR_REG_RING: row j in slot u (j0 % TAPS is 0); output row j - 2W takes input rows
     j - 2W + k, k = 0..2W, in slots (u + 1 + k) % TAPS.
   - otherwise input row j is tap k of output row j - k (slot (j - k) % TAPS); output row j - 2W
     (slot (u + 1) % TAPS) is complete, and rows before the strip (j < 2W) only reset their
     slot. */
#define REG_RING_AT(c, i, ch, k) acc[c][i][ch][(u + 1u + (k)) % TAPS]
#if BLUR_REG_RING
#define REG_VERT(c, i, ch, t)                                                        \
    do {                                                                             \
        acc[c][i][ch][u] = (t);                                                      \
        uint v_ = (1u << 23) + qk[W] * REG_RING_AT(c, i, ch, W);                     \
        _Pragma("unroll") for (uint d_ = 1; d_ <= W; ++d_) v_ +=                     \
            qk[W + d_] * (REG_RING_AT(c, i, ch, W - d_) + REG_RING_AT(c, i, ch, W + d_)); \
        REG_OUT(i, ch, v_);                                                          \
    } while (0)
#else
#define REG_VERT(c, i, ch, t)                                                        \
    do {                                                                             \
        uint t_ = (t);                                                               \
        _Pragma("unroll") for (uint k_ = 0; k_ < TAPS; ++k_)                         \
            acc[c][i][ch][(u + TAPS - k_) % TAPS] += qk[k_] * t_;                    \
        REG_OUT(i, ch, acc[c][i][ch][(u + 1u) % TAPS]);                              \
        acc[c][i][ch][(u + 1u) % TAPS] = 1u << 23;                                   \
    } while (0)
#endif

__kernel __attribute__((reqd_work_group_size(64, 1, 1)))
void blur_fused_reg_u8(__global const uint* src, uint width, uint height, __constant uint* q,
                       uint w, uint border, __global uint* dst, uint xg, uint strip) {
    /* Two rows of the tile, aligned for the blocks' vector loads. */
    __local uint tile[2u * TSTRIDE] __attribute__((aligned(16)));
    uint lid = get_local_id(0);
    uint g = get_group_id(0);
    uint sy = g / xg;
    uint x0 = (g - sy * xg) * COLS;
    long y0 = (long)sy * strip;
    uint rows = (uint)(min(y0 + (long)strip, (long)height) - y0);
    /* Whole runs of TAPS input rows, so that no barrier sits under a condition (PoCL's
       compiler corrupted memory on that); rows past the strip are read but not written. */
    uint nin = (rows + 2u * W + TAPS - 1u) / TAPS * TAPS;
    uint qk[TAPS];
    /* Per value of its blocks, TAPS registers (scalars, a channel at a time: the VX + 2W bytes
       of one channel live at once, not VX + 2W uint4; H200, w = 2, two blocks of one column:
       80 registers against 119), in one of two forms:
       - BLUR_REG_RING (the default from w = 2): the filtered values of the last TAPS input rows
         (slot j % TAPS for row j). A finished row's sum takes W + 1 multiply-adds a value, the
         weights being symmetric (H200, 8192², w = 2, kernel 0.295 ms against 0.310; w = 1
         0.204 against 0.200).
       - otherwise accumulators of the TAPS output rows in flight, each adding q[k] times the
         filtered value of every input row; each starts at the vertical rounding's 2^23 (the
         sums stay below 2^32 - 2^23: at most 65536 * 65280), so that a finished row is its
         accumulator >> 24.
       The horizontal rounding's 128 is the first tap's addend. */
#if BLUR_REG_RING
#define ACC_START 0u
#else
#define ACC_START (1u << 23)
#endif
    uint acc[CPX][VX][4][TAPS];
#pragma unroll
    for (uint k = 0; k < TAPS; ++k) {
        qk[k] = q[k];
#pragma unroll
        for (uint c = 0; c < CPX; ++c)
#pragma unroll
            for (uint i = 0; i < VX; ++i)
#pragma unroll
                for (uint ch = 0; ch < 4u; ++ch) acc[c][i][ch][k] = ACC_START;
    }
#if BLUR_REG_PRMT && BLUR_REG_DP2A
    /* The dot products' weights: the centre's split in two halves, each side's twice. */
    uint qd[W + 1u];
    qd[0] = (qk[W] >> 1) | ((qk[W] - (qk[W] >> 1)) << 16);
#pragma unroll
    for (uint d = 1; d <= W; ++d) qd[d] = qk[W + d] * 0x10001u;
#endif
    /* The next AHEAD input rows, loaded while earlier rows are filtered: enough bytes in
       flight to cover DRAM latency with the few work-items these registers allow (H200,
       8192², w = 2, blocks of 4 columns, kernel ms: 1 row 0.381, 2 0.341, 3 0.311, 4-8
       0.314-0.328). */
#ifndef BLUR_REG_AHEAD
#define BLUR_REG_AHEAD 3
#endif
#define AHEAD ((uint)BLUR_REG_AHEAD)
    uint pre[AHEAD][FK];
#pragma unroll
    for (uint a = 0; a < AHEAD; ++a)
        reg_load(src, width, height, border, x0, y0 - (long)W + (long)a, pre[a]);
    for (uint j0 = 0; j0 < nin; j0 += TAPS) {
#pragma unroll
        for (uint u = 0; u < TAPS; ++u) {
            uint j = j0 + u;
            __local uint* tl = tile + (j & 1u) * TSTRIDE;
#pragma unroll
            for (uint m = 0; m < FK; ++m) {
                uint k = lid + m * FX;
                if (k < FSPAN) tl[k] = pre[0][m];
            }
            barrier(CLK_LOCAL_MEM_FENCE);
#pragma unroll
            for (uint a = 0; a + 1u < AHEAD; ++a)
#pragma unroll
                for (uint m = 0; m < FK; ++m) pre[a][m] = pre[a + 1u][m];
            reg_load(src, width, height, border, x0, y0 - (long)W + (long)(j + AHEAD),
                     pre[AHEAD - 1u]);
            bool out = j >= 2u * W && j - 2u * W < rows;
            __global uint* drow = dst + (size_t)(y0 + (long)j - 2 * (long)W) * width;
#pragma unroll
            for (uint c = 0; c < CPX; ++c) {
                uint blk = (c * FX + lid) * VX;
                uint win[NV * VX];
#pragma unroll
                for (uint n = 0; n < NV; ++n) {
                    vx_t v = ((__local const vx_t*)tl)[blk / VX + n];
                    VX_SPLIT(v, win, n * VX);
                }
                uint o[VX];
#if BLUR_REG_PRMT
                uint vo[VX][4];
#else
#pragma unroll
                for (uint i = 0; i < VX; ++i) o[i] = 0u;
#endif
#if BLUR_REG_PRMT && BLUR_REG_DP2A
                /* Channels (c0, c0 + 1) a pair: one permute gathers their bytes of the pixels
                   W - d and W + d either side of column i (bytes 0-1 and 2-3), one dot product
                   a channel adds q[W + d] times both; the centre pairs with itself, its weight
                   split in two halves (each below 2^16). */
#pragma unroll
                for (uint c0 = 0; c0 < 4u; c0 += 2u) {
#define DP_SEL(k) (c0 | ((k) << 4) | ((c0 + 1u) << 8) | (((k) + 1u) << 12))
#pragma unroll
                    for (uint i = 0; i < VX; ++i) {
                        uint x = reg_prmt(win[i + W], 0u, DP_SEL(c0));
                        uint h0 = reg_dp2a_lo(qd[0], x, 128u);
                        uint h1 = reg_dp2a_hi(qd[0], x, 128u);
#pragma unroll
                        for (uint d = 1; d <= W; ++d) {
                            uint y = reg_prmt(win[i + W - d], win[i + W + d], DP_SEL(4u + c0));
                            h0 = reg_dp2a_lo(qd[d], y, h0);
                            h1 = reg_dp2a_hi(qd[d], y, h1);
                        }
                        REG_VERT(c, i, c0, (h0 >> 8));
                        REG_VERT(c, i, c0 + 1u, (h1 >> 8));
                    }
#undef DP_SEL
                }
#else
#pragma unroll
                for (uint ch = 0; ch < 4u; ++ch) {
                    uint b[VX + 2u * W];
#pragma unroll
                    for (uint i = 0; i < VX + 2u * W; ++i) b[i] = REG_BYTE(win[i], ch);
#pragma unroll
                    for (uint i = 0; i < VX; ++i) {
                        uint h = 128u + qk[W] * b[i + W];
#pragma unroll
                        for (uint d = 1; d <= W; ++d)
                            h += qk[W + d] * (b[i + W - d] + b[i + W + d]);
                        REG_VERT(c, i, ch, (h >> 8));
                    }
                }
#endif
#if BLUR_REG_PRMT
#pragma unroll
                for (uint i = 0; i < VX; ++i) o[i] = REG_PIXEL(i);
#endif
                uint gx = x0 + blk;
#if BLUR_VX == 1
                if (out && gx < width) drow[gx] = o[0];
#else
                if (out) {
                    __global uint* d = drow + gx;
                    if (gx + VX <= width && ((size_t)d & (VX * 4u - 1u)) == 0u) {
                        *(__global vx_t*)d = VX_MAKE(o);
                    } else {
#pragma unroll
                        for (uint i = 0; i < VX; ++i)
                            if (gx + i < width) d[i] = o[i];
                    }
                }
#endif
            }
        }
    }
}
#endif

#if BLUR_VCH != 0 /* the specialised two passes' programs */
/* The RGBA8 two passes specialised on the radius W (GPUs, radii where the fused kernel's
   accumulators crowd the registers), both written so that each tap costs about one
   instruction a channel. BLUR_VCH gives VCH (channels a work-item of
   the vertical pass, 1, 2 or 4) and HP (bits 24..27: pixels a work-item of the horizontal
   pass, 4 or 8).
   Horizontal: the tile in local memory as float4, each pixel converted once; each work-item
   filters HP neighbouring pixels from a sliding window in registers (HP + 2W loads for HP
   outputs) with f32 multiply-adds. Every value is an integer below 2^24 (SPEC: h is at most
   255 * 65536), so every product and sum is exact and the bits are those of the integer sum.
   Vertical: VCH channels of one column a work-item down a strip of rows; with BLUR_VROWS (the
   default) in blocks of that many output rows, whose window of BLUR_VROWS + 2W intermediate
   rows is in registers, shifted block by block; with BLUR_VROWS 0 a ring of the last 2W + 1
   rows, VPF more loaded ahead, unrolled (code that outgrew the instruction cache: H200, w = 25,
   1.87 against 1.18 ms). One multiply a pair of rows (the weights are symmetric), in integers. */
#define VCH ((uint)BLUR_VCH)
#define HP ((uint)BLUR_HP)
#define HTW (128u * HP)
#define HSPAN (HTW + 2u * W)
/* One float4 of padding every 8: work-item l reads from about 9 l (HP = 8) or 4.5 l (HP = 4)
   float4s, so that the 8 work-items of a 128-byte access hit distinct banks. */
#define HPAD(k) ((k) + ((k) >> 3))

/* The horizontal filter of HP neighbouring pixels from the float4 tile row TR, pixels B - W
   on: a sliding window (HP + 2W loads for HP outputs), weights QF[i] (private or constant
   memory: a macro), sums into ACC[HP]. */
#define HS_WINDOW(TR, B, QF, ACC)                                                   \
    do {                                                                            \
        _Pragma("unroll") for (uint p_ = 0; p_ < HP; ++p_) (ACC)[p_] = (float4)(0.0f); \
        _Pragma("unroll") for (uint k_ = 0; k_ < HP + 2u * W; ++k_) {               \
            float4 v_ = (TR)[HPAD((B) + k_)];                                       \
            _Pragma("unroll") for (uint p_ = 0; p_ < HP; ++p_)                      \
                if (k_ >= p_ && k_ - p_ < TAPS)                                     \
                    (ACC)[p_] = fma((float4)((QF)[k_ - p_]), v_, (ACC)[p_]);          \
        }                                                                           \
    } while (0)

/* 2^23 + v as a float's bits, less 2^23: exact, and no conversion instruction. */
inline float4 u8x4_to_float4(uint p) {
    return as_float4(unpack4(p) | 0x4b000000u) - 8388608.0f;
}

/* VT: VCH channels as uints; VIN, VOUT: VCH channels of the intermediate and of the output
   (rows of `lanes` of them). */
#if BLUR_VCH == 4
#define VT uint4
#define VIN uint2
#define VOUT uint
#define VCONV(v) convert_uint4(as_ushort4(v))
#define VPACK(v) as_uint(convert_uchar4(v))
#elif BLUR_VCH == 2
#define VT uint2
#define VIN uint
#define VOUT ushort
#define VCONV(v) convert_uint2(as_ushort2(v))
#define VPACK(v) as_ushort(convert_uchar2(v))
#else
#define VT uint
#define VIN ushort
#define VOUT uchar
#define VCONV(v) ((uint)(v))
#define VPACK(v) ((uchar)(v))
#endif
#if BLUR_BAND_ROWS == 0 /* the two passes (not the band kernel) */
#if BLUR_W <= 32 /* the CUDA-core passes; beyond, the tensor-core ones only */

__kernel __attribute__((reqd_work_group_size(128, 1, 1)))
void blur_hs_u8(__global const uint* src, uint width, uint height, __constant uint* q, uint w,
                uint border, __global uint2* t, uint tiles, __local float4* tile) {
    uint lid = get_local_id(0);
    uint g = get_group_id(0);
    uint y = g / tiles;
    uint x0 = (g - y * tiles) * HTW;
    __global const uint* row = src + (size_t)y * width;
    for (uint k = lid; k < HSPAN; k += 128u) {
        long p = (long)x0 + (long)k - (long)W;
        tile[HPAD(k)] = u8x4_to_float4(row_px(row, p, width, border));
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    float qf[TAPS];
#pragma unroll
    for (uint i = 0; i < TAPS; ++i) qf[i] = (float)q[i];
    float4 acc[HP];
    uint b = lid * HP;
    HS_WINDOW(tile, b, qf, acc);
    __global uint2* out = t + (size_t)y * width;
#pragma unroll
    for (uint p = 0; p < HP; ++p) {
        uint x = x0 + b + p;
        if (x < width) out[x] = as_uint2(convert_ushort4((convert_uint4(acc[p]) + 128u) >> 8));
    }
}

#define VPF 4u
#define VRING (TAPS + VPF)

/* Intermediate row p (through the border; a zero row as zeros) at this work-item's lane: t
   points at the lane in row 0. 32-bit row arithmetic: this runs once an output row. */
inline VT vs_load(__global const VIN* t, uint lanes, uint height, uint border, int p) {
    long r = blur_row(p, height, border);
    return r < 0 ? (VT)(0u) : VCONV(t[(size_t)r * lanes]);
}

#ifndef BLUR_VROWS
#define BLUR_VROWS 0
#endif
#if BLUR_VROWS
/* Blocks of VBR output rows: a window of VBR + 2W rows in registers, the next block's VBR rows
   loaded during this block's arithmetic, the window shifted by VBR after it (2W moves). The
   code is one block's, not a whole ring's. */
#define VBR ((uint)BLUR_VROWS)
#define VBWIN (VBR + 2u * W)
__kernel __attribute__((reqd_work_group_size(128, 1, 1)))
void blur_vs_u8(__global const VIN* t, uint width, uint height, __constant uint* q, uint w,
                uint border, __global VOUT* dst, uint xg, uint strip) {
    uint g = get_group_id(0);
    uint sy = g / xg;
    uint c = (g - sy * xg) * 128u + get_local_id(0);
    uint lanes = width * (4u / VCH);
    if (c >= lanes) return;
    t += c;
    dst += c;
    uint y0 = sy * strip;
    uint rows = min(strip, height - y0);
    int top = (int)y0 - (int)W; /* input row 0 */
    uint qk[W + 1u];
#pragma unroll
    for (uint d = 0; d <= W; ++d) qk[d] = q[W + d];
    VT x[VBWIN];
    VT nx[VBR];
#pragma unroll
    for (uint u = 0; u < 2u * W; ++u) x[u] = vs_load(t, lanes, height, border, top + (int)u);
#pragma unroll
    for (uint i = 0; i < VBR; ++i) nx[i] = vs_load(t, lanes, height, border, top + (int)(2u * W + i));
    __global VOUT* out = dst + (size_t)y0 * lanes;
    for (uint o = 0; o < rows; o += VBR) {
#pragma unroll
        for (uint i = 0; i < VBR; ++i) x[2u * W + i] = nx[i];
        if (o + VBR < rows) {
#pragma unroll
            for (uint i = 0; i < VBR; ++i)
                nx[i] = vs_load(t, lanes, height, border, top + (int)(o + VBR + 2u * W + i));
        }
#pragma unroll
        for (uint i = 0; i < VBR; ++i) {
            VT acc = qk[0] * x[i + W];
#pragma unroll
            for (uint d = 1; d <= W; ++d) acc += qk[d] * (x[i + W - d] + x[i + W + d]);
            if (o + i < rows) out[(size_t)(o + i) * lanes] = VPACK((acc + (1u << 23)) >> 24);
        }
#pragma unroll
        for (uint k = 0; k < 2u * W; ++k) x[k] = x[k + VBR];
    }
}
#else
__kernel __attribute__((reqd_work_group_size(128, 1, 1)))
void blur_vs_u8(__global const VIN* t, uint width, uint height, __constant uint* q, uint w,
                uint border, __global VOUT* dst, uint xg, uint strip) {
    uint g = get_group_id(0);
    uint sy = g / xg;
    uint c = (g - sy * xg) * 128u + get_local_id(0);
    uint lanes = width * (4u / VCH);
    if (c >= lanes) return;
    t += c;
    dst += c;
    uint y0 = sy * strip;
    uint rows = min(strip, height - y0);
    uint need = rows + 2u * W; /* input rows */
    uint nin = (need + VRING - 1u) / VRING * VRING;
    int top = (int)y0 - (int)W; /* input row 0 */
    uint qk[W + 1u];
#pragma unroll
    for (uint d = 0; d <= W; ++d) qk[d] = q[W + d];
    VT ring[VRING];
#pragma unroll
    for (uint u = 0; u < VRING; ++u) ring[u] = (VT)(0u);
#pragma unroll
    for (uint u = 0; u < VPF; ++u) ring[u] = vs_load(t, lanes, height, border, top + (int)u);
    for (uint j0 = 0; j0 < nin; j0 += VRING) {
#pragma unroll
        for (uint u = 0; u < VRING; ++u) {
            uint j = j0 + u; /* input row j sits in slot u */
            if (j + VPF < need)
                ring[(u + VPF) % VRING] =
                    vs_load(t, lanes, height, border, top + (int)(j + VPF));
            if (j >= 2u * W && j - 2u * W < rows) {
                uint m = (u + VRING - W) % VRING; /* the centre row's slot */
                VT acc = qk[0] * ring[m];
#pragma unroll
                for (uint d = 1; d <= W; ++d)
                    acc += qk[d] * (ring[(m + VRING - d) % VRING] + ring[(m + d) % VRING]);
                dst[(size_t)(y0 + j - 2u * W) * lanes] = VPACK((acc + (1u << 23)) >> 24);
            }
        }
    }
}
#endif /* BLUR_VROWS */
#endif /* the CUDA-core passes */
/* The passes on NVIDIA's tensor cores (BLUR_TENSOR) are in blur_nv.cl, pasted after this file. */
#else /* the fused band kernel's programs (BLUR_BAND_ROWS given) */
/* The fused RGBA8 blur in column bands (GPUs, radii where the fused register kernel's
   accumulators crowd the registers): no intermediate image, 8 bytes of DRAM traffic a pixel.
   BLUR_BAND_ROWS gives BR (input rows a step), BLUR_BAND_T128 BT (1: 128 work-items a
   group, else 256), BLUR_VCH VCH and BLUR_HP HP. A group owns BX = BT * VCH / 4
   neighbouring columns and a strip of output rows; it walks the strip's input rows BR at a
   time:
   1. the BR rows' BX + 2W pixels (through the borders), loaded into registers during the
      previous step, go into a local tile as float4;
   2. the horizontal pass, as blur_hs_u8 does it (HP pixels a work-item, sliding window, exact
      f32 multiply-adds), writes the intermediate values into a local ring of the last
      TAPS + BR - 1 filtered rows;
   3. the vertical pass: each work-item takes VCH channels of one column, reads the ring's
      TAPS + BR - 1 rows once and writes the BR output rows they complete (one integer multiply
      a pair of rows).
   Two barriers a step; the sums are the two-pass kernels' integer sums. */
#define BR ((uint)BLUR_BAND_ROWS)
#if BLUR_BAND_T128
#define BT 128
#else
#define BT 256
#endif
#define BX ((uint)BT * VCH / 4u)
#define BSPAN (BX + 2u * W)
#define BROW (HPAD(BSPAN - 1u) + 1u)
#define BRS (TAPS + BR - 1u)
/* One uint2 of padding every 8 pixels of a ring row: the HP-pixel stores of neighbouring
   work-items spread over the banks. */
#define RPAD(k) ((k) + ((k) >> 3))
#define RROW (RPAD(BX - 1u) + 1u)
#define RSTRIDE (RROW * 4u / VCH) /* a ring row in VINs */
#define BGROUPS (BX / HP)
#define HITEMS (BR * BGROUPS)
#define HRUNS ((HITEMS + (uint)BT - 1u) / (uint)BT)
/* Tile columns a work-item loads: column lid + m BT for m < NCOL, the same in every row. */
#define NCOL ((BSPAN + (uint)BT - 1u) / (uint)BT)

/* The BR input rows from image row y on (through the borders) that a step needs: pre[m BR + r]
   is row y + r at this work-item's tile column m, whose source column is sx[m] (-1: a zero
   pixel or no column). 32-bit coordinates: the host keeps rows under 2^29 pixels. */
inline void band_load(__global const uint* src, uint width, uint height, uint border,
                      const int* sx, int y, uint* pre) {
#pragma unroll
    for (uint r = 0; r < BR; ++r) {
        int yr = y + (int)r;
        long ry = (uint)yr < height ? (long)yr : blur_map(yr, height, border);
        __global const uint* row = src + (size_t)(ry < 0 ? 0 : ry) * width;
#pragma unroll
        for (uint m = 0; m < NCOL; ++m)
            pre[m * BR + r] = (ry >= 0 && sx[m] >= 0) ? row[sx[m]] : 0u;
    }
}

__kernel __attribute__((reqd_work_group_size(BT, 1, 1)))
void blur_band_u8(__global const uint* src, uint width, uint height, __constant uint* q, uint w,
                  uint border, __global VOUT* dst, uint xg, uint strip) {
    /* The weights as f32 (exact: each is at most 65536): up to w = 16 in registers, converted
       from the integer ones; beyond, where registers are short, from constant memory, where
       they follow the integer ones. H200, 8192², kernel ms, registers against constant memory:
       w = 3 0.455-0.458 / 0.485-0.492, w = 8 0.840-0.845 / 0.850-0.854 (one call); w = 12,
       16, 20 1.095, 1.358, 1.933 against 1.227, 1.553, 1.831 (a second constant buffer, an
       earlier call; after the integer weights w = 20 took 1.830-1.833 in a later one). */
#if BLUR_W <= 16
    float qf[TAPS];
#pragma unroll
    for (uint i = 0; i < TAPS; ++i) qf[i] = (float)q[i];
#else
    __constant float* qf = (__constant float*)(q + TAPS);
#endif
    __local float4 tile[BR * BROW];
    __local uint2 ring[BRS * RROW];
    uint lid = get_local_id(0);
    uint g = get_group_id(0);
    uint sy = g / xg;
    uint x0 = (g - sy * xg) * BX;
    uint y0 = sy * strip;
    uint rows = min(strip, height - y0);
    uint steps = (rows + 2u * W + BR - 1u) / BR;
    int top = (int)y0 - (int)W; /* the strip's first input row */
    /* This work-item's lane of the vertical pass: VCH channels of column px. */
    uint px = lid * VCH / 4u;
    bool lane_ok = x0 + px < width;
    __local const VIN* vr = (__local const VIN*)ring + (RPAD(px) * 4u + lid * VCH % 4u) / VCH;
    uint lanes = width * (4u / VCH);
    __global VOUT* out = dst + (size_t)y0 * lanes + x0 * (4u / VCH) + lid;
    int sx[NCOL];
#pragma unroll
    for (uint m = 0; m < NCOL; ++m) {
        uint c = lid + m * (uint)BT;
        int p = (int)(x0 + c) - (int)W;
        long sp = (uint)p < width ? (long)p : blur_map(p, width, border);
        sx[m] = c < BSPAN ? (int)sp : -1;
    }
    /* The ring starts at zero: the first steps also read slots not yet written, for output
       rows before the strip that are never stored (Oclgrind flags reading them unset). The
       first barrier below orders these stores before the ring's. */
    for (uint i = lid; i < BRS * RROW; i += (uint)BT) ring[i] = (uint2)(0u);
    uint pre[NCOL * BR];
    band_load(src, width, height, border, sx, top, pre);
    uint rb = 0u; /* the ring slot of the step's first row */
    for (uint s = 0; s < steps; ++s) {
#pragma unroll
        for (uint m = 0; m < NCOL; ++m) {
            uint c = lid + m * (uint)BT;
            if (c < BSPAN) {
#pragma unroll
                for (uint r = 0; r < BR; ++r)
                    tile[r * BROW + HPAD(c)] = u8x4_to_float4(pre[m * BR + r]);
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        if (s + 1u < steps)
            band_load(src, width, height, border, sx, top + (int)((s + 1u) * BR), pre);
#pragma unroll
        for (uint m = 0; m < HRUNS; ++m) {
            uint hi = lid + m * (uint)BT;
            if (hi < HITEMS) {
                uint r = hi / BGROUPS;
                uint b = (hi - r * BGROUPS) * HP;
                __local const float4* tr = tile + r * BROW;
                float4 acc[HP];
                HS_WINDOW(tr, b, qf, acc);
                uint slot = rb + r;
                if (slot >= BRS) slot -= BRS;
                __local uint2* rr = ring + slot * RROW;
#pragma unroll
                for (uint p = 0; p < HP; ++p)
                    rr[RPAD(b + p)] =
                        as_uint2(convert_ushort4((convert_uint4(acc[p]) + 128u) >> 8));
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        /* Output rows o0 .. o0 + BR - 1 of the strip take input rows o0 .. o0 + BR - 1 + 2W,
           the ring's BRS = 2W + BR rows from slot (rb - 2W) % BRS = (rb + BR) % BRS on: rows
           k < kw of them from slot first + k, the others wrapped to slot first + k - BRS (two
           base pointers, so that each load has a constant offset; b1 itself lies before the
           ring, only b1 + k RSTRIDE with k >= kw, inside it, is read). */
        int o0 = (int)(s * BR) - 2 * (int)W;
        if (o0 + (int)BR > 0 && lane_ok) {
            uint first = rb + BR;
            if (first >= BRS) first -= BRS;
            uint kw = BRS - first;
            __local const VIN* b0 = vr + first * RSTRIDE;
            __local const VIN* b1 = b0 - BRS * RSTRIDE;
            VT x[BRS];
#pragma unroll
            for (uint k = 0; k < BRS; ++k) x[k] = VCONV((k < kw ? b0 : b1)[k * RSTRIDE]);
            long at = (long)o0 * (long)lanes; /* output row o0 from row 0 of the strip */
#pragma unroll
            for (uint i = 0; i < BR; ++i) {
                VT acc = q[W] * x[i + W];
#pragma unroll
                for (uint d = 1; d <= W; ++d) acc += q[W + d] * (x[i + W - d] + x[i + W + d]);
                /* (uint) of a row before the strip is above `rows`. */
                if ((uint)(o0 + (int)i) < rows) out[at] = VPACK((acc + (1u << 23)) >> 24);
                at += lanes;
            }
        }
        rb += BR;
        if (rb >= BRS) rb -= BRS;
    }
}
#endif
#endif /* the specialised passes */

#endif /* BLUR_W */
