/* NVIDIA only: the radius-built RGBA8 blur passes on the tensor cores (mma.sync on 8-bit
   integers through inline PTX; CLPIX_WARP_EMULATED=1 emulates them in plain OpenCL C, for
   tests). Pasted after blur.cl in the blur's programs; compiled only into the radius-built
   passes' programs that ask for them (BLUR_TENSOR), which the host builds on NVIDIA GPUs and
   falls back from where they do not build. */
#if defined(BLUR_W) && BLUR_VCH != 0 && BLUR_BAND_ROWS == 0 && BLUR_TENSOR
/* The vertical pass as integer matrix products on NVIDIA's tensor cores (mma.sync m16n8k32 on
   u8, compute capability 8.0 and later, through inline PTX), exact: a warp owns 8 pixels of a
   strip of rows and computes 16 output rows at a time, for each channel, as the product of a
   16 x 32 band of the weights (A, the same for every block) with 32 intermediate rows of the
   8 pixels (B). The weights and the intermediate values are 16-bit, so each is split into its
   high and low bytes: v = 2^16 sum qh th + 2^8 (sum qh tl + sum ql th) + sum ql tl, each sum
   exact in 32 bits (below 2^22), and v as the SPEC's sum modulo 2^32, which is v itself.
   The input rows come in halves of 16: a block of output rows reads the NH halves from OFF
   rows above it (the fewest that hold its 16 + 2W rows: 2 up to w = 8, one chunk), in chunks
   of two (an odd last one alone, by the k16 instruction); each thread keeps the
   halves' bytes in a sliding window of registers, so each intermediate row is loaded once. */
#define OFF ((W + 3u) & ~3u)             /* window rows before a block: W, 4-aligned loads */
#define NH ((OFF + 16u + W + 15u) / 16u) /* halves a block reads: OFF + 16 + W rows or more */
#define NK ((NH + 1u) / 2u)              /* chunks of 32 rows */

#if CLPIX_WARP_EMULATED
/* The instruction's result for devices without it (the tests): each lane publishes its A
   fragments once (xa: NK chunks, 2 planes, 4 words) and its window of B fragments once a
   block (xw: NH halves, 4 channels, 2 planes), then computes its four elements of D = A B + C
   from the other lanes' words, decoded as the instruction lays them out. Barriers only
   between blocks (PoCL 3.1 miscompiled a version with two barriers an instruction). */
#define VM_XA(lane, c, p, r) xa[(((lane) * NK + (c)) * 2u + (p)) * 4u + (r)]
#define VM_XW(lane, s, ch, p) xw[(((lane) * NH + (s)) * 4u + (ch)) * 2u + (p)]
inline int4 mma_u8_emulated(__local const uint* xa, __local const uint* xw, uint lane, uint c,
                            uint pa, uint s0, uint s1, bool two, uint pb, uint ch, int4 d) {
    uint g = lane >> 2, tq = lane & 3u;
    for (uint k = 0; k < 32u; ++k) {
        uint sh = (k & 3u) * 8u;
        uint quad = (k & 15u) >> 2; /* the lane of a group holding column (row) k */
        uint hi = k >> 4;           /* the second register pair of A, the second of B */
        if (hi == 1u && !two) continue;
        uint s = hi ? s1 : s0;
        int a0 = (int)((VM_XA(g * 4u + quad, c, pa, 2u * hi) >> sh) & 0xffu);      /* row g */
        int a1 = (int)((VM_XA(g * 4u + quad, c, pa, 2u * hi + 1u) >> sh) & 0xffu); /* g + 8 */
        int b0 = (int)((VM_XW((2u * tq) * 4u + quad, s, ch, pb) >> sh) & 0xffu); /* col 2 tq */
        int b1 = (int)((VM_XW((2u * tq + 1u) * 4u + quad, s, ch, pb) >> sh) & 0xffu);
        d += (int4)(a0 * b0, a0 * b1, a1 * b0, a1 * b1);
    }
    return d;
}
/* xa: the A fragments, the same in every warp (one copy a group, written by the first warp);
   xw: each warp's window. At W = 64, 5 + 36 KiB. */
#define MMA_SCRATCH __local uint xa_[32u * NK * 8u], xw_[128u * NH * 8u];
/* The sums of a block for each channel, as VM_SUMS and HM_SUMS form them from the
   instruction, in loops: one copy of this code, not one an instruction (PoCL 3.1 took 85 s to
   build those at W = 25). `planes` 2, the vertical pass: sh = qh th, sm = qh tl + ql th,
   sl = ql tl; 1, the horizontal one: sh = qh p, sl = ql p (sm untouched). */
