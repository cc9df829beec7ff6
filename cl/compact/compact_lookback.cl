/* Scan-order compaction in one pass on any GPU with cl_khr_int64_base_atomics: the portable
 * look-back of lookback.cl (pasted before this file). Work-group t takes tile t: `rounds`
 * relocation tiles of RTILE pixels (8 a work-item, two 16-byte loads). It ranks each round's
 * kept pixels with a work-group scan and stages them, in scan order, in local memory (the
 * staging `st`: rounds * RTILE words, twice with indices); then it finds their offset by the
 * look-back (a silent predecessor's tile counted here, as range_kept counts it) and copies
 * them out, coalesced. The image is read once; no count or scan kernel, no counts buffer.
 * The host picks `rounds` from the device's local memory (group_lookback_rounds in plan.rs).
 * CLB_TWO_READS=1 (a build option, to measure): count the tile first, look back, then
 * relocate it as compact_relocate does (the tile read twice, the second time mostly from the
 * cache; staging of one round).
 */
#if !CLPIX_CONTIGUOUS && CLPIX_HAS_INT64_ATOMICS
#ifndef CLB_TWO_READS
#define CLB_TWO_READS 0
#endif

/* Tile t's kept pixels of px[0, n) in scan order, from the look-back's offset on. */
inline void compact_lookback_tile(__global const uint* px, uint n, uint wmin,
                                  volatile __global ulong* words, uint epoch, uint rounds,
                                  const uint with_idx, __global uint* out_idx,
                                  __global uint* out_px, __local uint* sh, __local ulong* win,
                                  __local uint* st_px, __local uint* st_idx) {
    uint t = get_group_id(0), len = rounds * RTILE;
    uint b = t * len, e = min(n, b + len);
#if CLB_TWO_READS
    uint count = wg_sum(range_kept(px, b, e, wmin), sh);
    uint run = plb_offset(words, epoch, t, count, px, n, wmin, len, PLB_KEPT, 0u, win, sh);
    if (count == 0) return; /* the same in every work-item */
    relocate_tiles(px, px, b, e, wmin, run, with_idx, 0u, out_idx, out_px, sh, st_px, st_idx);
#else
    uint lid = get_local_id(0), count = 0;
    for (uint r = 0; r < rounds; ++r) {
        uint at = b + r * RTILE, first = at + lid * RELOC_PER;
        uint v[RELOC_PER], m = 0, total;
        load_run(px, at, e, RELOC_PER, v);
        for (uint k = 0; k < RELOC_PER; ++k)
            m |= (clpix_wsum(v[k]) >= wmin && first + k < e ? 1u : 0u) << k;
        uint x = count + wg_scan(popcount(m), sh, &total);
        for (uint k = 0; k < RELOC_PER; ++k) {
            if (m & (1u << k)) {
                st_px[x] = v[k];
                if (with_idx) st_idx[x] = first + k;
                ++x;
            }
        }
        count += total;
    }
    uint run = plb_offset(words, epoch, t, count, px, n, wmin, len, PLB_KEPT, 0u, win, sh);
    barrier(CLK_LOCAL_MEM_FENCE); /* every work-item's staged pixels visible */
    for (uint j = lid; j < count; j += CLPIX_WG) {
        out_px[run + j] = st_px[j];
        if (with_idx) out_idx[run + j] = st_idx[j];
    }
#endif
}

/* The staging is a __local argument sized by the host: as static arrays, Oclgrind counted
   them against other kernels of the program too (compact_lookback needed 47,872 bytes there,
   over its 32 KiB). */
__kernel __attribute__((reqd_work_group_size(CLPIX_WG, 1, 1)))
void compact_lookback_group(__global const uint* px, uint n, uint wmin,
                            volatile __global ulong* words, uint epoch, uint rounds,
                            __global uint* out_px, __local uint* st) {
    __local uint sh[CLPIX_WG];
    __local ulong win[PLB_WINDOW];
    compact_lookback_tile(px, n, wmin, words, epoch, rounds, 0u, out_px, out_px, sh, win, st,
                          st);
}

/* compact_lookback_group with the part-local indices into out_idx (the staging: the pixels,
   then their indices). */
__kernel __attribute__((reqd_work_group_size(CLPIX_WG, 1, 1)))
void compact_lookback_group_indexed(__global const uint* px, uint n, uint wmin,
                                    volatile __global ulong* words, uint epoch, uint rounds,
                                    __global uint* out_idx, __global uint* out_px,
                                    __local uint* st) {
    __local uint sh[CLPIX_WG];
    __local ulong win[PLB_WINDOW];
    compact_lookback_tile(px, n, wmin, words, epoch, rounds, 1u, out_idx, out_px, sh, win, st,
                          st + rounds * RTILE);
}
#endif
