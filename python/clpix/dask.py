"""clpix on Dask arrays: the same operations on an ``(H, W, 4)`` image chunked in H and W,
bit for bit equal to the single-image call.

- :func:`gaussian_blur` and :func:`luminance` return Dask arrays (lazy); the blur gives each
  chunk ``radius`` pixels of its neighbours on the axes that have several chunks.
- :func:`extreme`, :func:`luminance_stats`, :func:`histogram`, :func:`histogram_keys`,
  :func:`histogram_rgba`, :func:`histogram_luminance`, :func:`compact` and :func:`extremes`
  compute per-chunk partials on the workers and combine them in a tree
  (global coordinates, ties to the smallest scan index ``y * W + x``); they compute at once
  with the current scheduler (a ``distributed.Client`` if one is active) and return what the
  single-image call returns.
- :func:`gaussian_blur`, :func:`extreme`, :func:`luminance_stats`, :func:`histogram`,
  :func:`histogram_keys`, :func:`compact`, :func:`compacted_image` and :func:`extremes` take
  every pixel format, as the single-image calls: ``uint8``, ``uint16`` or ``float32`` arrays
  of shape ``(H, W)``, ``(H, W, 3)`` (``uint8`` only) or ``(H, W, 4)``, chunked in H and W
  (the float32 statistics add the chunks' exact sums and round once). The other operations
  (:func:`histogram_rgba`, :func:`histogram_luminance`, :func:`luminance`) take RGBA8
  (``(H, W, 4)`` ``uint8``), as their single-image calls.
- :func:`compacted_image` returns a Dask array whose chunks are filled from the compaction.
- :func:`exclusive_scan` scans a 1-D ``uint32`` Dask array (lazy).
- :func:`blobs` labels each chunk in parallel and joins the blobs that cross chunk borders,
  their statistics combined exactly (computed at once; the label image lazy), as
  ``clpix.blobs`` on the whole image; integer-key formats (uint8 and uint16).

Each worker process makes one engine on first use and keeps it: ``clpix.default_engine()``
(the best device, honouring ``CLPIX_BACKEND`` and ``CLPIX_DEVICE`` on the worker), or, with
``backend="cpu"`` / ``"opencl"`` / ``"auto"``, one engine of that kind a process. On a host
with several GPUs, :func:`one_device_per_worker` gives each worker process its own device
(``client.register_plugin(clpix.dask.one_device_per_worker())`` on a ``LocalCluster`` with one
worker per GPU), and :func:`use_device` sets it by hand.

>>> import dask.array as da, numpy as np, clpix.dask
>>> img = da.from_array(np.zeros((4096, 4096, 4), np.uint8), chunks=(1024, 1024, 4))
>>> blurred = clpix.dask.gaussian_blur(img, 8, border="reflect")   # lazy
>>> clpix.dask.extreme(img, "brightest")                            # computed
Hit(x=0, y=0, luminance=0, rgba=(0, 0, 0, 0))
"""

from __future__ import annotations

import math
import zlib
from typing import Any, Callable, List, Optional, Sequence, Tuple

import dask
import dask.array as da
import numpy as np
from dask.delayed import Delayed, delayed

import clpix

from . import _dask_blur
from ._dask_blobs import blobs
from ._dask_engines import engine, use_device
from . import _dask_formats as _formats

__all__ = [
    "blobs",
    "compact",
    "compacted_image",
    "engine",
    "exclusive_scan",
    "extreme",
    "extremes",
    "gaussian_blur",
    "histogram",
    "histogram_keys",
    "histogram_luminance",
    "histogram_rgba",
    "luminance",
    "luminance_stats",
    "one_device_per_worker",
    "use_device",
]

# How many partials one combine task takes.
SPLIT_EVERY = 8
_U32_MAX = 2**32 - 1

def _gpus() -> List[int]:
    """The indices of the OpenCL GPUs and accelerators in ``clpix.devices()``."""
    return [d.index for d in clpix.devices() if d.device_type in ("GPU", "accelerator")]