inline void block_emulated(__local const uint* xa, __local const uint* xw, uint lane,
                           uint planes, int4* sh, int4* sm, int4* sl) {
    for (uint ch = 0; ch < 4u; ++ch) {
        int4 h = (int4)(0), m = (int4)(0), l = (int4)(0);
        for (uint c = 0; c < NK; ++c) {
            uint s0 = 2u * c;
            uint s1 = (2u * c + 1u) % NH;
            bool two = 2u * c + 1u < NH;
            h = mma_u8_emulated(xa, xw, lane, c, 0u, s0, s1, two, 0u, ch, h);
            l = mma_u8_emulated(xa, xw, lane, c, 1u, s0, s1, two, planes - 1u, ch, l);
            if (planes == 2u) {
                m = mma_u8_emulated(xa, xw, lane, c, 0u, s0, s1, two, 1u, ch, m);
                m = mma_u8_emulated(xa, xw, lane, c, 1u, s0, s1, two, 0u, ch, m);
            }
        }
        sh[ch] = h;
        sl[ch] = l;
        if (planes == 2u) sm[ch] = m;
    }
}
/* The first warp's A fragments into xa (once; the first block's barrier publishes them). */
#define VM_PUBLISH_A                                                                       \
    __local uint* xa = xa_;                                                                \
    __local uint* xw = xw_ + (lid & ~31u) * NH * 8u;                                       \
    for (uint c = 0; c < NK && lid < 32u; ++c)                                             \
        for (uint p = 0; p < 2u; ++p) {                                                    \
            uint4 a = p ? al[c] : ah[c];                                                   \
            VM_XA(lane, c, p, 0u) = a.x;                                                   \
            VM_XA(lane, c, p, 1u) = a.y;                                                   \
            VM_XA(lane, c, p, 2u) = a.z;                                                   \
            VM_XA(lane, c, p, 3u) = a.w;                                                   \
        }
#else
#define MMA_SCRATCH
inline void mma_u8(uint4 a, uint2 b, int4* c) {
    int4 d;
    __asm__("mma.sync.aligned.m16n8k32.row.col.s32.u8.u8.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
            "{%8,%9}, {%10,%11,%12,%13};"
            : "=r"(d.x), "=r"(d.y), "=r"(d.z), "=r"(d.w)
            : "r"(a.x), "r"(a.y), "r"(a.z), "r"(a.w), "r"(b.x), "r"(b.y), "r"((*c).x),
              "r"((*c).y), "r"((*c).z), "r"((*c).w));
    *c = d;
}
/* The same on the first 16 columns of A and rows of B (a.x, a.y; b.x): a chunk's second half
   that lies beyond the window (an odd number of halves) costs no instruction. */
inline void mma_u8_k16(uint4 a, uint b, int4* c) {
    int4 d;
    __asm__("mma.sync.aligned.m16n8k16.row.col.s32.u8.u8.s32 {%0,%1,%2,%3}, {%4,%5}, {%6}, "
            "{%7,%8,%9,%10};"
            : "=r"(d.x), "=r"(d.y), "=r"(d.z), "=r"(d.w)
            : "r"(a.x), "r"(a.y), "r"(b), "r"((*c).x), "r"((*c).y), "r"((*c).z), "r"((*c).w));
    *c = d;
}
/* Chunk product: both halves of B (b0, b1) or only the first (`two` false). */
#define MMA_CHUNK(A, b0, b1, two, C)                                                       \
    do {                                                                                   \
        if (two)                                                                           \
            mma_u8((A), (uint2)((b0), (b1)), &(C));                                        \
        else                                                                               \
            mma_u8_k16((A), (b0), &(C));                                                   \
    } while (0)
#endif

/* The sums of one block for each channel into sh, SM, sl (int4[4] each: a channel's D
   fragments) from the window's byte planes HH, HL: `planes` 2, the vertical pass (the
   intermediate's high and low bytes): sh = qh th, sm = qh tl + ql th, sl = ql tl; 1, the
   horizontal pass (HH = HL: the pixels): sh = qh p, sl = ql p (SM untouched). Emulated, each
   lane publishes its window and the products come from the other lanes' words, between two
   barriers. */
