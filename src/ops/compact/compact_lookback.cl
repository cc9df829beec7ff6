/* Scan-order compaction in one pass on any GPU with cl_khr_int64_base_atomics: the portable
 * look-back of lookback.cl (pasted before this file). Work-group t takes tile t (CLB_ROUNDS
 * relocation tiles of RTILE pixels): it counts the tile's kept pixels, finds their offset by
 * the look-back (a silent predecessor's tile counted here, as range_kept counts it), then
 * relocates them as compact_relocate does. The tile is read twice, the second time mostly from
 * the cache; no count or scan kernel, no counts buffer.
 */
#if !CLPIX_CONTIGUOUS && CLPIX_HAS_INT64_ATOMICS
/* Relocation tiles a work-group takes (a tile of 8192 pixels with 256 work-items). */
#ifndef CLB_ROUNDS
#define CLB_ROUNDS 4u
#endif
#define CLB_TILE (CLB_ROUNDS * RTILE)

/* Tile t's kept pixels of px[0, n) in scan order, from the look-back's offset on. */
inline void compact_lookback_tile(__global const uint* px, uint n, uint wmin,
                                  volatile __global ulong* words, uint epoch, const uint with_idx,
                                  __global uint* out_idx, __global uint* out_px,
                                  __local uint* sh, __local ulong* win, __local uint* st_px,
                                  __local uint* st_idx) {
    uint t = get_group_id(0), b = t * CLB_TILE, e = min(n, b + CLB_TILE);
    uint count = wg_sum(range_kept(px, b, e, wmin), sh);
    uint run = plb_offset(words, epoch, t, count, px, n, wmin, CLB_TILE, PLB_KEPT, 0u, win, sh);
    if (count == 0) return; /* the same in every work-item */
    relocate_tiles(px, px, b, e, wmin, run, with_idx, 0u, out_idx, out_px, sh, st_px, st_idx);
}

/* The staging (RTILE words; with indices, 2 * RTILE: the pixels, then the indices) is a __local
   argument sized by the host: as static arrays, Oclgrind counted them against other kernels
   of the program too (compact_lookback needed 47,872 bytes there, over its 32 KiB). */
__kernel __attribute__((reqd_work_group_size(CLPIX_WG, 1, 1)))
void compact_lookback_group(__global const uint* px, uint n, uint wmin,
                            volatile __global ulong* words, uint epoch, __global uint* out_px,
                            __local uint* st) {
    __local uint sh[CLPIX_WG];
    __local ulong win[PLB_WINDOW];
    compact_lookback_tile(px, n, wmin, words, epoch, 0u, out_px, out_px, sh, win, st, st);
}

/* compact_lookback_group with the part-local indices into out_idx. */
__kernel __attribute__((reqd_work_group_size(CLPIX_WG, 1, 1)))
void compact_lookback_group_indexed(__global const uint* px, uint n, uint wmin,
                                    volatile __global ulong* words, uint epoch,
                                    __global uint* out_idx, __global uint* out_px,
                                    __local uint* st) {
    __local uint sh[CLPIX_WG];
    __local ulong win[PLB_WINDOW];
    compact_lookback_tile(px, n, wmin, words, epoch, 1u, out_idx, out_px, sh, win, st,
                          st + RTILE);
}
#endif
