/* The compaction of every pixel format other than RGBA8 (docs/SPEC.md, "Compaction of every
 * format"): the scan indices of the pixels whose order key (formats.h: the key itself for
 * integer formats, the f32 key's order bits for float formats, 0 for a NaN key) is above t,
 * in scan order. With flip (KEY_MAX, or all ones for float keys; 0 otherwise) the keys are
 * complemented first, so that the darkest come first (the k darkest); a NaN key stays 0. CLPIX_FORMAT chooses the format. Two kernels over one buffer of whole chunks
 * (n pixels, the rest zeros): typed_count counts each group's kept pixels, the host scans the
 * counts, and typed_keep writes each group's indices from its offset, chunk after chunk in
 * order (a work-group scan of the chunks' counts ranks them). Every group walks the same
 * contiguous range of chunks in both kernels (clpix_range).
 */

/* The pixels kept in chunk c (of the first n): their bits, pixel j at bit j. */
inline uint kept_of_chunk(__global const uint* px, uint c, uint n, uint t, uint flip) {
    uint w[CW];
    load_chunk(px, c, w);
    uint first = c * PPC, bits = 0u;
    for (uint j = 0; j < PPC; ++j) {
#if FLOAT_KEYS
        uint key = order_of_bits(float_key_bits(w, j));
        key = key ? key ^ flip : 0u;
#else
        uint key = int_key(w, j) ^ flip;
#endif
        if (key > t && first + j < n) bits |= 1u << j;
    }
    return bits;
}

__kernel void typed_count(__global const uint* px, uint n, uint t, uint flip,
                          __global uint* counts, __local uint* total) {
    uint chunks = (n + PPC - 1u) / PPC;
    uint b, e;
    clpix_range(chunks, get_group_id(0), get_num_groups(0), &b, &e);
    if (get_local_id(0) == 0) total[0] = 0u;
    barrier(CLK_LOCAL_MEM_FENCE);
    uint mine = 0u;
    for (uint c = b + get_local_id(0); c < e; c += get_local_size(0))
        mine += popcount(kept_of_chunk(px, c, n, t, flip));
    if (mine) atomic_add(total, mine);
    barrier(CLK_LOCAL_MEM_FENCE);
    if (get_local_id(0) == 0) counts[get_group_id(0)] = total[0];
}

/* Each work-item takes KEEP_CHUNKS (4 or 8) chunks of a tile of L * KEEP_CHUNKS, L apart
   (coalesced): their counts (at most 16 each) packed in 16-bit fields of a ulong2 (chunks 0-3 in
   x, 4-7 in y), so that one work-group scan ranks them all (a prefix is at most 16 L < 2^16).
   offsets: the groups' first output positions, and the total after them. scan: L ulong2s of
   local memory. */
#ifndef KEEP_CHUNKS
#define KEEP_CHUNKS 8u
#endif
inline uint field_of(ulong2 v, uint k) {
    ulong w = k < 4u ? v.x : v.y;
    return (uint)((w >> (16u * (k & 3u))) & 0xffffu);
}
__kernel void typed_keep(__global const uint* px, uint n, uint t, uint flip,
                         __global const uint* offsets, __global uint* out,
                         __local ulong2* scan) {
    uint L = get_local_size(0), lid = get_local_id(0), g = get_group_id(0);
    uint at = offsets[g];
    if (offsets[g + 1u] == at) return; /* the whole group keeps nothing */
    uint chunks = (n + PPC - 1u) / PPC;
    uint b, e;
    clpix_range(chunks, g, get_num_groups(0), &b, &e);
    for (uint c0 = b; c0 < e; c0 += L * KEEP_CHUNKS) {
        uint bits[KEEP_CHUNKS];
        ulong2 packed = (ulong2)(0ul);
        for (uint k = 0; k < KEEP_CHUNKS; ++k) {
            uint c = c0 + k * L + lid;
            bits[k] = c < e ? kept_of_chunk(px, c, n, t, flip) : 0u;
            ulong field = (ulong)popcount(bits[k]) << (16u * (k & 3u));
            if (k < 4u) packed.x |= field;
            else packed.y |= field;
        }
        scan[lid] = packed;
        barrier(CLK_LOCAL_MEM_FENCE);
        /* Inclusive scan of the packed counts (Hillis-Steele). */
        for (uint d = 1; d < L; d <<= 1) {
            ulong2 add = lid >= d ? scan[lid - d] : (ulong2)(0ul);
            barrier(CLK_LOCAL_MEM_FENCE);
            scan[lid] += add;
            barrier(CLK_LOCAL_MEM_FENCE);
        }
        ulong2 before = scan[lid] - packed, tile = scan[L - 1u];
        uint start = at;
        for (uint k = 0; k < KEEP_CHUNKS; ++k) {
            uint pos = start + field_of(before, k);
            uint first = (c0 + k * L + lid) * PPC;
            for (uint j = 0; j < PPC; ++j) {
                if (bits[k] & (1u << j)) out[pos++] = first + j;
            }
            start += field_of(tile, k);
        }
        at = start;
        barrier(CLK_LOCAL_MEM_FENCE);
    }
}

/* The bytes of the pixels at idx[0..m) of this buffer, one pixel after another: the kept
 * pixels' values of an image an engine holds, gathered where they are (one pixel a
 * work-item). */
#define GATHER_BPP (CW * 4u / PPC)
__kernel void typed_gather(__global const uchar* px, __global const uint* idx, uint m,
                           __global uchar* out) {
    uint i = get_global_id(0);
    if (i >= m) return;
    ulong from = (ulong)idx[i] * GATHER_BPP, to = (ulong)i * GATHER_BPP;
    for (uint b = 0; b < GATHER_BPP; ++b) out[to + b] = px[from + b];
}