def _worker_number(name: Any, address: str) -> int:
    """A worker's number: its name where that is a number (``LocalCluster`` names its workers
    0, 1, ...), else a stable hash of its address."""
    try:
        return int(name)
    except (TypeError, ValueError):
        return zlib.crc32(str(address).encode())


def one_device_per_worker(devices: Optional[Sequence[Any]] = None) -> Any:
    """A ``distributed`` worker plugin that gives each worker its own device: worker number n
    (``LocalCluster`` names its workers 0, 1, ...) takes ``devices[n % len(devices)]`` through
    :func:`use_device`. ``devices`` defaults to the worker's OpenCL GPUs and accelerators in
    ``clpix.devices()`` order; with none, the worker keeps ``clpix.default_engine()``. Register it
    once: ``client.register_plugin(clpix.dask.one_device_per_worker())``; workers that join
    later take theirs as they start.

    >>> cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=4)  # doctest: +SKIP
    >>> client = distributed.Client(cluster)                                   # doctest: +SKIP
    >>> client.register_plugin(clpix.dask.one_device_per_worker())             # doctest: +SKIP
    """
    from distributed.diagnostics.plugin import WorkerPlugin

    chosen = None if devices is None else list(devices)

    class OneDevicePerWorker(WorkerPlugin):
        name = "clpix-one-device-per-worker"

        def setup(self, worker: Any) -> None:
            choice = chosen if chosen is not None else _gpus()
            if choice:
                n = _worker_number(worker.name, worker.address)
                use_device(choice[n % len(choice)])

    return OneDevicePerWorker()


# --- inputs -------------------------------------------------------------------------------


def _as_image(img: Any, dtypes: Sequence[Any] = (np.uint8,)) -> da.Array:
    """``img`` as a Dask array of shape (H, W, 4), one chunk across the channels."""
    if not isinstance(img, da.Array):
        if not isinstance(img, np.ndarray):
            raise TypeError(
                "expected a dask.array.Array (or numpy.ndarray) of shape (H, W, 4); "
                f"got {type(img).__name__}"
            )
        img = da.from_array(img, chunks=img.shape or ())
    names = " or ".join(np.dtype(d).name for d in dtypes)
    if img.ndim != 3 or img.shape[2] != 4:
        raise ValueError(
            f"expected an image of shape (H, W, 4) and dtype {names}; "
            f"got an array of shape {img.shape}"
        )
    if img.dtype not in [np.dtype(d) for d in dtypes]:
        raise TypeError(
            f"expected an image of shape (H, W, 4) and dtype {names}; got dtype {img.dtype}"
        )
    return _formats.checked(img)


def _empty(img: da.Array) -> np.ndarray:
    """A NumPy image of ``img``'s shape, for one that has no pixels (no data to compute)."""
    return np.zeros(img.shape, img.dtype)


def _probe() -> np.ndarray:
    """A 1×1 image on which the local engine checks parameters with clpix's own messages."""
    return np.zeros((1, 1, 4), np.uint8)


def _offsets(chunks: Tuple[int, ...]) -> List[int]:
    return [int(v) for v in np.cumsum((0,) + tuple(chunks))[:-1]]


def _blocks(img: da.Array) -> List[Tuple[Delayed, int, int, int, int]]:
    """Every chunk as (delayed block, first row, first column, rows, columns), in chunk-row
    order."""
    blocks = img.to_delayed()
    ys, xs = _offsets(img.chunks[0]), _offsets(img.chunks[1])
    return [
        (blocks[(i, j, 0)[: img.ndim]], y0, x0, h, w)
        for i, (y0, h) in enumerate(zip(ys, img.chunks[0]))
        for j, (x0, w) in enumerate(zip(xs, img.chunks[1]))
    ]


