/* Blobs (docs/SPEC.md, "Blobs"): the connected components of the pixels whose key is above t,
 * by union-find over the pixels (the family of Playne & Hawick 2018, Allegretti et al. 2019):
 *   1. blob_init: parent[i] = i for foreground, NONE for background;
 *   2. blob_tiles: each work-group labels tiles of TILE_W × tile_h pixels in local memory
 *      (union-find with local atomics) and points every pixel at its tile's root;
 *   3. blob_borders: pixels on tile borders unite with their neighbours across the border:
 *      the larger root is pointed at the smaller with atomic_min, again from what it points to
 *      where another work-item moved first, so no work-item waits for another (no forward
 *      progress between work-groups is assumed);
 *   4. blob_jump, from the host until nothing changes: parent[i] = parent[parent[i]] between
 *      two buffers (pointer jumping: each round halves every path);
 *   5. blob_roots and the project's scan: a blob's root is its smallest index (every union
 *      keeps the smaller), its first pixel in scan order, so the scan of the roots' flags numbers
 *      the blobs canonically;
 *   6. blob_stats, blob_peaks: each work-group sums its runs of pixels into a small table in
 *      local memory keyed by blob (local atomics), then adds each entry to the blob's row of
 *      `stats` by 32-bit atomics; wide sums carry from word to word, so their totals are exact
 *      in any order;
 *   7. blob_labels: the label image, after the host's area rule.
 * Every access to a word that another work-item may be changing is atomic (an atomic_or of
 * nothing reads), and whether a pixel is foreground is read from a mask that never changes, so
 * no kernel has a data race. CLPIX_FORMAT chooses the format (formats.h);
 * the image is packed (n pixels, rows of `width`), padded to whole chunks.
 *
 * Keys are the format's integer keys, or the order keys of f32 (NaN 0: never above t). A blob
 * pixel's weight is key − background, or of f32 keys max(⌊k·2^s⌋ − base, 1) from the float's
 * bits alone (weight_of: no float arithmetic), s and base = ⌊b·2^s⌋ from the host, which
 * chose s from the largest key above t (blob_init's `largest`) so that every weight fits 32
 * bits.
 */
#define NONE 0xffffffffu
#define TILE_W 32u

/* A blob's row of statistics (STATS_WORDS words): area, min_x, max_x, max_y, key_sum (3 words),
   weight_sum (3), Σ w·x (3), Σ w·y (3), peak key, peak index, root. */
#define S_AREA 0u
#define S_MIN_X 1u
#define S_MAX_X 2u
#define S_MAX_Y 3u
#define S_KEYS 4u
#define S_WEIGHTS 7u
#define S_WX 10u
#define S_WY 13u
#define S_PEAK 16u
#define S_PEAK_AT 17u
#define S_ROOT 18u
#define STATS_WORDS 19u
/* Entries of a work-group's table (a power of two). */
#ifndef BLOB_SLOTS
#define BLOB_SLOTS 64u
#endif

/* Every index below n this work-item takes: a contiguous range on CPU devices, a grid-stride
   walk on GPUs. */
