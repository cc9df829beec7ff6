"""Engine.extremes and Engine.compacted_image (and clpix.extremes, clpix.compacted_image,
clpix.dask's) on every pixel format (uint8, uint16, float32 arrays shaped (H, W), (H, W, 3) or
(H, W, 4)), against NumPy references written from docs/SPEC.md ("Pixel formats", "The k
brightest (or darkest) pixels", "Compaction of every format"):

- extremes: the candidates are the pixels whose key is not NaN, sorted stably by key
  (descending for "brightest", ascending for "darkest"; ties in scan order; −0 = +0); going
  through them in that order, a candidate is taken when dx² + dy² ≥ min_distance² (float64,
  the distance rounded to float32 first) to every pixel already taken, until k are taken. The
  records are compact's: RGBA8's HIT_DTYPE, x, y, key (−0 given as +0) and value otherwise.
- compacted_image: an array of the input's shape and dtype whose first n pixels in scan order
  are the values of the n pixels with key strictly above the threshold (in scan order, or key
  descending with ties in scan order), the rest zeros.

The keys are format_reference.keys (the RGBA float32 key in exact rationals, rounded once a
step)."""

from __future__ import annotations

import math

import numpy as np
import pytest

import clpix
import format_reference as fref
import reference as rgba_ref
from test_compact_formats import BAD, MAX_KEY, ORDERS, cases, record_dtype, same, thresholds
from test_formats import FORMAT_IDS, FORMATS, extremes_int, layouts, random_image, special_f32

WHICH = ("brightest", "darkest")
# (k, min_distance): the plain top k, distances that exclude, infinity (one pixel), more
# than the image holds.
SELECTIONS = [(1, 0.0), (6, 0.0), (5, 2.5), (9, 4.0), (3, math.inf), (40, 1.0), (1000, 1.5)]


def _pixels(img: np.ndarray) -> np.ndarray:
    """The pixels in scan order: (H·W,) or (H·W, channels)."""
    h, w = img.shape[:2]
    return img.reshape((h * w,) + img.shape[2:])


def _records(img: np.ndarray, key: np.ndarray, indices: np.ndarray) -> np.ndarray:
    """The records of the pixels at the given scan indices, in that order."""
    w = img.shape[1]
    out = np.zeros(len(indices), record_dtype(img))
    out["x"], out["y"] = indices % max(w, 1), indices // max(w, 1)
    if fref.format_of(img) == "rgba8":
        out["luminance"], out["rgba"] = key[indices], _pixels(img)[indices]
        return out
    k = key[indices]
    out["key"] = k + np.float32(0) if k.dtype == np.float32 else k  # -0 given as +0
    out["value"] = _pixels(img)[indices]
    return out


def _by_key(key: np.ndarray, indices: np.ndarray, descending: bool) -> np.ndarray:
    """``indices`` sorted stably by their key (exact: int64 or float64; −0 == +0)."""
    kk = key[indices].astype(np.float64 if key.dtype == np.float32 else np.int64)
    return indices[np.argsort(-kk if descending else kk, kind="stable")]


