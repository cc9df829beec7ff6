"""Engine.compact (and clpix.compact, clpix.dask.compact) on every pixel format (uint8, uint16,
float32 arrays shaped (H, W), (H, W, 3) or (H, W, 4)), against a NumPy reference written from
the semantics: the pixels whose key is strictly above the threshold (NaN keys never), in scan
order or key descending with ties in scan order, as records x, y, key, value (RGBA8: HIT_DTYPE).

The RGBA float32 key is fma(0.07, b, fma(0.72, g, 0.21 r)) in float32. NumPy has no fma; a
float64 ``a * b + c`` of float32 operands has an exact product (24 + 24 bits < 53) but its sum
may round, and rounding that to float32 would round twice. ``reference.fma_f32`` adds the
sum's error (TwoSum) to settle the float32 ties, so it is the fma rounded once;
``test_rgba_f32_key_reference_is_exact`` checks it against exact rationals
(``format_reference.rgba_f32_key``) on values full of NaN, infinities, zeros and denormals."""

from __future__ import annotations

import math

import numpy as np
import pytest

import clpix
import format_reference as fref
from reference import as_tuples, compact_indices, records
from reference import fma_f32
from test_formats import FORMAT_IDS, FORMATS, extremes_int, layouts, random_image, special_f32

ORDERS = ("scan", "luminance")
# The largest key of each integer format; None for float32.
MAX_KEY = {"mono8": 255, "mono16": 65535, "rgb8": 1023, "rgba8": 1023, "rgba16": 65535}


def keys(img: np.ndarray) -> np.ndarray:
    """The key of every pixel, (H, W): int64 for integer formats (mono: the value; RGB8 and
    RGBA8: (1023 (21 r + 72 g + 7 b)) // 25500; RGBA16: (21 r + 72 g + 7 b) // 100), float32
    for float32 (mono: the value; RGBA: the fma sequence, in float32)."""
    if img.ndim == 2:
        return img.copy() if img.dtype == np.float32 else img.astype(np.int64)
    if img.dtype == np.float32:
        r, g, b = (np.ascontiguousarray(img[..., c]) for c in range(3))
        with np.errstate(invalid="ignore", over="ignore"):
            first = fref.W_R * r  # one float32 product, rounded once
            return fma_f32(np.full_like(b, fref.W_B), b, fma_f32(np.full_like(g, fref.W_G), g, first))
    p = img.astype(np.int64)
    s = 21 * p[..., 0] + 72 * p[..., 1] + 7 * p[..., 2]
    return (1023 * s) // 25500 if img.dtype == np.uint8 else s // 100


def record_dtype(img: np.ndarray) -> np.dtype:
    if fref.format_of(img) == "rgba8":
        return clpix.HIT_DTYPE
    key = np.float32 if img.dtype == np.float32 else (np.uint8 if img.dtype == np.uint8 and img.ndim == 2 else np.uint16)
    value = (img.dtype,) if img.ndim == 2 else (img.dtype, (img.shape[2],))
    return np.dtype([("x", np.uint32), ("y", np.uint32), ("key", key), ("value", *value)])


def reference(img: np.ndarray, threshold, order: str) -> np.ndarray:
    """The records clpix.compact gives, from the semantics."""
    h, w = img.shape[:2]
    k = keys(img).ravel()
    t = np.float32(threshold) if img.dtype == np.float32 else threshold
    with np.errstate(invalid="ignore"):
        kept = np.flatnonzero(k > t)  # NaN > t is False: never kept
    if order == "luminance":
        kk = k[kept].astype(np.float64 if k.dtype == np.float32 else np.int64)
        kept = kept[np.argsort(-kk, kind="stable")]
    out = np.zeros(len(kept), record_dtype(img))
    out["x"], out["y"] = kept % max(w, 1), kept // max(w, 1)
    if fref.format_of(img) == "rgba8":
        out["luminance"], out["rgba"] = k[kept], img.reshape(-1, 4)[kept]
        return out
    key = k[kept]
    out["key"] = key + np.float32(0) if key.dtype == np.float32 else key  # -0 given as +0
    out["value"] = img.reshape((h * w,) + img.shape[2:])[kept]
    return out