#if CLPIX_CONTIGUOUS
#define EACH_INDEX(i, n)                                                                       \
    uint b_##i, e_##i;                                                                         \
    clpix_range((n), get_global_id(0), get_global_size(0), &b_##i, &e_##i);                    \
    for (uint i = b_##i; i < e_##i; ++i)
#else
#define EACH_INDEX(i, n) for (uint i = get_global_id(0); i < (n); i += get_global_size(0))
#endif

#define LOAD(p, i) atomic_or(&(p)[i], 0u)

#if FLOAT_KEYS
#define KEY(w, j) order_of_bits(float_key_bits(w, j))
#else
#define KEY(w, j) int_key(w, j)
#endif

/* ⌊v·2^s⌋ of the f32 of order key `key` (finite; a blob pixel's, so below 2^34 · 2^24). */
inline long fixed_of(uint key, int s) {
    uint bits = (key >> 31) ? (key & 0x7fffffffu) : ~key;
    uint field = (bits >> 23) & 0xffu, fraction = bits & 0x7fffffu;
    if (field == 0u && fraction == 0u) return 0l;
    long m = field == 0u ? (long)fraction : (long)(fraction | 0x800000u);
    int sh = (field == 0u ? 1 : (int)field) - 150 + s;
    int negative = bits >> 31;
    if (sh >= 0) return negative ? -(m << sh) : m << sh;
    if (-sh >= 32) return negative ? -1l : 0l;
    return negative ? -((m + (1l << -sh) - 1l) >> -sh) : m >> -sh;
}

/* The weight of a blob pixel of key `key`. */
inline ulong weight_of(uint key, uint background, int s, long base) {
#if FLOAT_KEYS
    return (ulong)max(fixed_of(key, s) - base, 1l);
#else
    return (ulong)(key - background);
#endif
}

/* Also the largest key above t, into `largest` (f32 keys: the host chooses the weights' unit
   from it; one word of local memory in `lmax`). */
__kernel void blob_init(__global const uint* px, uint n, uint t, __global uint* parent,
                        __global uchar* fg, __global uint* largest, volatile __local uint* lmax) {
    uint top = 0u;
#if FLOAT_KEYS
    if (get_local_id(0) == 0u) *lmax = 0u;
    barrier(CLK_LOCAL_MEM_FENCE);
#endif
#define VISIT_INIT(w, first, count)                                                            \
    for (uint j = 0; j < (count); ++j) {                                                       \
        uint key = KEY(w, j), in = key > t;                                                    \
        parent[(first) + j] = in ? (first) + j : NONE;                                         \
        fg[(first) + j] = (uchar)in;                                                           \
        top = in ? max(top, key) : top;                                                        \
    }
    FOR_EACH_CHUNK(px, n, VISIT_INIT)
#undef VISIT_INIT
#if FLOAT_KEYS
    if (top) atomic_max(lmax, top);
    barrier(CLK_LOCAL_MEM_FENCE);
    if (get_local_id(0) == 0u && *lmax) atomic_max(largest, *lmax);
#endif
}

/* --- union-find, in local memory (a tile) and in global memory (across tiles) --- */

/* find_NAME: the root of a, halving the path on the way (a node passed points at its
   grandparent: an ancestor, so every set stays as it was); unite_NAME: joins the sets of a and
   b, the larger root pointed at the smaller by atomic_min, again from what it points to where
   another work-item moved first. In local memory (a tile) and in global memory (across tiles). */
#define UNION_FIND(NAME, SPACE)                                                                \
    inline uint find_##NAME(volatile SPACE uint* p, uint a) {                                  \
        uint q = LOAD(p, a);                                                                   \
        while (q != a) {                                                                       \
            uint g = LOAD(p, q);                                                               \
            if (g != q) atomic_min(&p[a], g);                                                  \
            a = g;                                                                             \
            q = LOAD(p, a);                                                                    \
        }                                                                                      \
        return a;                                                                              \
    }                                                                                          \
    inline void unite_##NAME(volatile SPACE uint* p, uint a, uint b) {                         \
        for (;;) {                                                                             \
            a = find_##NAME(p, a);                                                             \
            b = find_##NAME(p, b);                                                             \
            if (a == b) return;                                                                \
            if (a > b) {                                                                       \
                uint t = a;                                                                    \
                a = b;                                                                         \
                b = t;                                                                         \
            }                                                                                  \
            uint old = atomic_min(&p[b], a);                                                   \
            if (old == b) return;                                                              \
            b = old;                                                                           \
        }                                                                                      \
    }
UNION_FIND(local, __local)
UNION_FIND(global, __global)