#if CLPIX_WARP_EMULATED
#define BLOCK_SUMS(HH, HL, SM, planes)                                                     \
    do {                                                                                   \
        for (uint s_ = 0; s_ < NH; ++s_)                                                   \
            for (uint ch_ = 0; ch_ < 4u; ++ch_) {                                          \
                VM_XW(lane, s_, ch_, 0u) = (HH)[s_][ch_];                                  \
                if ((planes) == 2u) VM_XW(lane, s_, ch_, 1u) = (HL)[s_][ch_];              \
            }                                                                              \
        barrier(CLK_LOCAL_MEM_FENCE);                                                      \
        block_emulated(xa, xw, lane, (planes), sh, SM, sl);                                \
        barrier(CLK_LOCAL_MEM_FENCE);                                                      \
    } while (0)
#else
#define BLOCK_SUMS(HH, HL, SM, planes)                                                     \
    do {                                                                                   \
        _Pragma("unroll") for (uint ch_ = 0; ch_ < 4u; ++ch_) {                            \
            sh[ch_] = (int4)(0);                                                           \
            sl[ch_] = (int4)(0);                                                           \
            if ((planes) == 2u) (SM)[ch_] = (int4)(0);                                     \
            _Pragma("unroll") for (uint c_ = 0; c_ < NK; ++c_) {                           \
                uint s0_ = 2u * c_, s1_ = (2u * c_ + 1u) % NH;                             \
                bool two_ = 2u * c_ + 1u < NH;                                             \
                MMA_CHUNK(ah[c_], (HH)[s0_][ch_], (HH)[s1_][ch_], two_, sh[ch_]);          \
                if ((planes) == 2u) {                                                      \
                    MMA_CHUNK(ah[c_], (HL)[s0_][ch_], (HL)[s1_][ch_], two_, (SM)[ch_]);    \
                    MMA_CHUNK(al[c_], (HH)[s0_][ch_], (HH)[s1_][ch_], two_, (SM)[ch_]);    \
                }                                                                          \
                MMA_CHUNK(al[c_], (HL)[s0_][ch_], (HL)[s1_][ch_], two_, sl[ch_]);          \
            }                                                                              \
        }                                                                                  \
    } while (0)
#endif
#define VM_SUMS(HH, HL) BLOCK_SUMS(HH, HL, sm, 2u)
#define HM_SUMS(HP) BLOCK_SUMS(HP, HP, sh, 1u)

/* The horizontal block's intermediate values from sh, sl: t = (2^8 sh + sl + 128) >> 8 as 4
   u16 a pixel (two words), at pixel g and rows 2 tq (ta0), 2 tq + 1 (ta1), and at pixel g + 8
   (tb0, tb1): the D fragment's x, y, z, w. */
#define HM_RESULT                                                                          \
    uint4 tv_[4];                                                                          \
    _Pragma("unroll") for (uint ch_ = 0; ch_ < 4u; ++ch_) tv_[ch_] =                       \
        ((as_uint4(sh[ch_]) << 8) + as_uint4(sl[ch_]) + 128u) >> 8;                        \
    uint2 ta0 = (uint2)(tv_[0].x | tv_[1].x << 16, tv_[2].x | tv_[3].x << 16);             \
    uint2 ta1 = (uint2)(tv_[0].y | tv_[1].y << 16, tv_[2].y | tv_[3].y << 16);             \
    uint2 tb0 = (uint2)(tv_[0].z | tv_[1].z << 16, tv_[2].z | tv_[3].z << 16);             \
    uint2 tb1 = (uint2)(tv_[0].w | tv_[1].w << 16, tv_[2].w | tv_[3].w << 16)

/* Byte k of the A fragment's weight plane (shift 8: high bytes, 0: low) at output row m of a
   block and input row r (relative to the block's first row): q[r - m + W] or 0 outside. */
inline uint vm_weight(__constant uint* q, int r, int m, uint shift) {
    int i = r - m + (int)W;
    return (i >= 0 && i <= 2 * (int)W) ? (q[i] >> shift) & 0xffu : 0u;
}

/* The A fragment of chunk c (input rows 32 c - OFF + 0..31 of a block), plane `shift`, for
   lane (g, tq): rows g and g + 8, columns 4 tq + 0..3 and 16 + 4 tq + 0..3. */