def same(got: np.ndarray, want: np.ndarray, what="") -> None:
    """Equal records, bit for bit (NaN channels and the sign of zero included)."""
    assert got.dtype == want.dtype, what
    assert got.shape == want.shape, what
    assert got.tobytes() == want.tobytes(), what


def thresholds(img: np.ndarray) -> list:
    """Thresholds that keep everything, nothing, and some, for the image's format."""
    fmt = fref.format_of(img)
    if img.dtype == np.float32:
        k = keys(img)
        finite = k[np.isfinite(k)]
        mid = [float(np.median(finite))] if finite.size else []
        return [-math.inf, -1.0, -0.0, 0.0, 0.1, 1e-45, 3.4e38, math.inf] + mid
    top = MAX_KEY[fmt]
    k = keys(img)
    return [0, 1, top // 3, top - 1, top] + [int(np.median(k))]


def cases(dtype, channels: int) -> list:
    out = [
        random_image(dtype, channels, 1, 1, 1),
        random_image(dtype, channels, 1, 23, 2),
        random_image(dtype, channels, 19, 1, 3),
        random_image(dtype, channels, 37, 53, 4),
    ]
    if dtype == np.float32:
        out += [special_f32(17, 26, 5, channels), special_f32(13, 31, 8, channels, infinite=False)]
    else:
        out += [extremes_int(dtype, channels, 15, 22, 7), np.full((4, 5) + ((channels,) if channels > 1 else ()), 7, dtype)]
    return out


def test_every_format_against_the_reference(engine):
    for (dtype, channels), fmt in zip(FORMATS, FORMAT_IDS):
        for img in cases(dtype, channels):
            for t in thresholds(img):
                for order in ORDERS:
                    same(engine.compact(img, t, order), reference(img, t, order), f"{fmt} {img.shape} t={t} {order}")


def test_larger_images(engine, cpu):
    """Images of many work-groups (the OpenCL paths), against the reference and the CPU."""
    rng = np.random.default_rng(9)
    for (dtype, channels), fmt in zip(FORMATS, FORMAT_IDS):
        img = random_image(dtype, channels, 301, 257, 10)
        if dtype == np.float32:
            img[rng.random(img.shape[:2]) < 0.05] = np.nan
        t = thresholds(img)[-1]
        for order in ORDERS:
            got = engine.compact(img, t, order)
            same(got, reference(img, t, order), f"{fmt} {order}")
            same(got, cpu.compact(img, t, order), f"{fmt} {order}")


def test_float_specials(engine):
    """NaN never kept, ±inf, −0 keys given as +0 (values as they are), −0 threshold as +0."""
    img = np.array([[np.nan, -0.0, 0.0, np.inf, -np.inf, 1e-45, -1e-45, 2.0]], np.float32)
    got = engine.compact(img, -math.inf)
    assert list(got["x"]) == [1, 2, 3, 5, 6, 7]
    assert got["key"].view(np.uint32)[0] == 0 and got["value"].view(np.uint32)[0] == 0x80000000
    assert list(engine.compact(img, -0.0)["x"]) == [3, 5, 7] == list(engine.compact(img, 0.0)["x"])
    assert list(engine.compact(img, 0, "luminance")["x"]) == [3, 7, 5]
    assert len(engine.compact(img, math.inf)) == 0 and len(engine.compact(img[:, :1], -math.inf)) == 0
    # RGBA: a NaN in alpha does not matter; a NaN or an inf - inf key is never kept.
    rgba = np.array([[[1, 1, 1, np.nan], [np.nan, 0, 0, 1], [np.inf, -np.inf, 0, 1], [-0.0, -0.0, -0.0, -0.0]]], np.float32)
    for order in ORDERS:
        same(engine.compact(rgba, -1.0, order), reference(rgba, -1.0, order))
    assert list(engine.compact(rgba, -1.0)["x"]) == [0, 3]


def test_rgba_f32_key_reference_is_exact():
    """The vectorised fma sequence equals the exact rational one (and clpix's own keys)."""
    cpu = clpix.Engine("cpu")
    for img in (special_f32(11, 13, 21, 4), random_image(np.float32, 4, 9, 10, 22)):
        want = fref.keys(img)  # rationals, rounded once a step (a zero as +0)
        got = keys(img)
        np.testing.assert_array_equal(got, want)  # NaN where NaN; -0 == +0
        for y, x in [(0, 0), (3, 7), (8, 9)]:
            h = cpu.extreme(img[y : y + 1, x : x + 1], "brightest") if not np.isnan(got[y, x]) else None
            assert h is None or np.float32(h.key) == got[y, x] + np.float32(0)


def test_rgba8_is_unchanged(engine):
    img = random_image(np.uint8, 4, 23, 31, 5)
    for t in (0, 400, 1023):
        for order in ORDERS:
            got = engine.compact(img, t, order)
            assert got.dtype == clpix.HIT_DTYPE
            assert as_tuples(got) == records(img, compact_indices(img, t, order == "luminance"))


def test_layouts(cpu):
    """Any strides: the records of every layout equal those of the contiguous image."""
    for dtype, channels in FORMATS:
        img = random_image(dtype, channels, 11, 17, 11)
        t = thresholds(img)[-1]
        for order in ORDERS:
            want = reference(img, t, order)
            for name, view in layouts(img):
                same(cpu.compact(view, t, order), want, name)


def test_records(cpu):
    """Fields, dtypes and shapes of the records; empty images; writable, own memory."""
    for (dtype, channels), fmt in zip(FORMATS, FORMAT_IDS):
        img = random_image(dtype, channels, 6, 7, 3)
        got = cpu.compact(img, 0 if dtype != np.float32 else -math.inf)
        assert got.dtype == record_dtype(img) and got.ndim == 1 and len(got) > 0
        if fmt != "rgba8":
            assert got.dtype.names == ("x", "y", "key", "value")
            assert got.dtype["x"] == np.uint32 and got.dtype["y"] == np.uint32
            assert got["value"].shape == (len(got),) + img.shape[2:] and got["value"].dtype == dtype
            assert got.dtype.itemsize == 8 + got.dtype["key"].itemsize + np.dtype(dtype).itemsize * channels
        assert not np.shares_memory(got, img)
        got["x"] += 1
        for empty in (img[:0], img[:, :0]):
            for order in ORDERS:
                none = cpu.compact(empty, 0, order)
                assert none.dtype == got.dtype and none.shape == (0,)
        np.testing.assert_array_equal(clpix.compact(img, 0), cpu.compact(img, 0))
    assert record_dtype(np.zeros((1, 1), np.uint8))["key"] == np.uint8
    assert record_dtype(np.zeros((1, 1, 3), np.uint8))["key"] == np.uint16


def test_thresholds(engine):
    """Bounds of each format; floats rounded to float32; bad thresholds name what is taken."""
    for (dtype, channels), fmt in zip(FORMATS, FORMAT_IDS):
        img = extremes_int(dtype, channels, 5, 6, 1) if dtype != np.float32 else random_image(dtype, channels, 5, 6, 1)
        if dtype == np.float32:
            for t in (float("nan"), np.float32("nan")):
                with pytest.raises(ValueError, match="invalid threshold = NaN"):
                    engine.compact(img, t)
            with pytest.raises(TypeError, match="float32 image is a number"):
                engine.compact(img, "0.5")
            same(engine.compact(img, 0), engine.compact(img, 0.0))  # ints taken
            continue
        top = MAX_KEY[fmt]
        assert len(engine.compact(img, top)) == 0  # nothing is above the largest key
        same(engine.compact(img, np.uint16(min(top - 1, 300))), reference(img, min(top - 1, 300), "scan"))
        for t in (top + 1, -1, 2**70):
            with pytest.raises(ValueError, match=f"invalid threshold = {t}: 0..={top}"):
                engine.compact(img, t, "luminance")
        for t in (1.0, np.float64(3), "3"):
            with pytest.raises(TypeError, match=f"threshold of a {fmt} image is an integer in 0..={top}"):
                engine.compact(img, t)
    # A float threshold is rounded to float32, as NumPy compares a float32 array with it.
    v = np.array([[0.1, np.nextafter(np.float32(0.1), np.float32(1))]], np.float32)
    assert list(engine.compact(v, 0.1)["x"]) == [1] and list(engine.compact(v, 0.09999999)["x"]) == [0, 1]
    with pytest.raises(ValueError, match="invalid order"):
        engine.compact(v, 0.0, "sideways")


BAD = [
    ([[1, 2], [3, 4]], TypeError, r"expected a numpy.ndarray, uint8, uint16 or float32 of shape \(H, W\)"),
    (np.zeros((4, 4), np.float64), TypeError, r"\(H, W, 4\) \(native byte order\); got dtype float64"),
    (np.zeros((4, 4, 4), ">u2"), TypeError, "native byte order"),
    (np.zeros((4, 4, 3), np.uint16), ValueError, r"RGB8, uint8 only"),
    (np.zeros((4, 4, 5), np.uint8), ValueError, r"got an array of shape \(4, 4, 5\)"),
    (np.zeros(16, np.float32), ValueError, r"got an array of shape \(16,\)"),
]


def test_bad_images(cpu):
    for img, exc, match in BAD:
        for call in (lambda: cpu.compact(img, 0), lambda: clpix.compact(img, 1.5, "luminance")):
            with pytest.raises(exc, match=match):
                call()


def test_input_is_not_modified(engine):
    for dtype, channels in FORMATS:
        img = special_f32(10, 12, 5, channels) if dtype == np.float32 else random_image(dtype, channels, 10, 12, 5)
        before = img.copy()
        engine.compact(img, 0, "luminance")
        assert img.tobytes() == before.tobytes()


def _dask_cases(dtype, channels):
    """Images with many equal keys (the order of ties across chunks), in several chunkings."""
    if dtype == np.float32:
        imgs = [special_f32(23, 31, 2, channels), random_image(dtype, channels, 20, 30, 4)]
        imgs[1][:10] = np.nan  # chunks without a key
    else:
        imgs = [extremes_int(dtype, channels, 23, 31, 5), random_image(dtype, channels, 20, 30, 4)]
    for img in imgs:
        tail = img.shape[2:]
        h, w = img.shape[:2]
        chunkings = [(5, 7) + tail, ((3, h - 4, 1), (1, w - 10, 9)) + tail]
        if img.ndim == 3:
            chunkings.append((10, 10, 2))  # the channel axis chunked: rechunked
        yield img, chunkings


def test_dask_equals_single_call(cpu):
    da = pytest.importorskip("dask.array")
    import dask
    import clpix.dask as cd

    with dask.config.set(scheduler="threads"):
        for dtype, channels in FORMATS:
            for img, chunkings in _dask_cases(dtype, channels):
                for chunks in chunkings:
                    d = da.from_array(img, chunks=chunks)
                    for t in thresholds(img)[1::2]:
                        for order in ORDERS:
                            same(cd.compact(d, t, order, backend="cpu"), cpu.compact(img, t, order), f"{img.dtype} {img.shape} {chunks} t={t} {order}")
        img = random_image(np.uint16, 4, 12, 9, 3)  # NumPy input, the default engine
        same(cd.compact(img, 40000, "luminance"), cpu.compact(img, 40000, "luminance"))


def test_dask_empty_images_and_errors(cpu):
    da = pytest.importorskip("dask.array")
    import clpix.dask as cd

    for dtype, channels in FORMATS:
        empty = da.zeros((0, 5) + ((channels,) if channels > 1 else ()), dtype=dtype, chunks=2)
        same(cd.compact(empty, 3, "luminance"), cpu.compact(np.asarray(empty), 3))
    f32 = da.zeros((6, 6), dtype=np.float32, chunks=3)
    with pytest.raises(ValueError, match="invalid threshold = NaN"):
        cd.compact(f32, math.nan)
    u8 = da.zeros((6, 6, 3), dtype=np.uint8, chunks=3)
    with pytest.raises(TypeError, match="threshold of a rgb8 image is an integer in 0..=1023"):
        cd.compact(u8, 0.5)
    with pytest.raises(ValueError, match="invalid threshold = 1024: 0..=1023"):
        cd.compact(u8[:0], 1024)  # checked without pixels too
    with pytest.raises(ValueError, match="invalid order"):
        cd.compact(u8, 3, "sideways")
    with pytest.raises(ValueError, match="RGB8, uint8 only"):
        cd.compact(u8.astype(np.uint16), 3)
    with pytest.raises(TypeError, match=r"\(H, W, 4\) \(native byte order\); got dtype int16"):
        cd.compact(u8.astype(np.int16), 3)