def _tree(parts: List[Any], combine: Callable[..., Any]) -> Any:
    """Combines partials in a tree of ``SPLIT_EVERY``-way combine tasks."""
    while len(parts) > 1:
        parts = [
            delayed(combine, pure=True)(*parts[i : i + SPLIT_EVERY])
            for i in range(0, len(parts), SPLIT_EVERY)
        ]
    return parts[0]


def _held_part(part: Callable[..., Any], img: da.Array) -> bool:
    """Whether ``part`` takes a ``DeviceImage`` of ``img``'s format as well as an array (the
    exact f32 sum of ``stats_part`` reads the pixels on the host)."""
    held = (_formats.extreme_part, _formats.histogram_part, _hist_part, _compact_part, _candidates_part)
    return part in held or (part is _formats.stats_part and img.dtype != np.float32)


def _reduce(img: da.Array, part: Callable[..., Any], combine: Callable[..., Any], *args: Any):
    """Computes ``part(block, y0, x0, width, *args)`` on every chunk and combines the results.
    For a lazy ``gaussian_blur`` (on the reduction's backend) ``part`` runs in the task that
    blurs each chunk, on the blur the device holds: the blurred chunks never come back."""
    if _held_part(part, img):
        starts = (_offsets(img.chunks[0]), _offsets(img.chunks[1]))
        fused = _dask_blur.reduced_parts(img, part, args, starts)
        if fused:
            return _tree(fused, combine)
    w = img.shape[1]
    parts = [
        delayed(part, pure=True)(b, y0, x0, w, *args) for b, y0, x0, _, _ in _blocks(img)
    ]
    return _tree(parts, combine)


# --- the brightest or darkest pixel, statistics, histograms --------------------------------
# Every format (the partials in clpix._dask_formats); histogram_rgba and histogram_luminance
# are RGBA8's.


def _darkest(which: str, backend: Optional[str]) -> bool:
    """Whether ``which`` asks for the darkest pixels; clpix's own ``ValueError`` for anything
    but ``"brightest"`` and ``"darkest"``."""
    if which not in ("brightest", "darkest"):
        engine(backend).extreme(_probe(), which)
    return which == "darkest"


def extreme(img: Any, which: str, *, backend: Optional[str] = None) -> Any:
    """The brightest (``which="brightest"``: largest key) or darkest (``"darkest"``) pixel of
    an image of any format (uint8, uint16 or float32 of shape (H, W), (H, W, 3) (uint8) or
    (H, W, 4)), ties to the smallest scan index, NaN keys never chosen, as ``clpix.extreme``
    on the whole image: a ``clpix.Hit`` for RGBA8, a ``clpix.FormatHit`` otherwise."""
    darkest = _darkest(which, backend)
    img = _formats.as_any_image(img)
    if img.size == 0:
        return engine(backend).extreme(_empty(img), which)
    combine = _formats.darkest_of if darkest else _formats.brightest_of
    found = dask.compute(_reduce(img, _formats.extreme_part, combine, darkest, backend))[0]
    return _formats.hit(img, found, which)


def luminance_stats(img: Any, *, backend: Optional[str] = None) -> Any:
    """Sum (exact), count, mean (``sum / count`` in float64, as clpix), min and max of the
    keys of an image of any format, as ``clpix.luminance_stats`` on the whole image:
    ``clpix.LuminanceStats`` for integer formats, ``clpix.FloatStats`` for float32 (NaN keys
    left out; the chunks' exact sums added, the total rounded once)."""
    img = _formats.as_any_image(img)
    if img.size == 0:
        return engine(backend).luminance_stats(_empty(img))
    found = dask.compute(_reduce(img, _formats.stats_part, _formats.stats_of, backend))[0]
    return _formats.stats(img, found)


