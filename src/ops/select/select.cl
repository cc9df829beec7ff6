/* k-selection helpers. invert_rgb: dst = src with r, g, b inverted (alpha kept), so that the
 * weighted sum 21 r + 72 g + 7 b becomes exactly 25500 minus it: compaction of the inverted
 * image selects the darkest pixels. May run in place (src == dst). */
__kernel void invert_rgb(__global const uint* src, __global uint* dst, uint n) {
    uint i = get_global_id(0);
    if (i < n) dst[i] = src[i] ^ 0x00ffffffu;
}
