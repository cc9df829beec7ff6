/* The blur's borders (docs/SPEC.md), shared by its programs: where a coordinate outside the
 * image reads. border: 0 Clamp, 1 Reflect (no edge repeat, repeated; 0 for n = 1), 2 Wrap,
 * 3 Zero (-1: a zero pixel).
 */
#ifndef CLPIX_BLUR_BORDER_H
#define CLPIX_BLUR_BORDER_H

/* NAME(p, n, border): the source coordinate of p on a side of n, or -1 for a zero pixel, in
   the signed type T (blur_map: long; the register kernel's reg_map: int). */
#define BLUR_DEFINE_MAP(NAME, T)                     \
    inline T NAME(T p, T n, uint border) {           \
        if (p >= 0 && p < n) return p;               \
        if (border == 0u) return p < 0 ? 0 : n - 1;  \
        if (border == 3u) return -1;                 \
        if (border == 2u) {                          \
            T m = p % n;                             \
            return m < 0 ? m + n : m;                \
        }                                            \
        if (n == 1) return 0;                        \
        T period = 2 * (n - 1);                      \
        T m = p % period;                            \
        if (m < 0) m += period;                      \
        return m >= n ? period - m : m;              \
    }
BLUR_DEFINE_MAP(blur_map, long)

/* Row p of a side of `height` rows through the border, or -1 for a zero row: blur_map is
   evaluated only outside (32-bit row arithmetic: the vertical passes call this once a row). */
inline long blur_row(int p, uint height, uint border) {
    return (uint)p < height ? (long)p : blur_map(p, height, border);
}

#endif