def _binned(img: Any, keys: bool, bins: int, range: Tuple[float, float], backend: Optional[str]):
    img = _formats.as_any_image(img)
    e = engine(backend)
    probe = _formats.probe(img)  # clpix's own checks of the bins on the format
    if keys:
        e.histogram_keys(probe, bins, range)
    else:
        e.histogram(probe, bins, range)
    if img.size == 0:
        return np.zeros(_formats.histogram_shape(img, keys, bins), np.uint32)
    args = (keys, bins, tuple(range), backend)
    counts = dask.compute(_reduce(img, _formats.histogram_part, _sum_of, *args))[0]
    return counts.astype(np.uint32)  # at most u32::MAX pixels (checked): every counter fits


def histogram(
    img: Any, bins: int, range: Tuple[float, float], *, backend: Optional[str] = None
) -> np.ndarray:
    """The ``(channels, bins)`` uint32 histograms of each channel of an image of any format,
    ``bins`` bins over ``range = (lo, hi)``, summed over the chunks (as ``clpix.histogram``)."""
    return _binned(img, False, bins, range, backend)


def histogram_keys(
    img: Any, bins: int, range: Tuple[float, float], *, backend: Optional[str] = None
) -> np.ndarray:
    """The ``(bins,)`` uint32 histogram of the keys of an image of any format, summed over the
    chunks (as ``clpix.histogram_keys``)."""
    return _binned(img, True, bins, range, backend)


def _hist_part(block, y0, x0, width, which, backend):
    e = engine(backend)
    h = e.histogram_rgba(block) if which == "rgba" else e.histogram_luminance(block)
    return h.astype(np.uint64)


def _sum_of(*parts):
    return np.sum(parts, axis=0, dtype=np.uint64)


def _histogram(img: Any, which: str, backend: Optional[str]) -> np.ndarray:
    img = _as_image(img)
    shape = (4, 256) if which == "rgba" else (1024,)
    if img.size == 0:
        return np.zeros(shape, np.uint32)
    counts = dask.compute(_reduce(img, _hist_part, _sum_of, which, backend))[0]
    # At most u32::MAX pixels (checked): every counter fits.
    return counts.astype(np.uint32)


def histogram_rgba(img: Any, *, backend: Optional[str] = None) -> np.ndarray:
    """The ``(4, 256)`` uint32 histogram of R, G, B and A, summed over the chunks."""
    return _histogram(img, "rgba", backend)


def histogram_luminance(img: Any, *, backend: Optional[str] = None) -> np.ndarray:
    """The ``(1024,)`` uint32 luminance histogram, summed over the chunks."""
    return _histogram(img, "luminance", backend)


# --- compaction ----------------------------------------------------------------------------


def _global(records: np.ndarray, y0: int, x0: int) -> np.ndarray:
    """Records of a chunk in the whole image's coordinates."""
    records["x"] += np.uint32(x0)
    records["y"] += np.uint32(y0)
    return records


def _scan_index(records: np.ndarray, width: int) -> np.ndarray:
    return records["y"].astype(np.uint64) * np.uint64(width) + records["x"].astype(np.uint64)


def _compact_part(block, y0, x0, width, threshold, backend):
    # Any format; a chunk without pixels gives no records, of its format's dtype.
    return _global(engine(backend).compact(block, threshold), y0, x0)


def _scan_order_of(width):
    def combine(*parts):
        records = np.concatenate(parts)
        # Scan indices are unique: the sort is exact whatever the order of the parts.
        return records[np.argsort(_scan_index(records, width), kind="stable")]

    return combine


def _by_luminance(records: np.ndarray, width: int, descending: bool) -> np.ndarray:
    """Records (of any format) by key (descending or ascending), ties by scan index."""
    key = _formats.record_keys(records)
    return records[np.lexsort((_scan_index(records, width), -key if descending else key))]


def _compact_delayed(img: da.Array, threshold: float, backend: Optional[str]) -> Delayed:
    return _reduce(img, _compact_part, _scan_order_of(img.shape[1]), threshold, backend)