/* Each tile (TILE_W × tile_h pixels; `lp` that many words, `lfg` that many bytes) labelled in
   local memory: unions with the left and upper neighbours in the tile (the upper diagonals,
   8-connected, where up is background: else up joins them); then every pixel points at its
   tile root, as a global index (the smallest local index is the smallest global one). Whether a
   pixel is foreground is read from `fg` (never changing: plain reads). */
__kernel void blob_tiles(__global uint* parent, __global const uchar* fg, uint width,
                         uint height, uint tile_h, uint eight, volatile __local uint* lp,
                         __local uchar* lfg) {
    uint L = get_local_size(0), lid = get_local_id(0), size = TILE_W * tile_h;
    uint tiles_x = (width + TILE_W - 1u) / TILE_W;
    uint tiles = tiles_x * ((height + tile_h - 1u) / tile_h);
    for (uint tile = get_group_id(0); tile < tiles; tile += get_num_groups(0)) {
        uint x0 = (tile % tiles_x) * TILE_W, y0 = (tile / tiles_x) * tile_h;
        for (uint q = lid; q < size; q += L) {
            uint x = x0 + q % TILE_W, y = y0 + q / TILE_W;
            uchar in = x < width && y < height && fg[y * width + x];
            lfg[q] = in;
            lp[q] = in ? q : NONE;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        for (uint q = lid; q < size; q += L) {
            if (!lfg[q]) continue;
            uint lx = q % TILE_W, ly = q / TILE_W;
            if (lx != 0u && lfg[q - 1u]) unite_local(lp, q, q - 1u);
            if (ly == 0u) continue;
            uint up = q - TILE_W;
            if (lfg[up]) {
                unite_local(lp, q, up);
            } else if (eight) {
                if (lx != 0u && lfg[up - 1u]) unite_local(lp, q, up - 1u);
                if (lx + 1u < TILE_W && lfg[up + 1u]) unite_local(lp, q, up + 1u);
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        for (uint q = lid; q < size; q += L) {
            if (!lfg[q]) continue;
            uint x = x0 + q % TILE_W, y = y0 + q / TILE_W;
            uint r = lp[q];
            while (lp[r] != r) r = lp[r];
            parent[y * width + x] = (y0 + r / TILE_W) * width + x0 + r % TILE_W;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
}

/* The unions of pixel (x, y) with its neighbours in other tiles. */
inline void unite_across(volatile __global uint* parent, __global const uchar* fg, uint x,
                         uint y, uint width, uint tile_h, uint eight) {
    uint i = y * width + x;
    if (!fg[i]) return;
    uint left = x % TILE_W == 0u, top = y % tile_h == 0u;
    uint right = eight && (x + 1u) % TILE_W == 0u;
    if (left && x != 0u && fg[i - 1u]) unite_global(parent, i, i - 1u);
    if (y == 0u) return;
    uint up = i - width;
    if (fg[up]) {
        if (top) unite_global(parent, i, up);
    } else if (eight) {
        if ((top || left) && x != 0u && fg[up - 1u]) unite_global(parent, i, up - 1u);
        if ((top || right) && x + 1u < width && fg[up + 1u]) unite_global(parent, i, up + 1u);
    }
}

/* The unions across tile borders, over the border pixels only: the tiles' left columns (but
   the image's), their right columns (8-connected), and their top rows (but the image's). A
   pixel on two borders is taken twice: unions are idempotent. */
__kernel void blob_borders(volatile __global uint* parent, __global const uchar* fg,
                           uint width, uint height, uint tile_h, uint eight) {
    uint tiles_x = (width + TILE_W - 1u) / TILE_W, tiles_y = (height + tile_h - 1u) / tile_h;
    uint lefts = height * (tiles_x - 1u), rights = eight ? height * tiles_x : 0u;
    uint tops = (tiles_y - 1u) * width;
    EACH_INDEX(k, lefts + rights + tops) {
        uint x, y;
        if (k < lefts) {
            y = k / (tiles_x - 1u);
            x = (k % (tiles_x - 1u) + 1u) * TILE_W;
        } else if (k < lefts + rights) {
            uint c = k - lefts;
            y = c / tiles_x;
            x = (c % tiles_x) * TILE_W + TILE_W - 1u;
            if (x + 1u >= width) continue;
        } else {
            uint c = k - lefts - rights;
            y = (c / width + 1u) * tile_h;
            x = c % width;
        }
        unite_across(parent, fg, x, y, width, tile_h, eight);
    }
}

/* One round of pointer jumping: to[i] = from[from[i]]; `changed` set where a pointer moved. */
__kernel void blob_jump(__global const uint* from, uint n, __global uint* to,
                        __global uint* changed) {
    uint moved = 0u;
    EACH_INDEX(i, n) {
        uint p = from[i];
        uint g = p == NONE ? NONE : from[p];
        to[i] = g;
        moved |= g != p;
    }
    if (moved) atomic_or(changed, 1u);
}

/* roots[i] = 1 for the roots (roots[n] = 0, so that the scan's last element is the blob count),
   once every pixel points at its root. */
__kernel void blob_roots(__global const uint* parent, uint n, __global uint* roots) {
    EACH_INDEX(i, n + 1u) { roots[i] = i < n && parent[i] == i ? 1u : 0u; }
}

/* --- statistics --- */

inline void stats_row_init(__global uint* s) {
    for (uint k = 0; k < STATS_WORDS; ++k) s[k] = 0u;
    s[S_MIN_X] = NONE;
    s[S_PEAK_AT] = NONE;
}

__kernel void blob_stats_init(__global uint* stats, uint m) {
    EACH_INDEX(r, m) { stats_row_init(stats + (ulong)r * STATS_WORDS); }
}

/* a (three words, little end first) += lo + hi · 2^64 exactly: each word's carry into the
   next (global and local copies of one rule). */
#define ADD_WIDE(NAME, SPACE)                                                                  \
    inline void NAME(volatile SPACE uint* a, ulong lo, uint hi) {                              \
        uint w0 = (uint)lo;                                                                    \
        ulong w1 = lo >> 32;                                                                   \
        if (w0) {                                                                              \
            uint o = atomic_add(&a[0], w0);                                                    \
            w1 += (uint)(o + w0) < o ? 1ul : 0ul;                                              \
        }                                                                                      \
        uint w2 = hi + (uint)(w1 >> 32), v1 = (uint)w1;                                        \
        if (v1) {                                                                              \
            uint o = atomic_add(&a[1], v1);                                                    \
            w2 += (uint)(o + v1) < o ? 1u : 0u;                                                \
        }                                                                                      \
        if (w2) atomic_add(&a[2], w2);                                                         \
    }
ADD_WIDE(add_wide_global, __global)
ADD_WIDE(add_wide_local, __local)

/* A run of pixels of one blob in one row, summed before it goes to the table. */
typedef struct {
    uint root, x0, y, count, end, peak;
    ulong keys, weights, wd; /* wd: Σ w·(x − x0) */
} Run;

/* Adds a run's sums (or a table entry's, `wide` its three-word sums) to a row of statistics. */
#define ADD_SUMS(NAME, SPACE, ADD)                                                             \
    inline void NAME(volatile SPACE uint* s, uint count, uint x0, uint x1, uint y, ulong keys,  \
                     ulong weights, ulong wx, uint wx_hi, ulong wy, uint wy_hi, uint peak) {   \
        atomic_add(&s[S_AREA], count);                                                         \
        atomic_min(&s[S_MIN_X], x0);                                                           \
        atomic_max(&s[S_MAX_X], x1);                                                           \
        atomic_max(&s[S_MAX_Y], y);                                                            \
        ADD(s + S_KEYS, keys, 0u);                                                             \
        ADD(s + S_WEIGHTS, weights, 0u);                                                       \
        ADD(s + S_WX, wx, wx_hi);                                                              \
        ADD(s + S_WY, wy, wy_hi);                                                              \
        atomic_max(&s[S_PEAK], peak);                                                          \
    }
ADD_SUMS(add_sums_global, __global, add_wide_global)
ADD_SUMS(add_sums_local, __local, add_wide_local)

/* The table entry of `root` (claimed where free), or NONE when the probes find none. */
inline uint slot_of(volatile __local uint* keys, uint root) {
    uint h = (root * 2654435761u) >> 16;
    for (uint k = 0; k < 8u; ++k) {
        uint s = (h + k) & (BLOB_SLOTS - 1u);
        uint was = atomic_cmpxchg(&keys[s], NONE, root);
        if (was == NONE || was == root) return s;
    }
    return NONE;
}

inline void flush(Run* r, __global const uint* rank, __global uint* stats,
                  volatile __local uint* keys, volatile __local uint* table) {
    if (r->count == 0u) return;
    ulong wy = r->weights * r->y;
    uint wy_hi = (uint)mul_hi(r->weights, (ulong)r->y);
    /* Σ w·x = Σ w · x0 + Σ w·(x − x0), in 96 bits. */
    ulong wx = r->weights * r->x0 + r->wd;
    uint wx_hi = (uint)mul_hi(r->weights, (ulong)r->x0) + (wx < r->wd ? 1u : 0u);
    uint x1 = r->x0 + r->count - 1u;
    uint s = slot_of(keys, r->root);
    if (s == NONE) {
        add_sums_global(stats + (ulong)rank[r->root] * STATS_WORDS, r->count, r->x0, x1, r->y,
                        r->keys, r->weights, wx, wx_hi, wy, wy_hi, r->peak);
    } else {
        add_sums_local(table + s * STATS_WORDS, r->count, r->x0, x1, r->y, r->keys, r->weights,
                       wx, wx_hi, wy, wy_hi, r->peak);
    }
    /* The run that starts at the root (the blob's first pixel) names it. */
    if (r->end - r->count == r->root) stats[(ulong)rank[r->root] * STATS_WORDS + S_ROOT] = r->root;
    r->count = 0u;
}

inline void stats_chunk(const uint* w, uint first, uint count, uint width, uint background,
                        int s, long base, __global const uint* parent, __global const uint* rank,
                        __global uint* stats, volatile __local uint* keys,
                        volatile __local uint* table, Run* run) {
    uint x = first % width, y = first / width;
    for (uint j = 0; j < count; ++j) {
        uint i = first + j, root = parent[i];
        /* A run ends at background, at another blob, at a row's start, after a gap (the next
           chunk of a grid-stride walk) and every 2^16 pixels (its u64 sums stay exact: weights
           below 2^32). */
        if (run->count &&
            (root != run->root || i != run->end || x == 0u || run->count == 65536u))
            flush(run, rank, stats, keys, table);
        if (root != NONE) {
            uint key = KEY(w, j);
            ulong wgt = weight_of(key, background, s, base);
            if (run->count == 0u) {
                run->root = root;
                run->x0 = x;
                run->y = y;
                run->keys = run->weights = run->wd = 0ul;
                run->peak = 0u;
            }
            run->count++;
            run->end = i + 1u;
            run->keys += key;
            run->weights += wgt;
            run->wd += wgt * (x - run->x0);
            run->peak = max(run->peak, key);
        }
        if (++x == width) {
            x = 0u;
            ++y;
        }
    }
}

/* The table's entries to the blobs' rows (after a barrier: plain reads). */
inline void flush_table(__global const uint* rank, __global uint* stats, __local uint* keys,
                        __local uint* table) {
    for (uint s = get_local_id(0); s < BLOB_SLOTS; s += get_local_size(0)) {
        if (keys[s] == NONE) continue;
        __local uint* e = table + s * STATS_WORDS;
        add_sums_global(stats + (ulong)rank[keys[s]] * STATS_WORDS, e[S_AREA], e[S_MIN_X],
                        e[S_MAX_X], e[S_MAX_Y], e[S_KEYS] | (ulong)e[S_KEYS + 1u] << 32,
                        e[S_WEIGHTS] | (ulong)e[S_WEIGHTS + 1u] << 32,
                        e[S_WX] | (ulong)e[S_WX + 1u] << 32, e[S_WX + 2u],
                        e[S_WY] | (ulong)e[S_WY + 1u] << 32, e[S_WY + 2u], e[S_PEAK]);
    }
}

inline void table_init(__local uint* keys, __local uint* table) {
    for (uint s = get_local_id(0); s < BLOB_SLOTS; s += get_local_size(0)) {
        keys[s] = NONE;
        for (uint k = 0; k < STATS_WORDS; ++k) table[s * STATS_WORDS + k] = 0u;
        table[s * STATS_WORDS + S_MIN_X] = NONE;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
}

/* keys: BLOB_SLOTS words, table: BLOB_SLOTS × STATS_WORDS words of local memory. */
__kernel void blob_stats(__global const uint* px, uint n, uint width, uint background, int s,
                         long base, __global const uint* parent, __global const uint* rank,
                         __global uint* stats, __local uint* keys, __local uint* table) {
    table_init(keys, table);
    Run run;
    run.count = 0u;
#define VISIT_STATS(w, first, count)                                                           \
    stats_chunk(w, first, count, width, background, s, base, parent, rank, stats, keys, table,   \
                &run)
    FOR_EACH_CHUNK(px, n, VISIT_STATS)
#undef VISIT_STATS
    flush(&run, rank, stats, keys, table);
    barrier(CLK_LOCAL_MEM_FENCE);
    flush_table(rank, stats, keys, table);
}

/* The peak's place: the smallest index among the blob's pixels of its peak key, the smallest
   of each work-group's kept in its table first (a word an entry). */
inline void peak_chunk(const uint* w, uint first, uint count, __global const uint* parent,
                       __global const uint* rank, __global uint* stats,
                       volatile __local uint* keys, volatile __local uint* at) {
    for (uint j = 0; j < count; ++j) {
        uint root = parent[first + j];
        if (root == NONE) continue;
        __global uint* s = stats + (ulong)rank[root] * STATS_WORDS;
        if (KEY(w, j) != s[S_PEAK]) continue;
        uint slot = slot_of(keys, root);
        if (slot == NONE) atomic_min(&s[S_PEAK_AT], first + j);
        else atomic_min(&at[slot], first + j);
    }
}

__kernel void blob_peaks(__global const uint* px, uint n, __global const uint* parent,
                         __global const uint* rank, __global uint* stats, __local uint* keys,
                         __local uint* at) {
    for (uint s = get_local_id(0); s < BLOB_SLOTS; s += get_local_size(0)) {
        keys[s] = NONE;
        at[s] = NONE;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
#define VISIT_PEAKS(w, first, count) peak_chunk(w, first, count, parent, rank, stats, keys, at)
    FOR_EACH_CHUNK(px, n, VISIT_PEAKS)
#undef VISIT_PEAKS
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint s = get_local_id(0); s < BLOB_SLOTS; s += get_local_size(0)) {
        if (keys[s] != NONE)
            atomic_min(&stats[(ulong)rank[keys[s]] * STATS_WORDS + S_PEAK_AT], at[s]);
    }
}

/* The label image: the blob's number after the area rule (`number`, 0 for a dropped blob), 0
   for background. */
__kernel void blob_labels(__global const uint* parent, uint n, __global const uint* rank,
                          __global const uint* number, __global uint* labels) {
    EACH_INDEX(i, n) {
        uint root = parent[i];
        labels[i] = root == NONE ? 0u : number[rank[root]];
    }
}
