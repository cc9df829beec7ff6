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


def _grid(block, parts, d1: int):
    """The chunk and its neighbours' strips as rows of tiles (``numpy.block``'s layout), and the
    chunk's first row and column in the padded block they make."""
    rows, top, left = [], 0, 0
    for dy in (-1, 0, 1):
        if dy and parts[(dy, 0)] is None:
            continue
        row = []
        for dx in (-1, 0, 1):
            if dx and parts[(0, dx)] is None:
                continue
            if (dy, dx) == (0, 0):
                row.append(block)
            else:
                # A corner is there wherever its row and column strips are (wrap: every side).
                row.append(_from_neighbour(parts[(dy, dx)], dy, dx, d1))
        rows.append(row)
    if parts[(-1, 0)] is not None:
        top = rows[0][0].shape[0]
    if parts[(0, -1)] is not None:
        left = rows[0][0].shape[1]
    return rows, top, left


def _on_device(e) -> bool:
    """Whether ``e``'s chunks are assembled, blurred, cropped (and counted) where it holds
    images: an OpenCL device that is not the host's CPU. On the CPU engine and on CPU devices
    NumPy assembles the padded block in the host memory the blur reads in place (PoCL 5 on 16
    cores took 52 ms to hold a 4112² RGBA8 block and 103 ms to assemble one, the H200 1.9 and
    9.7 ms with the copies from NumPy's views: docs/performance.md)."""
    return e.device is not None and e.device.device_type != "CPU"


def _padded_blur(block, neighbours, d0, d1, radius, sigma, border, backend):
    """The blur of ``block`` with its neighbours' strips around it (``neighbours``: their halo
    parts, in ``_NEIGHBOURS``'s order, ``None`` where there is none): on a device, the padded
    block assembled there and its blur kept there (a ``DeviceImage``), else an array; and the
    chunk's rectangle in it (first row, first column)."""
    parts = dict(zip(_NEIGHBOURS, neighbours))
    rows, top, left = _grid(block, parts, d1)
    e = engine(backend)
    if _on_device(e):
        padded = e.assemble(rows) if len(rows) > 1 or len(rows[0]) > 1 else block
        return e, e.gaussian_blur_device(padded, radius, sigma, border), top, left
    return e, e.gaussian_blur(_assembled(rows, block), radius, sigma, border), top, left


def _assembled(rows, block):
    """The tiles of :func:`_grid` as one array (one copy; ``block`` itself where it is alone)."""
    if len(rows) == 1 and len(rows[0]) == 1:
        return block
    heights = [r[0].shape[0] for r in rows]
    widths = [t.shape[1] for t in rows[0]]
    padded = np.empty((sum(heights), sum(widths)) + block.shape[2:], block.dtype)
    y = 0
    for r, h in zip(rows, heights):
        x = 0
        for t, w in zip(r, widths):
            padded[y : y + h, x : x + w] = t
            x += w
        y += h
    return padded


def _own_blur(block, neighbours, d0, d1, radius, sigma, border, backend):
    """The engine and the chunk's own pixels of its blur with the halo around it: a
    ``DeviceImage`` the device keeps (see :func:`_on_device`), else a view of an array."""
    e, out, top, left = _padded_blur(block, neighbours, d0, d1, radius, sigma, border, backend)
    h, w = block.shape[:2]
    if isinstance(out, np.ndarray):
        return e, out[top : top + h, left : left + w]
    return e, out if out.shape == block.shape else e.crop(out, top, left, h, w)


def _blur_with_halo(block, neighbours, d0, d1, radius, sigma, border, backend):
    """The chunk's own pixels of its blur with the halo around it (an array)."""
    e, own = _own_blur(block, neighbours, d0, d1, radius, sigma, border, backend)
    return own if isinstance(own, np.ndarray) else e.download(own)


def _blur_then(block, neighbours, d0, d1, radius, sigma, border, backend, part, y0, x0, width, args):
    """``part(own, y0, x0, width, *args)`` of the chunk's own pixels of its blur: held on a GPU
    (never read back), else a view of the array."""
    _, own = _own_blur(block, neighbours, d0, d1, radius, sigma, border, backend)
    return part(own, y0, x0, width, *args)