def compact(
    img: Any, threshold: float, order: str = "scan", *, backend: Optional[str] = None
) -> np.ndarray:
    """The pixels of an image of any format whose key is above ``threshold`` across all
    chunks, in ``order`` (``"scan"``, or ``"luminance"``: key descending, ties in scan order),
    as ``clpix.compact`` on the whole image: a structured array of ``clpix.HIT_DTYPE`` (x, y,
    luminance, rgba) for RGBA8, of x, y, key and value for the other formats."""
    img = _formats.as_any_image(img)
    # clpix's own checks of the threshold and order, on an image of the format without pixels:
    # no records, of the format's dtype.
    none = engine(backend).compact(_formats.probe(img)[:0], threshold, order)
    if img.size == 0:
        return none
    hits = dask.compute(_compact_delayed(img, threshold, backend))[0]
    if order == "luminance":
        return _by_luminance(hits, img.shape[1], True)
    return hits


def _fill_block(records, y0, x0, h, w, width, tail, dtype):
    """One chunk of the compacted image (of shape ``(h, w) + tail``): pixel p (scan index)
    holds record p's value (RGBA8: its ``rgba``)."""
    out = np.zeros((h, w) + tail, dtype)
    values = records["rgba" if "rgba" in (records.dtype.names or ()) else "value"]
    n = len(records)
    first = y0 * width
    for r in range(h):
        start = first + r * width + x0
        stop = min(start + w, n)
        if stop > start:
            out[r, : stop - start] = values[start:stop]
    return out


def compacted_image(
    img: Any, threshold: float, order: str = "scan", *, backend: Optional[str] = None
) -> da.Array:
    """A Dask array of the image's shape, dtype and chunks (an image of any format, as
    ``clpix.compacted_image``) whose first n pixels in scan order are the values of the n kept
    pixels (key above ``threshold``, in ``order``: ``"scan"`` or ``"luminance"``), the rest
    zeros (every channel)."""
    img = _formats.as_any_image(img)
    engine(backend).compacted_image(_formats.probe(img), threshold, order)  # clpix's checks
    if img.size == 0:
        return da.zeros(img.shape, dtype=img.dtype, chunks=img.chunks)
    records = _compact_delayed(img, threshold, backend)
    width, tail = img.shape[1], img.shape[2:]
    if order == "luminance":
        records = delayed(_by_luminance, pure=True)(records, width, True)
    ys, xs = _offsets(img.chunks[0]), _offsets(img.chunks[1])
    rows = []
    for y0, h in zip(ys, img.chunks[0]):
        row = []
        for x0, w in zip(xs, img.chunks[1]):
            args = (records, y0, x0, h, w, width, tail, img.dtype)
            block = delayed(_fill_block, pure=True)(*args)
            row.append(da.from_delayed(block, (h, w) + tail, img.dtype))
        rows.append(row)
    # One list level per axis: rows (H), chunks of a row (W), the single channel chunk.
    return da.block([[[b] for b in row] if tail else row for row in rows])


# --- the k brightest / darkest ------------------------------------------------------------


def _min_sq(min_distance: float) -> float:
    """``min_distance²`` as clpix compares it: the distance rounded to f32, squared in f64."""
    d = float(np.float32(min_distance))
    return d * d


def _neighbours(min_sq: float, height: int, width: int) -> Optional[int]:
    """At most how many other pixels one taken pixel can exclude: the nonzero offsets
    (dx, dy) within the image with ``dx² + dy² < min_distance²``; None when every two pixels
    of the image are closer than that (only one pixel can be taken)."""
    if (height - 1) ** 2 + (width - 1) ** 2 < min_sq:
        return None
    reach = math.isqrt(int(min_sq)) + 1  # |dx|, |dy| below this
    if min_sq > 2.0**52 or min(reach, width) > 10**7:
        return height * width  # a bound that keeps every candidate (exact, only heavier)
    dx = np.arange(min(reach, width), dtype=np.float64)
    # Integers below 2^53: squares and sums are exact in float64, as clpix compares them.
    dy = np.floor(np.sqrt(np.maximum(min_sq - dx * dx, 0.0)))
    while True:
        over = (dy >= 0) & (dx * dx + dy * dy >= min_sq)
        if not over.any():
            break
        dy[over] -= 1
    while True:
        under = dx * dx + (dy + 1) ** 2 < min_sq
        if not under.any():
            break
        dy[under] += 1
    dy = np.minimum(dy, height - 1)
    per_column = np.where(dy >= 0, 2 * dy + 1, 0)
    per_column[1:] *= 2  # dx and -dx
    return int(per_column.sum()) - 1