inline uint4 vm_a(__constant uint* q, uint c, uint g, uint tq, uint shift) {
    uint4 a = (uint4)(0u);
    int r0 = (int)(32u * c) - (int)OFF + (int)(4u * tq);
    for (uint b = 0; b < 4u; ++b) {
        a.x |= vm_weight(q, r0 + (int)b, (int)g, shift) << (8u * b);
        a.y |= vm_weight(q, r0 + (int)b, (int)g + 8, shift) << (8u * b);
        a.z |= vm_weight(q, r0 + 16 + (int)b, (int)g, shift) << (8u * b);
        a.w |= vm_weight(q, r0 + 16 + (int)b, (int)g + 8, shift) << (8u * b);
    }
    return a;
}

/* Declares this lane's A fragments of every chunk, high bytes (ah) and low (al), the same in
   both passes; emulated, also publishes them. */
#if CLPIX_WARP_EMULATED
#define VM_WEIGHTS_PUBLISH VM_PUBLISH_A
#else
#define VM_WEIGHTS_PUBLISH
#endif
#define VM_WEIGHTS                                                                         \
    uint4 ah[NK], al[NK];                                                                  \
    _Pragma("unroll") for (uint c = 0; c < NK; ++c) {                                      \
        ah[c] = vm_a(q, c, g, tq, 8u);                                                     \
        al[c] = vm_a(q, c, g, tq, 0u);                                                     \
    }                                                                                      \
    VM_WEIGHTS_PUBLISH

/* Intermediate row p of pixel px through the border (a zero row as zeros), as its two words
   (channels 0 | 1 << 16, 2 | 3 << 16). */
inline uint2 vm_load(__global const uint2* t, uint width, uint height, uint border, int p,
                     uint px) {
    long r = blur_row(p, height, border);
    return r < 0 ? (uint2)(0u) : t[(size_t)r * width + px];
}

/* Byte `b` (0..3) of each of four words, packed in order. Eight byte permutes (inline prmt)
   for each 4 x 4 transpose were no faster on the H200 (w = 8 0.637 against 0.642-0.647 ms,
   w = 25 0.805-0.806 against 0.775-0.781): NVIDIA's compiler builds these itself. */
inline uint bytes4(uint w0, uint w1, uint w2, uint w3, uint b) {
    uint s = 8u * b;
    return ((w0 >> s) & 0xffu) | (((w1 >> s) & 0xffu) << 8) | (((w2 >> s) & 0xffu) << 16) |
           (((w3 >> s) & 0xffu) << 24);
}

/* Four rows' intermediate pixels (W0..W3: 4 u16 each, two words) as the B-fragment words of
   each channel, high bytes (H[c]) and low (L[c]). */
#define VM_SPLIT(H, L, W0, W1, W2, W3)                                                     \
    do {                                                                                   \
        (L)[0] = bytes4((W0).x, (W1).x, (W2).x, (W3).x, 0u);                               \
        (H)[0] = bytes4((W0).x, (W1).x, (W2).x, (W3).x, 1u);                               \
        (L)[1] = bytes4((W0).x, (W1).x, (W2).x, (W3).x, 2u);                               \
        (H)[1] = bytes4((W0).x, (W1).x, (W2).x, (W3).x, 3u);                               \
        (L)[2] = bytes4((W0).y, (W1).y, (W2).y, (W3).y, 0u);                               \
        (H)[2] = bytes4((W0).y, (W1).y, (W2).y, (W3).y, 1u);                               \
        (L)[3] = bytes4((W0).y, (W1).y, (W2).y, (W3).y, 2u);                               \
        (H)[3] = bytes4((W0).y, (W1).y, (W2).y, (W3).y, 3u);                               \
    } while (0)

/* The 8 B-fragment words of one half for lane (g, tq): rows 4 tq + 0..3 of the half, pixel g,
   for each channel its high and low bytes (H[c], L[c]). */
#define VM_HALF(H, L, h)                                                                   \
    do {                                                                                   \
        uint2 w_[4];                                                                       \
        VM_LOAD(w_, h);                                                                    \
        VM_SPLIT(H, L, w_[0], w_[1], w_[2], w_[3]);                                        \
    } while (0)
/* The 4 intermediate pixels of half h for lane (g, tq) into W[4]. */
#define VM_LOAD(W, h)                                                                      \
    do {                                                                                   \
        int r_ = top + (int)(h) * 16 + (int)(4u * tq);                                     \
        _Pragma("unroll") for (int b_ = 0; b_ < 4; ++b_)(W)[b_] =                          \
            vm_load(t, width, height, border, r_ + b_, px);                                \
    } while (0)

/* Output block j of the vertical sums sh, sm, sl (each channel's D fragments): combined,
   rounded, packed and stored. D: x, y at output row g, pixels 2 tq and 2 tq + 1; z, w at row
   g + 8. */
