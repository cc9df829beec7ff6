"""Every pixel format in ``clpix.dask``: the input check, and the per-chunk partials and their
combination for the brightest and darkest pixel, the statistics, the histograms with bins
per call and the compaction's order by key (``clpix.dask`` runs them over the chunks).

Images are ``uint8``, ``uint16`` or ``float32`` Dask (or NumPy) arrays of shape ``(H, W)``
(mono), ``(H, W, 3)`` (RGB8, ``uint8`` only) or ``(H, W, 4)`` (RGBA), as the single-image
calls take them. The float32 statistics stay exact across chunks: each chunk sends the exact
sum of its keys (an integer multiple of 2^-149, from ``clpix._clpix._f32_key_sum``), and the
whole is rounded once, as the single-image call does.
"""

from __future__ import annotations

import math
from typing import Any, Optional, Tuple

import dask.array as da
import numpy as np

import clpix
from clpix import _clpix

from ._dask_engines import engine

ACCEPTED = "uint8, uint16 or float32 of shape (H, W), (H, W, 3) (uint8 only) or (H, W, 4)"
_DTYPES = (np.dtype(np.uint8), np.dtype(np.uint16), np.dtype(np.float32))
_U32_MAX = 2**32 - 1


def checked(img: da.Array) -> da.Array:
    """An image whose shape and dtype are checked: known chunk sizes, at most ``u32::MAX``
    pixels, one chunk across the channels."""
    if any(math.isnan(c) for axis in img.chunks for c in axis):
        raise ValueError("the image's chunk sizes are unknown: call compute_chunk_sizes() first")
    h, w = img.shape[:2]
    if h * w > _U32_MAX:
        raise ValueError(
            f"image of {w}×{h} pixels is too large: more than u32::MAX pixels "
            "(indices and counters are u32)"
        )
    if img.ndim == 3 and len(img.chunks[2]) != 1:
        img = img.rechunk({2: img.shape[2]})
    return img


def as_any_image(img: Any) -> da.Array:
    """``img`` as a Dask image of any format: a ``TypeError`` for another object or dtype, a
    ``ValueError`` for another shape, each naming what is accepted (as the single-image
    calls)."""
    if not isinstance(img, da.Array):
        if not isinstance(img, np.ndarray):
            raise TypeError(
                f"expected a dask.array.Array (or numpy.ndarray), {ACCEPTED}; "
                f"got {type(img).__name__}"
            )
        img = da.from_array(img, chunks=img.shape or ())
    if img.dtype not in _DTYPES or not img.dtype.isnative:
        raise TypeError(
            f"expected an image of {ACCEPTED} (native byte order); got dtype {img.dtype}"
        )
    if img.ndim == 3 and img.shape[2] == 3 and img.dtype != np.uint8:
        raise ValueError(
            f"an (H, W, 3) image is RGB8, uint8 only; a {img.dtype} image is of shape (H, W) or "
            f"(H, W, 4) (expected {ACCEPTED}); got shape {img.shape}"
        )
    if not (img.ndim == 2 or (img.ndim == 3 and img.shape[2] in (3, 4))):
        raise ValueError(f"expected an image of {ACCEPTED}; got an array of shape {img.shape}")
    return checked(img)


def format_of(img: Any) -> str:
    """The format name of a checked image (as ``FormatHit.format``)."""
    mono = img.ndim == 2
    if img.dtype == np.uint8:
        return "mono8" if mono else ("rgb8" if img.shape[2] == 3 else "rgba8")
    if img.dtype == np.uint16:
        return "mono16" if mono else "rgba16"
    return "mono-f32" if mono else "rgba-f32"


def probe(img: da.Array) -> np.ndarray:
    """A 1×1 image of ``img``'s format, on which the local engine checks parameters."""
    return np.zeros((1, 1) + img.shape[2:], img.dtype)


def _none_found(operation: str, img: Any) -> ValueError:
    """clpix's error for an image without a key that is a number (every key NaN)."""
    h, w = img.shape[:2]
    return ValueError(f"{operation} needs at least one pixel, but the image is {w}×{h}")


# --- the brightest or darkest pixel --------------------------------------------------------


