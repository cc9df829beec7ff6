/* clpix shared header: luminance and pixel access, pasted before every program.
 *
 * Pixels are RGBA8 packed little-endian into a uint: r | g << 8 | b << 16 | a << 24.
 * Build options (from device queries, see src/opencl.rs):
 *   CLPIX_WG          work-group size of the streaming kernels (1 on CPU devices)
 *   CLPIX_CONTIGUOUS  1 on CPU devices: each work-item walks a contiguous range;
 *                     0 on GPUs: the work-items of a group read neighbouring elements.
 *   CLPIX_WARP_EMULATED  see below.
 */
#ifndef CLPIX_COMMON_H
#define CLPIX_COMMON_H

#ifndef CLPIX_WG
#define CLPIX_WG 256
#endif
#ifndef CLPIX_CONTIGUOUS
#define CLPIX_CONTIGUOUS 0
#endif
/* 1 (the tests): NVIDIA's PTX intrinsics in the NVIDIA program variants (warp ballots, tensor
   products) emulated through local memory and barriers, so that their logic runs anywhere. */
#ifndef CLPIX_WARP_EMULATED
#define CLPIX_WARP_EMULATED 0
#endif

#define CLPIX_MAX_LUMA 1023u
/* Largest weighted sum 21 r + 72 g + 7 b. */
#define CLPIX_MAX_WSUM 25500u

/* 21 r + 72 g + 7 b, the luminance before scaling; luminance is non-decreasing in it. */
inline uint clpix_wsum(uint p) {
    return 21u * (p & 0xffu) + 72u * ((p >> 8) & 0xffu) + 7u * ((p >> 16) & 0xffu);
}
inline uint4 clpix_wsum4(uint4 p) {
    return 21u * (p & 0xffu) + 72u * ((p >> 8) & 0xffu) + 7u * ((p >> 16) & 0xffu);
}

/* SPEC.md: L = (1023 * (21 r + 72 g + 7 b)) / 25500, integer division. */
inline uint clpix_luma_of_wsum(uint s) { return (1023u * s) / 25500u; }
inline uint4 clpix_luma_of_wsum4(uint4 s) { return (1023u * s) / 25500u; }
inline uint clpix_luma(uint p) { return clpix_luma_of_wsum(clpix_wsum(p)); }
inline uint4 clpix_luma4(uint4 p) { return clpix_luma_of_wsum4(clpix_wsum4(p)); }

/* The contiguous range [*begin, *end) of n elements that part `part` of `parts` walks. */
inline void clpix_range(uint n, uint part, uint parts, uint* begin, uint* end) {
    ulong per = ((ulong)n + parts - 1) / parts;
    ulong b = min((ulong)n, (ulong)part * per);
    *begin = (uint)b;
    *end = (uint)min((ulong)n, b + per);
}

#endif