def _candidates_part(block, y0, x0, width, m, darkest, backend):
    # Any format, array or held; at most its pixels (none: no records, of its format's dtype).
    m = min(m, block.shape[0] * block.shape[1])
    top = engine(backend).extremes(block, "darkest" if darkest else "brightest", m, 0.0)
    return _global(top, y0, x0)


def _first_of(width: int, m: int, descending: bool):
    """A combine of candidate records: the first ``m`` of them all by key (ties by scan index),
    in that order. The ``m``-th key found by a partition, then only the records at or beyond it
    sorted: each tree step sorts about ``m`` records, not all it was sent."""

    def combine(*parts):
        records = np.concatenate(parts)
        if len(records) > m:
            key = _formats.record_keys(records)
            if descending:
                records = records[key >= np.partition(key, len(key) - m)[len(key) - m]]
            else:
                records = records[key <= np.partition(key, m - 1)[m - 1]]
        return _by_luminance(records, width, descending)[:m]

    return combine


def _greedy(candidates: np.ndarray, k: int, min_sq: float) -> np.ndarray:
    """clpix's greedy selection over candidates in order: each is taken when
    ``dx² + dy² ≥ min_distance²`` (f64) for every pixel taken before it."""
    xs = candidates["x"].astype(np.float64)
    ys = candidates["y"].astype(np.float64)
    alive = np.ones(len(candidates), bool)
    taken: List[int] = []
    i = 0
    while len(taken) < k:
        rest = np.flatnonzero(alive[i:])
        if len(rest) == 0:
            break
        i += int(rest[0])
        taken.append(i)
        if min_sq > 0.0:
            dx = np.abs(xs[i + 1 :] - xs[i])
            dy = np.abs(ys[i + 1 :] - ys[i])
            alive[i + 1 :] &= dx * dx + dy * dy >= min_sq
        i += 1
    return candidates[np.asarray(taken, dtype=np.intp)]


def _select(img: Any, k: int, min_distance: float, darkest: bool, backend: Optional[str]):
    img = _formats.as_any_image(img)
    e = engine(backend)
    # clpix's own checks (k, min_distance) on a 1×1 image of the format; no records, of the
    # format's dtype.
    which = "darkest" if darkest else "brightest"
    none = e.extremes(_formats.probe(img), which, k, min_distance)[:0].copy()
    if img.size == 0 or k == 0:
        return none
    min_sq = _min_sq(min_distance)
    height, width = img.shape[:2]
    n = _neighbours(min_sq, height, width) if min_sq > 0.0 else 0
    # The greedy pass takes k pixels within the first k·(n + 1) candidates of the whole
    # image (each taken pixel excludes at most n others), or runs out of pixels; each chunk's
    # first k·(n + 1) candidates hold every one of them that lies in that chunk.
    m = 1 if n is None else min(k * (n + 1), height * width)
    first = _first_of(width, m, descending=not darkest)
    # One chunk's candidates meet no combine: clpix's extremes gives them in this order already.
    ordered = dask.compute(_reduce(img, _candidates_part, first, m, darkest, backend))[0]
    return _greedy(ordered, k, min_sq)