def extreme_part(block, y0, x0, width, darkest, backend):
    """(key, scan index in the whole image, channels) of a chunk's pixel; None without one."""
    if block.size == 0:
        return None
    try:
        h = engine(backend).extreme(block, "darkest" if darkest else "brightest")
    except ValueError:
        if block.dtype != np.float32:
            raise
        return None  # every key of the chunk is NaN
    return (h.key, (y0 + h.y) * width + (x0 + h.x), h.value)


def brightest_of(*parts):
    # Largest key, then the smallest scan index.
    found = [p for p in parts if p is not None]
    return max(found, key=lambda p: (p[0], -p[1])) if found else None


def darkest_of(*parts):
    found = [p for p in parts if p is not None]
    return min(found, key=lambda p: (p[0], p[1])) if found else None


def hit(img: da.Array, found: Optional[Tuple[Any, int, Tuple]], which: str):
    """The record of the pixel found: a ``clpix.Hit`` for RGBA8, else a ``clpix.FormatHit``."""
    if found is None:
        raise _none_found(which, img)
    key, index, value = found
    w = img.shape[1]
    fmt = format_of(img)
    if fmt == "rgba8":
        return clpix.Hit(index % w, index // w, key, value)
    return clpix.FormatHit(fmt, index % w, index // w, key, value)


# --- statistics ----------------------------------------------------------------------------


def stats_part(block, y0, x0, width, backend):
    """(sum, count, min, max) of a chunk's keys; float32: the exact sum as an integer multiple
    of 2^-149, and whether +inf and -inf keys occur; None without keys."""
    if block.size == 0:
        return None
    e = engine(backend)
    if block.dtype != np.float32:
        s = e.luminance_stats(block)
        return (s.sum, s.count, s.min, s.max)
    try:
        s = e.luminance_stats(block)
    except ValueError:
        return None  # every key of the chunk is NaN
    buckets, pos_inf, neg_inf = _clpix._f32_key_sum(block)
    total = sum(v << i for i, v in enumerate(buckets) if v)
    return (total, s.count, s.min, s.max, pos_inf, neg_inf)


def stats_of(*parts):
    found = [p for p in parts if p is not None]
    if not found:
        return None
    out = (
        sum(p[0] for p in found),
        sum(p[1] for p in found),
        min(p[2] for p in found),
        max(p[3] for p in found),
    )
    if len(found[0]) == 6:
        out += (any(p[4] for p in found), any(p[5] for p in found))
    return out


def stats(img: da.Array, found):
    """The statistics record: ``LuminanceStats`` for integer keys, ``FloatStats`` (the exact
    sum rounded once: Python's int division is correctly rounded) for float32."""
    if found is None:
        raise _none_found("luminance_stats (every key is NaN)", img)
    if img.dtype != np.float32:
        return clpix.LuminanceStats(*found)
    total, count, lo, hi, pos_inf, neg_inf = found
    if pos_inf or neg_inf:
        s = math.nan if pos_inf and neg_inf else (math.inf if pos_inf else -math.inf)
    else:
        s = total / 2**149
    return clpix.FloatStats(s, count, lo, hi)


# --- histograms with bins per call ---------------------------------------------------------


def histogram_part(block, y0, x0, width, keys, bins, bounds, backend):
    e = engine(backend)
    h = e.histogram_keys(block, bins, bounds) if keys else e.histogram(block, bins, bounds)
    return h.astype(np.uint64)


def histogram_shape(img: da.Array, keys: bool, bins: int) -> Tuple[int, ...]:
    channels = 1 if img.ndim == 2 else img.shape[2]
    return (bins,) if keys else (channels, bins)


# --- compaction ----------------------------------------------------------------------------


def record_keys(records: np.ndarray) -> np.ndarray:
    """The keys of ``clpix.compact``'s records of any format, as numbers to sort by: int64
    (RGBA8's ``luminance``, the integer formats' ``key``) or float64 (float32 keys: never NaN,
    −0 given as +0), exact either way."""
    names = records.dtype.names or ()
    key = records["luminance" if "luminance" in names else "key"]
    return key.astype(np.float64 if key.dtype.kind == "f" else np.int64)