def _graph(
    img: da.Array, d0: int, d1: int, wrap: bool, name: str, task, args: Tuple[Any, ...], per_chunk=None
) -> Dict[Any, Any]:
    """Two tasks a chunk: one (``clpix-halo-…``) names the edges its neighbours need (``d0`` rows,
    ``d1`` columns; the image's far side for ``wrap``), one (``name``) calls ``task(block,
    neighbours' parts, d0, d1, *args, *per_chunk(i, j))``."""
    from dask.base import tokenize

    halo = "clpix-halo-" + tokenize(img, d0, d1)
    ni, nj = len(img.chunks[0]), len(img.chunks[1])
    dsk: Dict[Any, Any] = {}
    if d0 or d1:
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
            extra = per_chunk(i, j) if per_chunk else ()
            dsk[_key(name, i, j, img.ndim)] = (task, _key(img.name, i, j, img.ndim), around, d0, d1) + args + extra
    return dsk


class _Blur:
    """What a lazy blur of :func:`blur` was made from, kept on its array: a histogram of it is
    then counted in the blur's own tasks (:func:`reduced_parts`)."""

    def __init__(self, img: da.Array, d0: int, d1: int, wrap: bool, args: Tuple[Any, ...]):
        self.img, self.d0, self.d1, self.wrap, self.args = img, d0, d1, wrap, args


def _overlapped_blur(img: da.Array, d0: int, d1: int, wrap: bool, radius, sigma, border, backend) -> da.Array:
    """The blur of every chunk with ``d0`` rows and ``d1`` columns of its neighbours around it
    (the image's far side for ``wrap``), in two tasks a chunk: one names the edges its
    neighbours need, one assembles its own and blurs. ``map_overlap`` makes about 11 tasks a
    chunk for the same (slices, concatenations, trims), and on a distributed cluster the tasks
    themselves cost more than the copies."""
    from dask.base import tokenize
    from dask.highlevelgraph import HighLevelGraph

    args = (radius, sigma, border, backend)
    out = "clpix-blur-" + tokenize(img, d0, d1, wrap, *args)
    dsk = _graph(img, d0, d1, wrap, out, _blur_with_halo, args)
    graph = HighLevelGraph.from_collections(out, dsk, dependencies=[img])
    arr = da.Array(graph, out, chunks=img.chunks, dtype=img.dtype, meta=_meta(img))
    arr._clpix_blur = _Blur(img, d0, d1, wrap, args)
    return arr


def reduced_parts(img: da.Array, part, args: Tuple[Any, ...], starts) -> Optional[List[Any]]:
    """For a lazy blur of :func:`blur` and a reduction on its backend (``args[-1]``), each
    chunk's ``part(own pixels, y0, x0, width, *args)`` as a Delayed (``starts``: the chunks'
    first rows and first columns), computed in the task that blurs the chunk (on a GPU: of the
    blur held there, never read back); ``None`` for any other array or backend."""
    spec = getattr(img, "_clpix_blur", None)
    if not isinstance(spec, _Blur) or not args or spec.args[3] != args[-1]:
        return None
    from dask.base import tokenize
    from dask.delayed import Delayed
    from dask.highlevelgraph import HighLevelGraph

    src, (ys, xs), width = spec.img, starts, img.shape[1]
    name = "clpix-blur-then-" + tokenize(src, spec.d0, spec.d1, spec.wrap, spec.args, part, args)
    dsk = _graph(
        src, spec.d0, spec.d1, spec.wrap, name, _blur_then, spec.args + (part,),
        lambda i, j: (ys[i], xs[j], width, args),
    )
    graph = HighLevelGraph.from_collections(name, dsk, dependencies=[src])
    return [Delayed(k, graph, layer=name) for k in dsk if k[0] == name]


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
    return _overlapped_blur(img, depth[0], depth[1], border == "wrap", radius, sigma, border, backend)
