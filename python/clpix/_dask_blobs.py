"""The blobs (connected components) of ``clpix.dask``: each chunk labelled alone in parallel,
then the blobs that cross chunk borders joined and their statistics combined exactly, on one
task. Used by :func:`clpix.dask.blobs` (re-exported there).

1. Each chunk's task runs ``Engine._blobs_exact`` (every area, the label image) and sends its
   blobs' statistics, in the chunk's coordinates, with the integer quotients and remainders
   of ``Σ w·x`` and ``Σ w·y`` by ``Σ w`` (from which the exact sums follow), and the four
   border lines of its label image (not the label image).
2. The merge task numbers every chunk's blobs (the nodes), joins the nodes whose pixels touch
   across a seam (the facing lines of two chunks side by side or one above the other, and for
   8-connectivity the diagonal neighbours along a seam and across the corner of four chunks)
   by union-find, and combines each component's statistics: sums add (the exact weighted sums
   as Python ints, shifted by the chunks' offsets: ``Σ w·x_global = Σ w·x_local + x0·Σ w``),
   bounding boxes take their minima and maxima, the peak is the greatest key and then the
   first in global scan order, the first pixel the smallest global ``(y, x)``. Then the area
   filter, the numbering 1..n in the scan order of the first pixels, and the centroid as the
   specification says: ``q, r = divmod(Σ w·x, Σ w)``, ``x̄ = float(q) + float(r) / float(Σ w)``
   (each step rounded once, as clpix does in f64).
3. The label image (lazy) labels each chunk again when computed and maps its labels to the
   global numbers with a table per chunk from the merge.

Of float32 images each chunk's largest key (by ``luminance_stats``, tasks of the same graph)
gives the whole image's, from which ``clpix.blob_weight_exponent`` gives the one unit of the
weights every chunk then uses (``weight_exponent``): the chunks' integer sums add exactly, and
the records become :data:`clpix.BLOB_F32_DTYPE`'s at the end (the peak from its order key, the
sums times the unit), as the single call's.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple

import dask
import dask.array as da
import numpy as np
from dask.delayed import delayed

import clpix

from . import _dask_formats as _formats
from ._dask_engines import engine

ACCEPTED = (
    "uint8 of shape (H, W), (H, W, 3) or (H, W, 4), or uint16 or float32 of shape (H, W) or "
    "(H, W, 4)"
)
_DTYPES = (np.dtype(np.uint8), np.dtype(np.uint16), np.dtype(np.float32))
_I64_MAX = np.iinfo(np.int64).max


def _as_blob_image(img: Any) -> da.Array:
    """``img`` as a checked Dask image of a format blobs take."""
    dtype = getattr(img, "dtype", None)
    if isinstance(img, (np.ndarray, da.Array)) and (dtype not in _DTYPES or not dtype.isnative):
        raise TypeError(
            f"blobs take: an image of {ACCEPTED} (native byte order); got dtype {dtype}"
        )
    return _formats.as_any_image(img)


def _offsets(chunks: Tuple[int, ...]) -> List[int]:
    return [int(v) for v in np.cumsum((0,) + tuple(chunks))[:-1]]


# --- the chunks' tasks ---------------------------------------------------------------------


def _chunk_part(block, threshold, connectivity, background, exponent, backend):
    """A chunk's blobs (every area) as ``(stats, (top, bottom, left, right))``: the exact
    statistics in the chunk's coordinates (float32: weights in units of ``2^-exponent``) and
    the border lines of its label image."""
    labels, stats = engine(backend)._blobs_exact(
        block, threshold, connectivity, background, exponent
    )
    edges = (labels[0].copy(), labels[-1].copy(), labels[:, 0].copy(), labels[:, -1].copy())
    return stats, edges


def _label_block(block, table, threshold, connectivity, background, exponent, backend):
    """A chunk of the label image: the chunk labelled again, its labels mapped by ``table``
    (local label → global label, 0 for background and dropped blobs)."""
    labels = engine(backend).blobs(
        block, threshold, connectivity, 1, None, background, True, exponent
    )[0]
    return table[labels]


def _largest_key(block, backend) -> float:
    """The largest key of a float32 chunk (NaN where it has only NaN keys, or none)."""
    if block.size == 0:
        return float("nan")
    try:
        return float(engine(backend).luminance_stats(block).max)
    except ValueError:  # every key NaN: no statistics
        return float("nan")


def _unit(threshold, background, *tops) -> int:
    """The weights' exponent of a float32 image whose chunks' largest keys are ``tops`` (NaN
    for a chunk without any): ``clpix.blob_weight_exponent`` of the largest, 0 where no key is
    above the threshold."""
    tops = [t for t in tops if not np.isnan(t)]
    largest = max(tops) if tops else float("nan")
    if not largest > np.float32(threshold):
        return 0
    return clpix.blob_weight_exponent(largest, float(background))


# --- the merge -----------------------------------------------------------------------------


def _touching(a: np.ndarray, b: np.ndarray, eight: bool) -> List[Tuple[np.ndarray, np.ndarray]]:
    """The label pairs of pixels that touch across a seam: ``a`` and ``b`` are the facing
    lines of the two chunks (of one length); pixel k of ``a`` touches pixel k of ``b``, and
    with ``eight`` pixels k ± 1 too."""
    pairs = [(a, b)]
    if eight and len(a) > 1:
        pairs += [(a[1:], b[:-1]), (a[:-1], b[1:])]
    return pairs


def _seam_pairs(edges, grid: Tuple[int, int], eight: bool):
    """Every pair of chunk labels that touch across a seam or a corner, as
    ``(chunk, label, chunk, label)`` arrays (labels nonzero)."""
    ni, nj = grid
    found: List[Tuple[int, np.ndarray, int, np.ndarray]] = []

    def add(c: int, a: np.ndarray, d: int, b: np.ndarray) -> None:
        for la, lb in _touching(a, b, eight):
            both = (la != 0) & (lb != 0)
            if both.any():
                found.append((c, la[both], d, lb[both]))

    for i in range(ni):
        for j in range(nj):
            c = i * nj + j
            top, bottom, left, right = edges[c]
            if j + 1 < nj:
                add(c, right, c + 1, edges[c + 1][2])
            if i + 1 < ni:
                add(c, bottom, c + nj, edges[c + nj][0])
            if eight and i + 1 < ni and j + 1 < nj:
                # The corner of four chunks: (i, j)'s last pixel and (i + 1, j + 1)'s first;
                # (i, j + 1)'s bottom-left pixel and (i + 1, j)'s top-right one.
                add(c, bottom[-1:], c + nj + 1, edges[c + nj + 1][0][:1])
                add(c + 1, edges[c + 1][1][:1], c + nj, edges[c + nj][0][-1:])
    return found


def _components(n: int, u: np.ndarray, v: np.ndarray) -> np.ndarray:
    """The component of each of ``n`` nodes joined by the edges ``(u[k], v[k])``: its smallest
    node (union-find over the distinct edges)."""
    root = np.arange(n, dtype=np.int64)
    if len(u) == 0:
        return root
    pairs = np.unique(np.stack([np.minimum(u, v), np.maximum(u, v)], axis=1), axis=0)
    parent: Dict[int, int] = {}

    def find(x: int) -> int:
        r = x
        while parent.get(r, r) != r:
            r = parent[r]
        while x != r:
            nxt = parent[x]
            parent[x] = r
            x = nxt
        return r

    for a, b in pairs.tolist():
        ra, rb = find(a), find(b)
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)
    for x in list(parent):
        root[x] = find(x)
    return root


def _centroid(q: np.ndarray, r: np.ndarray, d: np.ndarray) -> np.ndarray:
    """``float(q) + float(r) / float(d)`` element by element (each exact in float64: q below
    2^32, r < d below 2^53), one rounding for the division and one for the addition."""
    return q.astype(np.float64) + r.astype(np.float64) / d.astype(np.float64)


def _f32_of_order(k: np.ndarray) -> np.ndarray:
    """The float32 of each order key (docs/SPEC.md: numbers in order, as unsigned words)."""
    k = k.astype(np.uint32)
    bits = np.where(k >> 31 == 1, k & np.uint32(0x7FFFFFFF), ~k).astype(np.uint32)
    return bits.view(np.float32)


def _merge(width, ys, xs, eight, min_area, max_area, exponent, *parts):
    """The whole image's statistics (``clpix.BLOB_DTYPE``, or ``BLOB_F32_DTYPE`` where the
    weights' ``exponent`` of float32 keys is given; in label order) and, for each chunk, the
    table of its labels' global numbers (uint32, index 0 for background), from the chunks'
    parts (in chunk-row order; chunk c at row ``ys[c // len(xs)]``, column
    ``xs[c % len(xs)]``)."""
    nj = len(xs)
    grid = (len(ys), nj)
    stats = [p[0] for p in parts]
    counts = np.array([len(s) for s in stats], dtype=np.int64)
    base = np.concatenate(([0], np.cumsum(counts)))
    total = int(base[-1])
    dtype = clpix.BLOB_DTYPE if exponent is None else clpix.BLOB_F32_DTYPE
    if total == 0:
        return np.zeros(0, dtype), [np.zeros(1, np.uint32) for _ in parts]
    s = np.concatenate(stats)
    chunk = np.repeat(np.arange(len(parts)), counts)
    y0 = np.array(ys, np.int64)[chunk // nj]
    x0 = np.array(xs, np.int64)[chunk % nj]

    def col(name: str) -> np.ndarray:
        return s[name].astype(np.int64)  # every value below 2^63 (pixels below 2^32)

    u, v = [], []
    for c, la, d, lb in _seam_pairs([p[1] for p in parts], grid, eight):
        u.append(base[c] + la.astype(np.int64) - 1)
        v.append(base[d] + lb.astype(np.int64) - 1)
    root = _components(total, np.concatenate(u) if u else np.zeros(0, np.int64),
                       np.concatenate(v) if v else np.zeros(0, np.int64))
    roots, comp = np.unique(root, return_inverse=True)
    comp = comp.reshape(-1)
    order = np.argsort(comp, kind="stable")
    sizes = np.bincount(comp, minlength=len(roots))
    starts = np.concatenate(([0], np.cumsum(sizes)[:-1]))

    def by(values: np.ndarray, ufunc) -> np.ndarray:
        return ufunc.reduceat(values[order], starts)

    area = by(col("area"), np.add)
    first = by((col("min_y") + y0) * width + col("first_x") + x0, np.minimum)
    peak_key = col("peak_key")
    best = by(peak_key, np.maximum)
    peak_at = (col("peak_y") + y0) * width + col("peak_x") + x0
    peak_at = np.where(peak_key == best[comp], peak_at, _I64_MAX)
    peak = by(peak_at, np.minimum)
    # Sums of weights and keys as uint64 (float32's weights of 32 bits: totals below 2^64).
    weight = by(s["weight_sum"].astype(np.uint64), np.add)
    # The weighted sums' quotients in the whole image's coordinates (the remainders stay).
    xq, yq = col("wx_q") + x0, col("wy_q") + y0
    xr, yr = col("wx_r"), col("wy_r")
    single = sizes == 1
    at = order[starts]  # a component's first node (its only one where single)
    cx = _centroid(xq[at], xr[at], s["weight_sum"][at])
    cy = _centroid(yq[at], yr[at], s["weight_sum"][at])
    ws = s["weight_sum"]
    for g in np.flatnonzero(~single).tolist():
        nodes = order[starts[g] : starts[g] + sizes[g]].tolist()
        d = sum(int(ws[k]) for k in nodes)
        for out, q, r in ((cx, xq, xr), (cy, yq, yr)):
            n = sum(int(q[k]) * int(ws[k]) + int(r[k]) for k in nodes)
            whole, rest = divmod(n, d)
            out[g] = float(whole) + float(rest) / float(d)

    # Areas are below 2^32: limits beyond int64 compare as int64's largest.
    keep = area >= min(int(min_area), _I64_MAX)
    if max_area is not None:
        keep &= area <= min(int(max_area), _I64_MAX)
    kept = np.flatnonzero(keep)
    kept = kept[np.argsort(first[kept], kind="stable")]
    number = np.zeros(len(roots), np.uint32)
    number[kept] = np.arange(1, len(kept) + 1, dtype=np.uint32)

    out = np.zeros(len(kept), dtype)
    out["label"] = number[kept]
    out["area"] = area[kept]
    out["min_x"] = by(col("min_x") + x0, np.minimum)[kept]
    out["min_y"] = first[kept] // width
    out["max_x"] = by(col("max_x") + x0, np.maximum)[kept]
    out["max_y"] = by(col("max_y") + y0, np.maximum)[kept]
    out["first_x"] = first[kept] % width
    key_sum = by(s["key_sum"].astype(np.uint64), np.add)[kept]
    if exponent is None:
        out["key_sum"] = key_sum
        out["weight_sum"] = weight[kept]
    else:
        # The exact sums times the unit 2^-s: one rounding (uint64 to float64), as clpix's.
        out["key_sum"] = np.ldexp(key_sum.astype(np.float64), -exponent)
        out["weight_sum"] = np.ldexp(weight[kept].astype(np.float64), -exponent)
    out["centroid_x"] = cx[kept]
    out["centroid_y"] = cy[kept]
    out["peak_x"] = peak[kept] % width
    out["peak_y"] = peak[kept] // width
    out["peak_key"] = best[kept] if exponent is None else _f32_of_order(best[kept])

    labels = number[comp]
    tables = [
        np.concatenate(([0], labels[base[c] : base[c + 1]])).astype(np.uint32)
        for c in range(len(parts))
    ]
    return out, tables


# --- blobs ---------------------------------------------------------------------------------


def blobs(
    img: Any,
    threshold: Any,
    connectivity: int = 8,
    min_area: int = 1,
    max_area: Optional[int] = None,
    background: Any = 0,
    labels: bool = True,
    *,
    backend: Optional[str] = None,
) -> Tuple[Optional[da.Array], np.ndarray]:
    """The blobs of an image of any format (uint8 of shape (H, W), (H, W, 3) or (H, W, 4);
    uint16 or float32 of shape (H, W) or (H, W, 4)) chunked in H and W, exactly as
    ``clpix.blobs`` on the whole image: ``(labels, stats)``, the label image a lazy ``(H, W)``
    uint32 Dask array chunked as the image (None for ``labels=False``), the statistics a
    NumPy structured array of ``clpix.BLOB_DTYPE`` (``BLOB_F32_DTYPE`` for float32; computed
    at once). Of float32 the chunks' weights share the unit the whole image's largest key
    gives (each chunk's largest key found in the same graph, each chunk computed once).

    Each chunk is labelled alone, in parallel; the blobs that cross chunk borders are joined
    (union-find over the chunks' border lines) and their statistics combined exactly, then the
    area filter and the canonical numbering apply. The label image's chunks label their
    chunk again when computed (persist it to keep it)."""
    img = _as_blob_image(img)
    e = engine(backend)
    # clpix's own checks of every parameter, on an image of the format.
    e.blobs(_formats.probe(img), threshold, connectivity, min_area, max_area, background, labels)
    if img.size == 0:
        found = e.blobs(np.zeros(img.shape, img.dtype), threshold, connectivity, min_area,
                        max_area, background, labels)
        none = da.zeros(img.shape[:2], dtype=np.uint32, chunks=img.chunks[:2])
        return (none if labels else None), found[1]
    # The chunks with pixels (chunks of no rows or columns take no part, and leave the others
    # as they are).
    rows = [i for i, h in enumerate(img.chunks[0]) if h]
    cols = [j for j, w in enumerate(img.chunks[1]) if w]
    blocks = img.to_delayed().reshape(len(img.chunks[0]), len(img.chunks[1]), -1)[:, :, 0]
    blocks = blocks[np.ix_(rows, cols)]
    ys = [_offsets(img.chunks[0])[i] for i in rows]
    xs = [_offsets(img.chunks[1])[j] for j in cols]
    exponent: Any = None
    if img.dtype == np.float32:
        # The whole image's largest key, then the one unit of every chunk's weights: tasks of
        # the same graph as the chunks' parts, so that each chunk is computed once.
        tops = [delayed(_largest_key, pure=True)(b, backend) for b in blocks.ravel()]
        exponent = delayed(_unit, pure=True)(threshold, background, *tops)
    parts = [
        delayed(_chunk_part, pure=True)(b, threshold, connectivity, background, exponent, backend)
        for b in blocks.ravel()
    ]
    args = (img.shape[1], ys, xs, connectivity == 8, min_area, max_area, exponent)
    (stats, tables), exponent = dask.compute(delayed(_merge, pure=True)(*args, *parts), exponent)
    if not labels:
        return None, stats
    label_args = (threshold, connectivity, background, exponent, backend)
    return _label_image(img, rows, cols, tables, label_args), stats


def _label_image(img: da.Array, rows: List[int], cols: List[int], tables, args) -> da.Array:
    """The label image (lazy), chunked as ``img`` in H and W: chunk (rows[a], cols[b]) labelled
    again and mapped by ``tables[a * len(cols) + b]``, chunks of no pixels empty."""
    from dask.base import tokenize
    from dask.highlevelgraph import HighLevelGraph

    name = "clpix-blob-labels-" + tokenize(img, tables, args)
    tail = (0,) * (img.ndim - 2)
    dsk: Dict[Any, Any] = {}
    for i, h in enumerate(img.chunks[0]):
        for j, w in enumerate(img.chunks[1]):
            if h and w:
                table = tables[rows.index(i) * len(cols) + cols.index(j)]
                dsk[(name, i, j)] = (_label_block, (img.name, i, j) + tail, table) + tuple(args)
            else:
                dsk[(name, i, j)] = (np.zeros, (h, w), np.uint32)
    graph = HighLevelGraph.from_collections(name, dsk, dependencies=[img])
    meta = np.empty((0, 0), np.uint32)
    return da.Array(graph, name, chunks=img.chunks[:2], dtype=np.uint32, meta=meta)
