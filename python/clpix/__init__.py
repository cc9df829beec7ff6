"""clpix: exact image reductions, histograms, compaction and Gaussian blur on OpenCL or the CPU.

Images are NumPy arrays of shape ``(H, W, 4)`` and dtype ``uint8`` (RGBA8), of any strides:
a C-contiguous array, or one whose rows are padded or cut from a wider array, is read in
place. The Gaussian blur, the brightest and darkest pixel, the k brightest and darkest
(:func:`extremes`), the statistics, the histograms with bins per call (:func:`histogram`,
:func:`histogram_keys`), :func:`compact` and :func:`compacted_image` take every pixel format:
``uint8``, ``uint16`` or ``float32`` arrays of shape ``(H, W)`` (mono), ``(H, W, 3)`` (RGB,
``uint8`` only) or ``(H, W, 4)`` (RGBA), as do :func:`blobs` (connected components) and
:func:`centroids`. Every backend gives the
same results, bit for bit (see the specification, ``docs/SPEC.md`` of the clpix repository).

>>> import numpy as np, clpix
>>> engine = clpix.Engine()            # the best GPU, else the CPU (rayon)
>>> img = np.zeros((480, 640, 4), np.uint8); img[10, 20] = 255
>>> engine.extreme(img, "brightest")
Hit(x=20, y=10, luminance=1023, rgba=(255, 255, 255, 255))

The module-level functions (``clpix.extreme(img, "brightest")`` …) run on
:func:`default_engine`, one
engine a process made on first use. ``clpix.dask`` runs the same operations on Dask arrays.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Optional, Tuple, Union

import numpy as np

if TYPE_CHECKING:
    import numpy.typing as npt

from ._clpix import (
    BLOB_DTYPE,
    BLOB_F32_DTYPE,
    CENTROID_DTYPE,
    CENTROID_F32_DTYPE,
    HIT_DTYPE,
    MAX_BINS,
    MAX_LUMINANCE,
    MAX_RADIUS,
    ClpixError,
    Device,
    DeviceImage,
    Engine,
    FloatStats,
    FormatHit,
    Hit,
    LuminanceStats,
    blob_weight_exponent,
    devices,
    luminance,
)
from . import _clpix

_time_rust = _clpix._time_rust  # for bench/bench.py, not part of the API

__all__ = [
    "BLOB_DTYPE",
    "BLOB_F32_DTYPE",
    "CENTROID_DTYPE",
    "CENTROID_F32_DTYPE",
    "HIT_DTYPE",
    "MAX_BINS",
    "MAX_LUMINANCE",
    "MAX_RADIUS",
    "ClpixError",
    "Device",
    "DeviceImage",
    "Engine",
    "FloatStats",
    "FormatHit",
    "Hit",
    "LuminanceStats",
    "blob_weight_exponent",
    "blobs",
    "centroids",
    "compact",
    "compacted_image",
    "default_engine",
    "devices",
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
]

__version__ = "0.1.0"

_default: Optional[Engine] = None
_default_lock = threading.Lock()


def default_engine() -> Engine:
    """The process's default engine, made on first use with ``Engine()`` (automatic choice,
    honouring ``CLPIX_BACKEND`` and ``CLPIX_DEVICE``) and kept for the life of the process."""
    global _default
    engine = _default
    if engine is None:
        with _default_lock:
            if _default is None:
                _default = Engine()
            engine = _default
    return engine


def extreme(img: np.ndarray, which: str) -> Union[Hit, FormatHit]:
    """The brightest (``which="brightest"``) or darkest (``"darkest"``) pixel of an image of
    any format, on the default engine (see ``Engine.extreme``): a :class:`Hit` for RGBA8, a
    :class:`FormatHit` for the others."""
    return default_engine().extreme(img, which)


def luminance_stats(img: np.ndarray) -> Union[LuminanceStats, FloatStats]:
    """Sum, count, mean, min and max of the keys (the luminance of colour, the value of mono)
    of an image of any format, on the default engine: :class:`LuminanceStats` for integer
    formats, :class:`FloatStats` for float32."""
    return default_engine().luminance_stats(img)


def histogram(img: np.ndarray, bins: int, range: Tuple[float, float]) -> np.ndarray:
    """The ``(channels, bins)`` uint32 histograms of each channel of an image of any format,
    ``bins`` bins over ``range = (lo, hi)``, on the default engine (see
    ``Engine.histogram``)."""
    return default_engine().histogram(img, bins, range)


def histogram_keys(img: np.ndarray, bins: int, range: Tuple[float, float]) -> np.ndarray:
    """The ``(bins,)`` uint32 histogram of the keys of an image of any format, ``bins`` bins
    over ``range = (lo, hi)``, on the default engine (see ``Engine.histogram_keys``)."""
    return default_engine().histogram_keys(img, bins, range)


def extremes(img: np.ndarray, which: str, k: int, min_distance: float = 0.0) -> np.ndarray:
    """The k brightest or darkest (``which``) pixels at least ``min_distance`` apart (greedy,
    by key; NaN keys never) of an image of any format, on the default engine (see
    ``Engine.extremes``): a structured array, of :data:`HIT_DTYPE` for RGBA8, of fields ``x``,
    ``y``, ``key`` and ``value`` otherwise (as :func:`compact`'s)."""
    return default_engine().extremes(img, which, k, min_distance)


def histogram_rgba(img: np.ndarray) -> np.ndarray:
    """The ``(4, 256)`` uint32 channel histogram, on the default engine."""
    return default_engine().histogram_rgba(img)


def histogram_luminance(img: np.ndarray) -> np.ndarray:
    """The ``(1024,)`` uint32 luminance histogram, on the default engine."""
    return default_engine().histogram_luminance(img)


def compact(img: np.ndarray, threshold: Union[int, float], order: str = "scan") -> np.ndarray:
    """The pixels of an image of any format whose key (luminance of colour, value of mono) is
    above ``threshold``, in ``order`` (``"scan"``, or ``"luminance"``: largest key first, ties
    in scan order), on the default engine (see ``Engine.compact``): a structured array, of
    :data:`HIT_DTYPE` for RGBA8, of fields ``x``, ``y``, ``key`` and ``value`` otherwise."""
    return default_engine().compact(img, threshold, order)


def compacted_image(
    img: np.ndarray, threshold: Union[int, float], order: str = "scan"
) -> np.ndarray:
    """The pixels :func:`compact` keeps (key above ``threshold``, in ``order``), their values
    packed at the start of an array of the image's shape and dtype (any format), the other
    pixels zeros, on the default engine (see ``Engine.compacted_image``)."""
    return default_engine().compacted_image(img, threshold, order)


def gaussian_blur(
    img: np.ndarray,
    radius: int,
    sigma: Optional[float] = None,
    border: str = "clamp",
    out: Optional[np.ndarray] = None,
) -> np.ndarray:
    """Separable Gaussian blur of an image of any format (each channel alone), on the
    default engine; into ``out`` (returned) when given."""
    return default_engine().gaussian_blur(img, radius, sigma, border, out)


def exclusive_scan(values: np.ndarray) -> np.ndarray:
    """Exclusive prefix sum of a 1-D uint32 array (wrapping), on the default engine."""
    return default_engine().exclusive_scan(values)


def blobs(
    img: np.ndarray,
    threshold: Union[int, float],
    connectivity: int = 8,
    min_area: int = 1,
    max_area: Optional[int] = None,
    background: Union[int, float] = 0,
    labels: bool = True,
    weight_exponent: Optional[int] = None,
) -> Tuple[Optional[np.ndarray], np.ndarray]:
    """The blobs (connected components) of the pixels whose key is above ``threshold`` in an
    image of any format (uint8 of shape ``(H, W)``, ``(H, W, 3)`` or ``(H, W, 4)``; uint16 or
    float32 of shape ``(H, W)`` or ``(H, W, 4)``), on the default engine (see
    ``Engine.blobs``): ``(labels, stats)``, the ``(H, W)`` uint32 label image (None for
    ``labels=False``) and a structured array of :data:`BLOB_DTYPE` (:data:`BLOB_F32_DTYPE`
    for float32), one record a blob."""
    return default_engine().blobs(
        img, threshold, connectivity, min_area, max_area, background, labels, weight_exponent
    )


def centroids(
    img: np.ndarray,
    points: npt.ArrayLike,
    radius: int,
    background: Union[int, float] = 0,
) -> np.ndarray:
    """The intensity-weighted centroid of the ``(2 radius + 1)²`` window around each of
    ``points`` (clipped to the image) in an image of any format (as :func:`blobs` takes), each
    pixel weighing ``max(key − background, 0)`` (of float32 exact integers in one unit
    ``2^-s``), on the default engine (see ``Engine.centroids``): a structured array of
    :data:`CENTROID_DTYPE` (``x``, ``y``, ``weight_sum``; :data:`CENTROID_F32_DTYPE` for
    float32), one record a point. ``points``: an ``(N, 2)`` integer array-like of ``(x, y)``,
    or records with fields ``x`` and ``y`` (what :func:`extremes` gives)."""
    return default_engine().centroids(img, points, radius, background)