def extremes(
    img: Any, which: str, k: int, min_distance: float = 0.0, *, backend: Optional[str] = None
) -> np.ndarray:
    """The k brightest or darkest (``which``) pixels at least ``min_distance`` apart of an image
    of any format, exactly as ``clpix.extremes`` on the whole image (the same records): each
    chunk sends its first k·(n + 1) candidates by key (n: the pixels one taken pixel can
    exclude; NaN keys never; of a lazy blur, from the chunk its task holds), the tree keeps that
    many, and the greedy selection runs on the client. Large distances make many candidates."""
    return _select(img, k, min_distance, _darkest(which, backend), backend)


# --- blur and luminance (lazy) --------------------------------------------------------------


def gaussian_blur(
    img: Any,
    radius: int,
    sigma: Optional[float] = None,
    border: str = "clamp",
    *,
    backend: Optional[str] = None,
) -> da.Array:
    """The separable Gaussian blur of an image of any format (lazy; as
    ``clpix.gaussian_blur``), equal bit for bit to ``clpix.gaussian_blur`` on the whole image.

    Each chunk is blurred with ``radius`` rows and columns of its neighbours around it along
    each axis cut into several chunks (chunks narrower than ``radius`` merged first), in two
    tasks a chunk (one names the edges its neighbours need, one assembles and blurs), and keeps
    its own pixels. At the image's edges the border mode is clpix's own, applied by each edge
    chunk: nothing is added beyond the image for clamp, reflect and zero (the edge chunk with
    its strips reaches at least ``radius`` pixels inward, so clpix's mirror lands on the same
    pixels as on the whole image), and the far side's strips for wrap.
    """
    img = _formats.as_any_image(img)
    engine(backend).gaussian_blur(_formats.probe(img), radius, sigma, border)  # clpix's own checks
    if img.size == 0:
        return da.zeros(img.shape, dtype=img.dtype, chunks=img.chunks)
    return _dask_blur.blur(img, radius, sigma, border, backend)


def luminance(img: Any) -> da.Array:
    """The luminance of every pixel (lazy): an ``(H, W)`` uint16 Dask array."""
    img = _as_image(img)
    return da.map_blocks(
        clpix.luminance,
        img,
        drop_axis=2,
        dtype=np.uint16,
        meta=np.empty((0, 0), np.uint16),
    )


# --- exclusive scan -------------------------------------------------------------------------


def _sum32(block) -> int:
    return int(np.sum(block, dtype=np.uint64)) & _U32_MAX


def _starts(*sums) -> List[int]:
    out, total = [], 0
    for s in sums:
        out.append(total)
        total = (total + s) & _U32_MAX
    return out


def _scan_block(block, starts, i, backend):
    return engine(backend).exclusive_scan(block) + np.uint32(starts[i])


def exclusive_scan(values: Any, *, backend: Optional[str] = None) -> da.Array:
    """Exclusive prefix sum of a 1-D uint32 Dask array (wrapping), lazy: each chunk is scanned
    by clpix from the wrapped total of the chunks before it."""
    if isinstance(values, np.ndarray):
        values = da.from_array(values, chunks=values.shape or ())
    if not isinstance(values, da.Array):
        raise TypeError(f"expected a 1-D dask array of dtype uint32; got {type(values).__name__}")
    if values.ndim != 1:
        raise ValueError(f"expected a 1-D array of dtype uint32; got shape {values.shape}")
    if values.dtype != np.uint32:
        raise TypeError(f"expected a 1-D array of dtype uint32; got dtype {values.dtype}")
    blocks = values.to_delayed()
    starts = delayed(_starts, pure=True)(*[delayed(_sum32, pure=True)(b) for b in blocks])
    parts = [
        da.from_delayed(delayed(_scan_block, pure=True)(b, starts, i, backend), (n,), np.uint32)
        for i, (b, n) in enumerate(zip(blocks, values.chunks[0]))
    ]
    return da.concatenate(parts) if parts else da.zeros(0, dtype=np.uint32)
