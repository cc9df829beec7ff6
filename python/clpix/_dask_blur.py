"""The Gaussian blur of ``clpix.dask``: each chunk blurred with the rows and columns of its
neighbours around it (a halo), in two tasks a chunk. Used by :func:`clpix.dask.gaussian_blur`,
which checks the input and the parameters. Images of every format: ``(H, W)`` (mono) or
``(H, W, C)`` with the channels in one chunk."""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple

import dask.array as da
import numpy as np

from ._dask_engines import engine


def _at_least(chunks: Tuple[int, ...], m: int) -> Tuple[int, ...]:
    """Chunks merged with their neighbours until each has at least ``m`` elements."""
    out: List[int] = []
    for c in chunks:
        if out and out[-1] < m:
            out[-1] += c
        else:
            out.append(c)
    if len(out) > 1 and out[-1] < m:
        last = out.pop()
        out[-1] += last
    return tuple(out)


def _blur_block(block, radius, sigma, border, backend):
    return engine(backend).gaussian_blur(block, radius, sigma, border)


def _halo_parts(block, d0: int, d1: int):
    """What a chunk's neighbours need of it: its first and last ``d0`` rows and first and last
    ``d1`` columns (views: a transfer to another worker serialises only their pixels)."""
    h, w = block.shape[:2]
    return block[:d0], block[h - d0 :], block[:, :d1], block[:, w - d1 :]


def _key(name: str, i: int, j: int, ndim: int) -> Tuple[Any, ...]:
    """The key of chunk (i, j) of a 2-D image, or of a 3-D one (one chunk of channels)."""
    return (name, i, j) + (0,) * (ndim - 2)


def _meta(img: da.Array) -> np.ndarray:
    return np.empty((0,) * img.ndim, img.dtype)


def _from_neighbour(parts, dy: int, dx: int, d1: int):
    """The pixels that the chunk at (dy, dx) from this one (each −1, 0 or 1) adds around it:
    the edge of that neighbour that faces this chunk; for a diagonal neighbour, the corner of
    its facing row strip."""
    top, bottom, left, right = parts
    if dy == 0:
        return right if dx < 0 else left
    rows = bottom if dy < 0 else top
    if dx == 0:
        return rows
    w = rows.shape[1]
    return rows[:, w - d1 :] if dx < 0 else rows[:, :d1]


# The neighbours of a chunk, as (row step, column step), in the order its task takes them.
_NEIGHBOURS = [(-1, -1), (-1, 0), (-1, 1), (0, -1), (0, 1), (1, -1), (1, 0), (1, 1)]


def _blur_with_halo(block, neighbours, d0, d1, radius, sigma, border, backend):
    """Blurs ``block`` with the rows and columns of its neighbours around it (``neighbours``:
    their halo parts, in ``_NEIGHBOURS``'s order, ``None`` where there is none) and returns the
    chunk's own pixels of the result."""
    parts = dict(zip(_NEIGHBOURS, neighbours))
    top = d0 if parts[(-1, 0)] is not None else 0
    bottom = d0 if parts[(1, 0)] is not None else 0
    left = d1 if parts[(0, -1)] is not None else 0
    right = d1 if parts[(0, 1)] is not None else 0
    h, w = block.shape[:2]
    padded = np.empty((top + h + bottom, left + w + right) + block.shape[2:], block.dtype)
    rows = {-1: slice(0, top), 0: slice(top, top + h), 1: slice(top + h, top + h + bottom)}
    cols = {-1: slice(0, left), 0: slice(left, left + w), 1: slice(left + w, left + w + right)}
    padded[rows[0], cols[0]] = block
    for (dy, dx), halo in parts.items():
        if halo is not None:
            padded[rows[dy], cols[dx]] = _from_neighbour(halo, dy, dx, d1)
    out = engine(backend).gaussian_blur(padded, radius, sigma, border)
    return out[rows[0], cols[0]]


def _overlapped_blur(img: da.Array, d0: int, d1: int, wrap: bool, radius, sigma, border, backend) -> da.Array:
    """The blur of every chunk with ``d0`` rows and ``d1`` columns of its neighbours around it
    (the image's far side for ``wrap``), in two tasks a chunk: one names the edges its
    neighbours need, one assembles its own and blurs. ``map_overlap`` makes about 11 tasks a
    chunk for the same (slices, concatenations, trims), and on a distributed cluster the tasks
    themselves cost more than the copies."""
    from dask.base import tokenize
    from dask.highlevelgraph import HighLevelGraph

    token = tokenize(img, d0, d1, wrap, radius, sigma, border, backend)
    halo, out = "clpix-halo-" + token, "clpix-blur-" + token
    ni, nj = len(img.chunks[0]), len(img.chunks[1])
    dsk: Dict[Any, Any] = {}
    for i in range(ni):
        for j in range(nj):
            dsk[(halo, i, j)] = (_halo_parts, _key(img.name, i, j, img.ndim), d0, d1)

    def neighbour(i: int, j: int, dy: int, dx: int) -> Any:
        ii, jj = i + dy, j + dx
        if (dy and not d0) or (dx and not d1):
            return None
        if wrap:
            ii, jj = ii % ni, jj % nj
        elif not (0 <= ii < ni and 0 <= jj < nj):
            return None
        return (halo, ii, jj)

    for i in range(ni):
        for j in range(nj):
            around = [neighbour(i, j, dy, dx) for dy, dx in _NEIGHBOURS]
            dsk[_key(out, i, j, img.ndim)] = (
                _blur_with_halo,
                _key(img.name, i, j, img.ndim),
                around,
                d0,
                d1,
                radius,
                sigma,
                border,
                backend,
            )
    graph = HighLevelGraph.from_collections(out, dsk, dependencies=[img])
    return da.Array(graph, out, chunks=img.chunks, dtype=img.dtype, meta=_meta(img))


def blur(img: da.Array, radius: int, sigma: Optional[float], border: str, backend: Optional[str]) -> da.Array:
    """The blur of a checked image of any format with pixels (lazy): chunks narrower than
    ``radius`` merged with their neighbours, then each chunk blurred with ``radius`` rows and
    columns of its neighbours along each axis cut into several chunks."""
    depth = [0, 0]
    chunks = list(img.chunks)
    for axis in (0, 1):
        if radius > 0 and len(chunks[axis]) > 1:
            chunks[axis] = _at_least(chunks[axis], radius)
            if len(chunks[axis]) > 1:
                depth[axis] = radius
    if tuple(chunks) != img.chunks:
        img = img.rechunk(tuple(chunks))
    if depth == [0, 0]:
        return img.map_blocks(_blur_block, radius, sigma, border, backend, dtype=img.dtype, meta=_meta(img))
    return _overlapped_blur(img, depth[0], depth[1], border == "wrap", radius, sigma, border, backend)
