/* k-selection helpers. invert_rgb: dst = src with r, g, b inverted (alpha kept), so that the
 * weighted sum 21 r + 72 g + 7 b becomes exactly 25500 minus it: compaction of the inverted
 * image selects the darkest pixels. May run in place (src == dst). */
__kernel void invert_rgb(__global const uint* src, __global uint* dst, uint n) {
    /* Four pixels a work-item: with one, NVIDIA's H200 moved 0.8 TB/s (too few bytes in
       flight), a fifth of a copy's rate. */
    uint i = get_global_id(0), whole = n / 4u;
    if (i < whole) {
        vstore4(vload4(i, src) ^ (uint4)(0x00ffffffu), i, dst);
    } else if (i == whole) {
        for (uint j = 4u * whole; j < n; ++j) dst[j] = src[j] ^ 0x00ffffffu;
    }
}
