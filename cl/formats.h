/* Pixel formats other than RGBA8, for the kernels that take them (docs/SPEC.md, "Pixel
 * formats"): the format's chunk of pixels, its channels and its key. Pasted before the
 * programs that read such images (after common.h). CLPIX_FORMAT chooses the format:
 *   0 mono8, 1 mono16 (without a define), 2 mono f32, 3 rgb8, 4 rgba8, 5 rgba16, 6 rgba f32.
 *
 * Pixels are read in chunks of 16 bytes (48 for rgb8: 16 pixels), aligned 16-byte loads: the
 * host pads the buffer to whole chunks (zeros) and the kernels ignore the pixels past n.
 * PPC is the pixels a chunk holds, CW its words, CH a pixel's channels.
 */
#ifndef CLPIX_FORMATS_H
#define CLPIX_FORMATS_H

/* The keys of RGBA f32 are fma(0.07, b, fma(0.72, g, 0.21 r)): nothing else fused. */
#pragma OPENCL FP_CONTRACT OFF
#ifndef CLPIX_FORMAT
#define CLPIX_FORMAT 1
#endif

#if CLPIX_FORMAT == 0
#define CH 1u
#define PPC 16u
#define CW 4u
#define KEY_MAX 255u
#elif CLPIX_FORMAT == 1
#define CH 1u
#define PPC 8u
#define CW 4u
#define KEY_MAX 65535u
#elif CLPIX_FORMAT == 2
#define CH 1u
#define PPC 4u
#define CW 4u
#define FLOAT_KEYS 1
#elif CLPIX_FORMAT == 3
#define CH 3u
#define PPC 16u
#define CW 12u
#define KEY_MAX 1023u
#elif CLPIX_FORMAT == 4
#define CH 4u
#define PPC 4u
#define CW 4u
#define KEY_MAX 1023u
#elif CLPIX_FORMAT == 5
#define CH 4u
#define PPC 2u
#define CW 4u
#define KEY_MAX 65535u
#elif CLPIX_FORMAT == 6
#define CH 4u
#define PPC 1u
#define CW 4u
#define FLOAT_KEYS 1
#else
#error "CLPIX_FORMAT: one of 0 to 6"
#endif

#ifndef FLOAT_KEYS
#define FLOAT_KEYS 0
#endif


inline uint byte_at(const uint* w, uint k) { return (w[k >> 2] >> ((k & 3u) * 8u)) & 0xffu; }
inline uint half_at(const uint* w, uint k) { return (w[k >> 1] >> ((k & 1u) * 16u)) & 0xffffu; }

/* The f32 key of pixel j of a chunk, as bits. */
inline uint float_key_bits(const uint* w, uint j) {
#if CLPIX_FORMAT == 2
    return w[j];
#elif CLPIX_FORMAT == 6
    float r = as_float(w[0]), g = as_float(w[1]), b = as_float(w[2]);
    return as_uint(fma(0.07f, b, fma(0.72f, g, 0.21f * r)));
#else
    return 0u;
#endif
}

/* The order key of f32 bits (integer order = numeric order, -0 as +0); 0 for NaN. */
inline uint order_of_bits(uint b) {
    if ((b & 0x7fffffffu) > 0x7f800000u) return 0u;
    if ((b & 0x7fffffffu) == 0u) b = 0u;
    return (b >> 31) ? ~b : (b | 0x80000000u);
}

/* The integer key of pixel j of a chunk. */
inline uint int_key(const uint* w, uint j) {
#if CLPIX_FORMAT == 0
    return byte_at(w, j);
#elif CLPIX_FORMAT == 1
    return half_at(w, j);
#elif CLPIX_FORMAT == 3
    return (1023u * (21u * byte_at(w, 3u * j) + 72u * byte_at(w, 3u * j + 1u) +
                     7u * byte_at(w, 3u * j + 2u))) / 25500u;
#elif CLPIX_FORMAT == 4
    return (1023u * (21u * byte_at(w, 4u * j) + 72u * byte_at(w, 4u * j + 1u) +
                     7u * byte_at(w, 4u * j + 2u))) / 25500u;
#elif CLPIX_FORMAT == 5
    return (21u * half_at(w, 4u * j) + 72u * half_at(w, 4u * j + 1u) +
            7u * half_at(w, 4u * j + 2u)) / 100u;
#else
    return 0u;
#endif
}