#define VM_STORE(j)                                                                        \
    do {                                                                                   \
        uint4 out[4];                                                                      \
        _Pragma("unroll")                                                                  \
        for (uint ch = 0; ch < 4u; ++ch) {                                                 \
            uint4 v = (as_uint4(sh[ch]) << 16) + (as_uint4(sm[ch]) << 8) + as_uint4(sl[ch]); \
            out[ch] = (v + (1u << 23)) >> 24;                                              \
        }                                                                                  \
        uint px0 = x0 + 2u * tq;                                                           \
        uint ya = y0 + j * 16u + g;                                                        \
        uint yb = ya + 8u;                                                                 \
        uint pa0 = out[0].x | out[1].x << 8 | out[2].x << 16 | out[3].x << 24;             \
        uint pa1 = out[0].y | out[1].y << 8 | out[2].y << 16 | out[3].y << 24;             \
        uint pb0 = out[0].z | out[1].z << 8 | out[2].z << 16 | out[3].z << 24;             \
        uint pb1 = out[0].w | out[1].w << 8 | out[2].w << 16 | out[3].w << 24;             \
        if (ya < y0 + rows) {                                                              \
            if (px0 < width) dst[(size_t)ya * width + px0] = pa0;                          \
            if (px0 + 1u < width) dst[(size_t)ya * width + px0 + 1u] = pa1;                \
        }                                                                                  \
        if (yb < y0 + rows) {                                                              \
            if (px0 < width) dst[(size_t)yb * width + px0] = pb0;                          \
            if (px0 + 1u < width) dst[(size_t)yb * width + px0 + 1u] = pb1;                \
        }                                                                                  \
    } while (0)

/* Groups of 128 work-items (4 warps, 8 pixels each, 32 a group across) walk strips of `strip`
   output rows (a multiple of 16). */
__kernel __attribute__((reqd_work_group_size(128, 1, 1)))
void blur_vm_u8(__global const uint2* t, uint width, uint height, __constant uint* q, uint w,
                uint border, __global uint* dst, uint xg, uint strip) {
    MMA_SCRATCH
    uint lid = get_local_id(0);
    uint lane = lid & 31u, g = lane >> 2, tq = lane & 3u;
    uint grp = get_group_id(0);
    uint sy = grp / xg;
    uint x0 = (grp - sy * xg) * 32u + (lid >> 5) * 8u; /* the warp's first pixel */
    uint px = min(x0 + g, width - 1u);                 /* this lane's pixel for B */
    uint y0 = sy * strip;
    uint rows = min(strip, height - y0);
    uint blocks = (rows + 15u) / 16u;
    int top = (int)y0 - (int)OFF; /* first row of half 0 of the window */
    VM_WEIGHTS
    /* Block j's window: halves j + s (input rows top + 16 (j + s) ...) in slots s, shifted down
       a slot after each block (register moves: a ring of slots needs the block loop unrolled
       NH times, which clang declined to do at W = 25). */
    uint hh[NH][4], hl[NH][4];
#pragma unroll
    for (uint s = 0; s + 1u < NH; ++s) VM_HALF(hh[s], hl[s], s);
    uint2 next[4];
    VM_LOAD(next, NH - 1u);
    for (uint j = 0; j < blocks; ++j) { /* the same for the whole group */
        VM_SPLIT(hh[NH - 1u], hl[NH - 1u], next[0], next[1], next[2], next[3]);
        if (j + 1u < blocks) VM_LOAD(next, j + NH); /* a block ahead */
        int4 sh[4], sm[4], sl[4];
        VM_SUMS(hh, hl);
        VM_STORE(j);
#pragma unroll
        for (uint s = 0; s + 1u < NH; ++s)
#pragma unroll
            for (uint ch = 0; ch < 4u; ++ch) {
                hh[s][ch] = hh[s + 1u][ch];
                hl[s][ch] = hl[s + 1u][ch];
            }
    }
}
/* The horizontal pass on the tensor cores, the same method along x: a warp owns 8 rows of a
   strip of columns and computes 16 output pixels at a time, for each channel, as the product
   of the weights' band (A, high and low bytes) with 32 input pixels of the 8 rows (B, one byte
   plane: the pixels are 8-bit): h = 2^8 sum qh p + sum ql p, t = (h + 128) >> 8, written as
   the intermediate blur_vs_u8 and blur_vm_u8 read (4 u16 a pixel). */

