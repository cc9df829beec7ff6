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