def select(img: np.ndarray, which: str, k: int, min_distance: float) -> np.ndarray:
    """The records clpix.extremes gives, from the SPEC."""
    key = fref.keys(img).ravel()
    candidates = np.arange(key.size)
    if key.dtype == np.float32:
        candidates = candidates[~np.isnan(key)]  # a NaN key is never a candidate
    order = _by_key(key, candidates, which == "brightest")
    d = float(np.float32(min_distance))
    min_sq = d * d
    w = max(img.shape[1], 1)
    xs, ys = (order % w).astype(np.float64), (order // w).astype(np.float64)
    taken: list = []
    for i in range(len(order)):
        if len(taken) >= k:
            break
        t = np.asarray(taken, dtype=np.intp)
        dx, dy = xs[t] - xs[i], ys[t] - ys[i]
        if np.all(dx * dx + dy * dy >= min_sq):
            taken.append(i)
    return _records(img, key, order[np.asarray(taken, dtype=np.intp)])


def compacted(img: np.ndarray, threshold, order: str) -> np.ndarray:
    """The image clpix.compacted_image gives, from the SPEC."""
    key = fref.keys(img).ravel()
    t = np.float32(threshold) if img.dtype == np.float32 else threshold
    with np.errstate(invalid="ignore"):
        kept = np.flatnonzero(key > t)  # NaN > t is False: never kept
    if order == "luminance":
        kept = _by_key(key, kept, True)
    out = np.zeros_like(_pixels(img))
    out[: len(kept)] = _pixels(img)[kept]
    return out.reshape(img.shape)


def same_image(got: np.ndarray, want: np.ndarray, what: str = "") -> None:
    """The same dtype and shape, C-contiguous, the same bits (NaN channels, −0 included)."""
    assert got.dtype == want.dtype and got.shape == want.shape, what
    assert got.flags.c_contiguous, what
    assert got.tobytes() == want.tobytes(), what


def ties(dtype, channels: int, h: int, w: int, seed: int) -> np.ndarray:
    """Few distinct values: many equal keys."""
    rng = np.random.default_rng(seed)
    top = 1.0 if dtype == np.float32 else np.iinfo(dtype).max
    v = (rng.integers(0, 3, (h, w, 4)) * (top / 2)).astype(dtype)
    return v[..., 0] if channels == 1 else v[..., :channels]


def images(dtype, channels: int) -> list:
    return cases(dtype, channels) + [ties(dtype, channels, 9, 14, 6)]


# --- extremes -------------------------------------------------------------------------------


def test_extremes_against_the_reference(engine):
    for (dtype, channels), fmt in zip(FORMATS, FORMAT_IDS):
        for img in images(dtype, channels):
            for which in WHICH:
                for k, d in SELECTIONS:
                    what = f"{fmt} {img.shape} {which} k={k} d={d}"
                    same(engine.extremes(img, which, k, d), select(img, which, k, d), what)


def test_extremes_larger_images(engine, cpu):
    """Images of many work-groups, and distances that need several rounds of candidates."""
    rng = np.random.default_rng(3)
    for (dtype, channels), fmt in zip(FORMATS, FORMAT_IDS):
        img = random_image(dtype, channels, 131, 157, 8) if dtype != np.float32 else special_f32(131, 157, 8, channels)
        if dtype == np.float32:
            img[rng.random(img.shape[:2]) < 0.05] = np.nan
        for which in WHICH:
            for k, d in [(50, 0.0), (40, 12.0), (300, 3.0)]:
                got = engine.extremes(img, which, k, d)
                same(got, select(img, which, k, d), f"{fmt} {which} {k} {d}")
                same(got, cpu.extremes(img, which, k, d), f"{fmt} {which} {k} {d}")


def test_ties_go_to_scan_order(engine):
    for (dtype, channels), fmt in zip(FORMATS, FORMAT_IDS):
        img = np.full((4, 5) + ((channels,) if channels > 1 else ()), 7, dtype)
        for which in WHICH:
            got = engine.extremes(img, which, 4, 0.0)
            assert list(zip(got["x"], got["y"])) == [(0, 0), (1, 0), (2, 0), (3, 0)], fmt
            got = engine.extremes(img, which, 5, 2.0)
            assert list(zip(got["x"], got["y"])) == [(0, 0), (2, 0), (4, 0), (0, 2), (2, 2)], fmt
        if dtype != np.float32:
            # Only 0 and the largest value: the bounds of every key, many ties.
            bounds = extremes_int(dtype, channels, 15, 22, 7)
            for which in WHICH:
                same(engine.extremes(bounds, which, 30, 1.0), select(bounds, which, 30, 1.0), fmt)
                same(engine.extremes(bounds, which, 400, 0.0), select(bounds, which, 400, 0.0), fmt)


def test_float_specials(engine):
    """NaN never a candidate, ±inf at the ends, −0 = +0 (ties in scan order, the key given as
    +0, the value as it is), denormals ordered."""
    img = np.array([[np.nan, -0.0, 0.0, np.inf, -np.inf, 1e-45, -1e-45, 2.0, np.nan]], np.float32)
    got = engine.extremes(img, "brightest", 100)
    assert list(got["x"]) == [3, 7, 5, 1, 2, 6, 4]
    assert got["key"].view(np.uint32)[3] == 0 and got["value"].view(np.uint32)[3] == 0x80000000
    assert list(engine.extremes(img, "darkest", 100)["x"]) == [4, 6, 1, 2, 5, 7, 3]
    assert list(engine.extremes(img, "darkest", 3, 2.0)["x"]) == [4, 6, 1]
    for which in WHICH:
        none = engine.extremes(np.full((3, 4), np.nan, np.float32), which, 5)
        assert none.dtype == record_dtype(img) and len(none) == 0
    # RGBA: a NaN in alpha does not matter; a NaN channel or an inf − inf key is no candidate.
    rgba = np.array([[[1, 1, 1, np.nan], [np.nan, 0, 0, 1], [np.inf, -np.inf, 0, 1], [-0.0, -0.0, -0.0, -0.0], [0, 0, np.inf, 0]]], np.float32)
    for which in WHICH:
        same(engine.extremes(rgba, which, 9), select(rgba, which, 9, 0.0), which)
    assert list(engine.extremes(rgba, "brightest", 9)["x"]) == [4, 0, 3]


def test_min_distance(engine):
    """dx² + dy² ≥ min_distance² exactly (the boundary taken), the distance rounded to float32
    first, infinity one pixel; errors for negative, NaN, a negative k or another which."""
    for dtype, channels in FORMATS:
        img = np.zeros((6, 6) + ((channels,) if channels > 1 else ()), dtype)
        # Three keys above the zeros: (0, 0) > (3, 0) > (4, 4).
        values = (1.0, 0.9, 0.5) if dtype == np.float32 else (np.iinfo(dtype).max, np.iinfo(dtype).max - 1, 9)
        img[0, 0], img[0, 3], img[4, 4] = values
        above = float(np.nextafter(np.float32(3), np.float32(4)))
        for d, want in [(3.0, [(0, 0), (3, 0), (4, 4)]), (3.00000001, [(0, 0), (3, 0), (4, 4)]), (above, [(0, 0), (4, 4), (4, 0)]), (math.inf, [(0, 0)])]:
            got = engine.extremes(img, "brightest", 3, d)
            assert list(zip(got["x"].tolist(), got["y"].tolist())) == want, (img.dtype, img.shape, d)
            same(got, select(img, "brightest", 3, d))
        for k, d, message in [(3, -1.0, "invalid min_distance = -1"), (3, math.nan, "invalid min_distance = NaN"), (-2, 1.0, "invalid k = -2")]:
            with pytest.raises(ValueError, match=message):
                engine.extremes(img, "darkest", k, d)
        with pytest.raises(ValueError, match='invalid which = "lightest"'):
            engine.extremes(img, "lightest", 2)


def test_counts_and_images_without_pixels(engine):
    for dtype, channels in FORMATS:
        img = random_image(dtype, channels, 3, 4, 5)
        assert len(engine.extremes(img, "brightest", 100)) == 12
        zero = engine.extremes(img, "darkest", 0, 1.0)
        assert zero.dtype == record_dtype(img) and zero.shape == (0,)
        for empty in (img[:0], img[:, :0]):
            none = engine.extremes(empty, "brightest", 3, 1.0)
            assert none.dtype == record_dtype(img) and none.shape == (0,)
            out = engine.compacted_image(empty, 0)
            assert out.shape == empty.shape and out.dtype == img.dtype


def test_rgba8_records_are_unchanged(engine):
    img = random_image(np.uint8, 4, 17, 23, 9)
    for k, d in SELECTIONS:
        for which in WHICH:
            got = engine.extremes(img, which, k, d)
            assert got.dtype == clpix.HIT_DTYPE
            assert rgba_ref.as_tuples(got) == rgba_ref.select_k(img, k, d, which == "darkest")
    for t in (0, 500, 1023):
        for order in ORDERS:
            out = engine.compacted_image(img, t, order)
            np.testing.assert_array_equal(out, rgba_ref.compacted_image(img, t, order == "luminance"))


# --- compacted_image ------------------------------------------------------------------------


def test_compacted_image_against_the_reference(engine):
    for (dtype, channels), fmt in zip(FORMATS, FORMAT_IDS):
        for img in images(dtype, channels):
            for t in thresholds(img):
                for order in ORDERS:
                    same_image(engine.compacted_image(img, t, order), compacted(img, t, order), f"{fmt} {img.shape} t={t} {order}")


def test_compacted_image_larger_images(engine, cpu):
    rng = np.random.default_rng(4)
    for dtype, channels in FORMATS:
        img = random_image(dtype, channels, 131, 157, 10)
        if dtype == np.float32:
            img[rng.random(img.shape[:2]) < 0.05] = np.nan
        t = thresholds(img)[-1]
        for order in ORDERS:
            got = engine.compacted_image(img, t, order)
            same_image(got, compacted(img, t, order), f"{img.dtype} {img.shape} {order}")
            same_image(got, cpu.compacted_image(img, t, order))


def test_compacted_image_thresholds(engine):
    """The threshold as compact's: bounds of each format, float32 rounding, NaN refused."""
    for (dtype, channels), fmt in zip(FORMATS, FORMAT_IDS):
        img = extremes_int(dtype, channels, 5, 6, 1) if dtype != np.float32 else special_f32(5, 6, 1, channels)
        if dtype == np.float32:
            with pytest.raises(ValueError, match="invalid threshold = NaN"):
                engine.compacted_image(img, math.nan)
            with pytest.raises(TypeError, match="float32 image is a number"):
                engine.compacted_image(img, "0.5")
            same_image(engine.compacted_image(img, 0), engine.compacted_image(img, 0.0))
            same_image(engine.compacted_image(img, -math.inf, "luminance"), compacted(img, -math.inf, "luminance"))
            continue
        top = MAX_KEY[fmt]
        assert not engine.compacted_image(img, top).any()  # nothing above the largest key
        for t in (top + 1, -1, 2**70):
            with pytest.raises(ValueError, match=f"invalid threshold = {t}: 0..={top}"):
                engine.compacted_image(img, t, "luminance")
        with pytest.raises(TypeError, match=f"threshold of a {fmt} image is an integer in 0..={top}"):
            engine.compacted_image(img, 1.0)
    v = np.array([[0.1, np.nextafter(np.float32(0.1), np.float32(1))]], np.float32)
    same_image(engine.compacted_image(v, 0.1), np.array([[v[0, 1], 0]], np.float32))
    with pytest.raises(ValueError, match="invalid order"):
        engine.compacted_image(v, 0.0, "sideways")


# --- every layout, the records, the module's functions, bad inputs --------------------------


def test_layouts(cpu):
    """Any strides: equal to the reference of the contiguous image."""
    for dtype, channels in FORMATS:
        img = special_f32(11, 17, 11, channels) if dtype == np.float32 else ties(dtype, channels, 11, 17, 11)
        t = thresholds(img)[-1]
        want = {which: select(img, which, 7, 2.0) for which in WHICH}
        for name, view in layouts(img):
            for which in WHICH:
                same(cpu.extremes(view, which, 7, 2.0), want[which], name)
            same_image(cpu.compacted_image(view, t, "luminance"), compacted(img, t, "luminance"), name)


def test_records_and_module_functions(cpu):
    """compact's records (fields, dtypes), own memory; clpix.extremes and
    clpix.compacted_image on the default engine."""
    for (dtype, channels), fmt in zip(FORMATS, FORMAT_IDS):
        img = random_image(dtype, channels, 6, 7, 3)
        got = cpu.extremes(img, "brightest", 5)
        assert got.dtype == cpu.compact(img, 0).dtype == record_dtype(img)
        assert got.ndim == 1 and len(got) == 5 and not np.shares_memory(got, img)
        if fmt != "rgba8":
            assert got.dtype.names == ("x", "y", "key", "value")
            assert got["value"].shape == (5,) + img.shape[2:] and got["value"].dtype == dtype
        got["x"] += 1  # writeable
        for which in WHICH:
            same(clpix.extremes(img, which, 4, 2.0), cpu.extremes(img, which, 4, 2.0))
        t = 0 if dtype != np.float32 else 0.5
        same_image(clpix.compacted_image(img, t, "luminance"), cpu.compacted_image(img, t, "luminance"))
        out = cpu.compacted_image(img, t)
        assert not np.shares_memory(out, img) and out.flags.writeable


def test_bad_images(cpu):
    for img, exc, match in BAD:
        calls = [
            lambda: cpu.extremes(img, "brightest", 3),
            lambda: clpix.extremes(img, "darkest", 3, 1.0),
            lambda: cpu.compacted_image(img, 0),
            lambda: clpix.compacted_image(img, 1.5, "luminance"),
        ]
        for call in calls:
            with pytest.raises(exc, match=match):
                call()


def test_input_is_not_modified(engine):
    for dtype, channels in FORMATS:
        img = special_f32(10, 12, 5, channels) if dtype == np.float32 else random_image(dtype, channels, 10, 12, 5)
        before = img.copy()
        engine.extremes(img, "darkest", 20, 1.5)
        engine.compacted_image(img, 0, "luminance")
        assert img.tobytes() == before.tobytes()


# --- clpix.dask -----------------------------------------------------------------------------


def _dask_cases(dtype, channels):
    """Images with ties (the order of equal keys across chunks) and chunks without a key, in
    several chunkings (the channel axis chunked too: rechunked)."""
    if dtype == np.float32:
        imgs = [special_f32(23, 31, 2, channels), random_image(dtype, channels, 20, 30, 4)]
        imgs[1][:10] = np.nan
    else:
        imgs = [extremes_int(dtype, channels, 23, 31, 5), ties(dtype, channels, 20, 30, 4)]
    for img in imgs:
        tail = img.shape[2:]
        h, w = img.shape[:2]
        chunkings = [(5, 7) + tail, ((3, h - 4, 1), (1, w - 10, 9)) + tail]
        if img.ndim == 3:
            chunkings[1] = chunkings[1][:2] + ((1,) * img.shape[2],)
        yield img, chunkings


def test_dask_extremes_equals_single_call(cpu):
    da = pytest.importorskip("dask.array")
    import dask
    import clpix.dask as cd

    with dask.config.set(scheduler="threads"):
        for dtype, channels in FORMATS:
            for img, chunkings in _dask_cases(dtype, channels):
                for chunks in chunkings:
                    d = da.from_array(img, chunks=chunks)
                    for which in WHICH:
                        for k, dist in [(7, 0.0), (6, 3.0), (2, math.inf), (1000, 1.5)]:
                            what = f"{img.dtype} {img.shape} {chunks} {which} {k} {dist}"
                            same(cd.extremes(d, which, k, dist, backend="cpu"), cpu.extremes(img, which, k, dist), what)
        img = ties(np.uint16, 1, 12, 9, 3)  # NumPy input, the default engine
        same(cd.extremes(img, "darkest", 5, 2.0), cpu.extremes(img, "darkest", 5, 2.0))


def test_dask_compacted_image_equals_single_call(cpu):
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
                            out = cd.compacted_image(d, t, order, backend="cpu")
                            assert isinstance(out, da.Array) and out.dtype == img.dtype
                            assert out.chunks[:2] == d.chunks[:2]
                            same_image(out.compute(), cpu.compacted_image(img, t, order), f"{img.dtype} {img.shape} {chunks} {t} {order}")


def test_dask_empty_images_and_errors(cpu):
    da = pytest.importorskip("dask.array")
    import clpix.dask as cd

    for dtype, channels in FORMATS:
        tail = (channels,) if channels > 1 else ()
        empty = da.zeros((0, 5) + tail, dtype=dtype, chunks=2)
        same(cd.extremes(empty, "brightest", 3, 1.0), cpu.extremes(np.asarray(empty), "brightest", 3))
        img = da.from_array(random_image(dtype, channels, 6, 6, 1), chunks=3)
        same(cd.extremes(img, "darkest", 0), cpu.extremes(np.asarray(img), "darkest", 0))
        out = cd.compacted_image(empty, 3)
        assert out.dtype == dtype and out.compute().shape == (0, 5) + tail
    f32 = da.zeros((6, 6), dtype=np.float32, chunks=3)
    assert len(cd.extremes(f32 * np.nan, "brightest", 4)) == 0  # every key NaN
    with pytest.raises(ValueError, match="invalid threshold = NaN"):
        cd.compacted_image(f32, math.nan)
    with pytest.raises(ValueError, match="invalid min_distance"):
        cd.extremes(f32, "brightest", 3, -2.0)
    u8 = da.zeros((6, 6, 3), dtype=np.uint8, chunks=3)
    with pytest.raises(ValueError, match="invalid threshold = 1024: 0..=1023"):
        cd.compacted_image(u8[:0], 1024)  # checked without pixels too
    with pytest.raises(TypeError, match="threshold of a rgb8 image is an integer in 0..=1023"):
        cd.compacted_image(u8, 0.5)
    for call in (lambda i: cd.extremes(i, "brightest", 3), lambda i: cd.compacted_image(i, 3)):
        with pytest.raises(ValueError, match="RGB8, uint8 only"):
            call(u8.astype(np.uint16))
        with pytest.raises(TypeError, match=r"\(H, W, 4\) \(native byte order\); got dtype int16"):
            call(u8.astype(np.int16))
        with pytest.raises(ValueError, match=r"got an array of shape \(6, 6, 5\)"):
            call(da.zeros((6, 6, 5), dtype=np.uint8, chunks=3))