/* The B-fragment words of one half for lane (g, tq): pixels 4 tq + 0..3 of the half, row g, a
   word a channel (P[c]). */
#define HM_HALF(P, h)                                                                      \
    do {                                                                                   \
        uint4 v_;                                                                          \
        HM_LOAD(v_, h);                                                                    \
        HM_BYTES(P, v_);                                                                   \
    } while (0)
/* The 4 pixels of half h for lane (g, tq) (row `row`, from pixel `left` on), through the
   border. */
#define HM_LOAD(V, h)                                                                      \
    do {                                                                                   \
        long x_ = (long)left + (long)(h) * 16 + (long)(4u * tq);                           \
        if (x_ >= 0 && x_ + 3 < (long)width) {                                             \
            (V) = vload4(0, row + x_);                                                     \
        } else {                                                                           \
            (V).x = row_px(row, x_, width, border);                                        \
            (V).y = row_px(row, x_ + 1, width, border);                                    \
            (V).z = row_px(row, x_ + 2, width, border);                                    \
            (V).w = row_px(row, x_ + 3, width, border);                                    \
        }                                                                                  \
    } while (0)
/* Four pixels as a B-fragment word a channel. */
#define HM_BYTES(P, V)                                                                     \
    do {                                                                                   \
        (P)[0] = bytes4((V).x, (V).y, (V).z, (V).w, 0u);                                   \
        (P)[1] = bytes4((V).x, (V).y, (V).z, (V).w, 1u);                                   \
        (P)[2] = bytes4((V).x, (V).y, (V).z, (V).w, 2u);                                   \
        (P)[3] = bytes4((V).x, (V).y, (V).z, (V).w, 3u);                                   \
    } while (0)

/* Groups of 128 work-items (4 warps of 8 rows, 32 rows a group) walk strips of `strip` pixels
   (a multiple of 16) of their rows, `xs` strips across; neighbouring groups take neighbouring
   strips of the same rows (H200, 8192², w = 8, strips of 256: 0.285 ms, against 0.316 with
   neighbouring groups one above the other). */
__kernel __attribute__((reqd_work_group_size(128, 1, 1)))
void blur_hm_u8(__global const uint* src, uint width, uint height, __constant uint* q, uint w,
                uint border, __global uint2* t, uint xs, uint strip) {
    MMA_SCRATCH
    uint lid = get_local_id(0);
    uint lane = lid & 31u, g = lane >> 2, tq = lane & 3u;
    uint grp = get_group_id(0);
    uint sy = grp / xs, sx = grp - sy * xs; /* neighbouring groups: neighbouring strips */
    uint y0 = sy * 32u + (lid >> 5) * 8u; /* the warp's first row */
    __global const uint* row = src + (size_t)min(y0 + g, height - 1u) * width;
    uint x0 = sx * strip;
    uint cols = min(strip, width - x0);
    uint blocks = (cols + 15u) / 16u;
    int left = (int)x0 - (int)OFF; /* first pixel of half 0 of the window */
    VM_WEIGHTS
    /* Block j's window: halves j + s in slots s, shifted down a slot after each block. */
    uint hp[NH][4];
#pragma unroll
    for (uint s = 0; s + 1u < NH; ++s) HM_HALF(hp[s], s);
    uint4 next;
    HM_LOAD(next, NH - 1u);
    for (uint j = 0; j < blocks; ++j) { /* the same for the whole group */
        HM_BYTES(hp[NH - 1u], next);
        if (j + 1u < blocks) HM_LOAD(next, j + NH); /* a block ahead */
        int4 sh[4], sl[4];
        HM_SUMS(hp);
        HM_RESULT;
        uint xa_ = x0 + j * 16u + g, xb_ = xa_ + 8u;
        uint ra = y0 + 2u * tq, rb = ra + 1u;
        if (xa_ < x0 + cols) {
            if (ra < height) t[(size_t)ra * width + xa_] = ta0;
            if (rb < height) t[(size_t)rb * width + xa_] = ta1;
        }
        if (xb_ < x0 + cols) {
            if (ra < height) t[(size_t)ra * width + xb_] = tb0;
            if (rb < height) t[(size_t)rb * width + xb_] = tb1;
        }
#pragma unroll
        for (uint s = 0; s + 1u < NH; ++s)
#pragma unroll
            for (uint ch = 0; ch < 4u; ++ch) hp[s][ch] = hp[s + 1u][ch];
    }
}
#endif /* the tensor-core passes */