/* Channel c of pixel j of a chunk: its value (integer formats) or its bits (f32). */
inline uint channel_of(const uint* w, uint j, uint c) {
#if CLPIX_FORMAT == 0
    return byte_at(w, j);
#elif CLPIX_FORMAT == 1
    return half_at(w, j);
#elif CLPIX_FORMAT == 2
    return w[j];
#elif CLPIX_FORMAT == 3
    return byte_at(w, 3u * j + c);
#elif CLPIX_FORMAT == 4
    return byte_at(w, 4u * j + c);
#elif CLPIX_FORMAT == 5
    return half_at(w, 4u * j + c);
#else
    return w[c];
#endif
}

inline void load_chunk(__global const uint* px, uint c, uint* w) {
    __global const uint4* p4 = (__global const uint4*)px + c * (CW / 4u);
    for (uint k = 0; k < CW / 4u; ++k) {
        uint4 v = p4[k];
        w[4u * k] = v.x;
        w[4u * k + 1u] = v.y;
        w[4u * k + 2u] = v.z;
        w[4u * k + 3u] = v.w;
    }
}

/* Calls VISIT(w, first, count) for every chunk this work-item takes, in increasing order: the
   whole chunks (count = PPC: the compiler drops every per-pixel bound), as a contiguous range
   per work-item on CPU devices or a grid-stride walk with two loads in flight on GPUs, then the
   last, partial chunk (count = n % PPC) on the last work-item, after all its others. */
#if CLPIX_CONTIGUOUS
#define CHUNK_LOOP(px, full, VISIT)                                                            \
    {                                                                                          \
        uint b_, e_;                                                                           \
        clpix_range(full, get_global_id(0), get_global_size(0), &b_, &e_);                     \
        for (uint c_ = b_; c_ < e_; ++c_) {                                                    \
            uint w_[CW];                                                                       \
            load_chunk(px, c_, w_);                                                            \
            VISIT(w_, c_ * PPC, PPC);                                                          \
        }                                                                                      \
    }
#else
#define CHUNK_LOOP(px, full, VISIT)                                                            \
    {                                                                                          \
        uint c_ = get_global_id(0), s_ = get_global_size(0);                                   \
        for (; c_ + s_ < full; c_ += 2u * s_) {                                                \
            uint a_[CW], b_[CW];                                                               \
            load_chunk(px, c_, a_);                                                            \
            load_chunk(px, c_ + s_, b_);                                                       \
            VISIT(a_, c_ * PPC, PPC);                                                          \
            VISIT(b_, (c_ + s_) * PPC, PPC);                                                   \
        }                                                                                      \
        if (c_ < full) {                                                                       \
            uint a_[CW];                                                                       \
            load_chunk(px, c_, a_);                                                            \
            VISIT(a_, c_ * PPC, PPC);                                                          \
        }                                                                                      \
    }
#endif
#define FOR_EACH_CHUNK(px, n, VISIT)                                                           \
    {                                                                                          \
        uint full_ = (n) / PPC;                                                                \
        CHUNK_LOOP(px, full_, VISIT)                                                           \
        if ((n) % PPC != 0u && get_global_id(0) == get_global_size(0) - 1u) {                  \
            uint t_[CW];                                                                       \
            load_chunk(px, full_, t_);                                                         \
            VISIT(t_, full_ * PPC, (n) % PPC);                                                 \
        }                                                                                      \
    }


#endif
