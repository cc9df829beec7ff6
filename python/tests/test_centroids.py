"""Engine.centroids and clpix.centroids (the intensity-weighted centroid of the window around
given pixels) against a NumPy reference: the ``(2 radius + 1)²`` window clipped to the image,
weights ``max(key − background, 0)`` (the keys of format_reference.keys), the sums in float64
(exact for these small integers) and the SPEC's division ``q + r / Σw`` with ``q, r =
divmod(Σ w·x, Σ w)``; where every weight is 0, the point itself. Bit for bit."""

from __future__ import annotations

import numpy as np
import pytest

import clpix
import format_reference as fref
from test_blobs import INT_FORMATS, MAX_KEY, centroid
from test_formats import layouts, random_image

IDS = [f[2] for f in INT_FORMATS]


def reference(img, points, radius, background=0):
    """The records' values, as a list of (x, y, weight_sum) tuples."""
    weights = np.maximum(fref.keys(img) - background, 0).astype(np.float64)
    h, w = weights.shape
    out = []
    for x, y in points:
        x0, x1 = max(x - radius, 0), min(x + radius, w - 1)
        y0, y1 = max(y - radius, 0), min(y + radius, h - 1)
        win = weights[y0 : y1 + 1, x0 : x1 + 1]
        ys, xs = np.mgrid[y0 : y1 + 1, x0 : x1 + 1]
        s, sx, sy = (int(v) for v in (win.sum(), (win * xs).sum(), (win * ys).sum()))
        if s == 0:
            out.append((float(x), float(y), 0))
        else:
            out.append((centroid(sx, s), centroid(sy, s), s))
    return out


def some_points(h, w, seed, n=12):
    """Random pixels, the four corners and the middle of each edge."""
    rng = np.random.default_rng(seed)
    pts = [(0, 0), (w - 1, 0), (0, h - 1), (w - 1, h - 1), (w // 2, 0), (0, h // 2),
           (w - 1, h // 2), (w // 2, h - 1)]
    pts += list(zip(rng.integers(0, w, n).tolist(), rng.integers(0, h, n).tolist()))
    return pts


def spots(dtype, channels, h, w, seed):
    """A dark image with a few bright soft spots, some at the borders (weights that matter)."""
    rng = np.random.default_rng(seed)
    top = np.iinfo(dtype).max
    y, x = np.mgrid[0:h, 0:w].astype(np.float64)
    v = np.zeros((h, w))
    for cx, cy in [(0, 0), (w - 1, h // 2), (w / 3, h / 2), (rng.uniform(0, w), rng.uniform(0, h))]:
        v += np.exp(-((x - cx) ** 2 + (y - cy) ** 2) / (2 * 1.5 ** 2))
    v = np.clip(v * top * 0.9 + rng.integers(0, max(top // 50, 2), (h, w)), 0, top).astype(dtype)
    if channels == 1:
        return v
    px = np.stack([v] * channels, axis=-1)
    if channels == 4:
        px[..., 3] = top
    return px


def records(got):
    assert got.dtype == clpix.CENTROID_DTYPE
    return [(x, y, int(s)) for x, y, s in got.tolist()]


@pytest.mark.parametrize("dtype, channels, name", INT_FORMATS, ids=IDS)
def test_formats_against_reference(engine, dtype, channels, name):
    for seed, make in enumerate([random_image, spots]):
        img = make(dtype, channels, 19, 23, seed)
        pts = some_points(19, 23, seed)
        median = int(np.median(fref.keys(img)))
        for radius in (0, 1, 3, 30):
            for background in (0, median, MAX_KEY[name], MAX_KEY[name] + 5):
                got = engine.centroids(img, pts, radius, background)
                assert records(got) == reference(img, pts, radius, background), (radius, background)


@pytest.mark.parametrize("dtype, channels, name", INT_FORMATS, ids=IDS)
def test_records_from_extremes(cpu, dtype, channels, name):
    img = spots(dtype, channels, 31, 40, 3)
    for which, k, dist in [("brightest", 5, 6.0), ("darkest", 3, 0.0), ("brightest", 0, 0.0)]:
        hits = clpix.extremes(img, which, k, dist)
        assert len(hits) == k and hits.dtype.names[:2] == ("x", "y")
        got = cpu.centroids(img, hits, 2, 10)
        pts = list(zip(hits["x"].tolist(), hits["y"].tolist()))
        assert records(got) == reference(img, pts, 2, 10)
        pairs = np.stack([hits["x"], hits["y"]], axis=-1)
        assert got.tobytes() == cpu.centroids(img, pairs, 2, 10).tobytes()
    hits = clpix.compact(img, int(np.max(fref.keys(img))) - 1)
    assert len(hits) > 0
    assert records(cpu.centroids(img, hits, 1)) == reference(img, list(zip(hits["x"].tolist(), hits["y"].tolist())), 1)


def test_blob_centroids_agree(cpu):
    """An isolated blob in a black image: the window over it weighs as the blob does."""
    img = np.zeros((30, 40), np.uint16)
    img[5:9, 10:13] = [[100, 200, 300], [400, 65535, 600], [7, 8, 9], [1, 1, 2]]
    img[20, 30] = 5
    _, stats = cpu.blobs(img, 0)
    for b in stats:
        got = cpu.centroids(img, [[b["peak_x"], b["peak_y"]]], 4)[0]
        assert (got["x"], got["y"]) == (b["centroid_x"], b["centroid_y"])
        assert got["weight_sum"] == b["weight_sum"]


def test_edges(engine):
    img = random_image(np.uint8, 1, 9, 11, 4)
    # The whole image from any point with a radius past it (to the largest radius).
    whole = reference(img, [(0, 0)], 100)[0]
    for r in (20, 2**31, 2**32 - 1):
        got = records(engine.centroids(img, [[0, 0], [10, 8], [5, 4]], r))
        assert got == [whole] * 3
    # One pixel: its own place.
    one = np.array([[77]], np.uint8)
    assert records(engine.centroids(one, [[0, 0]], 5)) == [(0.0, 0.0, 77)]
    assert records(engine.centroids(one, [[0, 0]], 5, 77)) == [(0.0, 0.0, 0)]
    # No weight: the point itself.
    zeros = np.zeros((4, 6, 4), np.uint16)
    assert records(engine.centroids(zeros, [[5, 3], [2, 1]], 2)) == [(5.0, 3.0, 0), (2.0, 1.0, 0)]
    # No points; the same point twice.
    for empty in ([], np.zeros((0, 2), np.int32), np.zeros(0, clpix.HIT_DTYPE)):
        got = engine.centroids(img, empty, 1)
        assert got.shape == (0,) and got.dtype == clpix.CENTROID_DTYPE
    got = engine.centroids(np.zeros((0, 4), np.uint8), [], 1)
    assert len(got) == 0
    twice = engine.centroids(img, [[3, 3], [3, 3]], 1)
    assert twice[0].tobytes() == twice[1].tobytes()


def test_large_weights_exact(cpu):
    img = np.full((300, 257), 65535, np.uint16)
    img[::3, ::7] = 1
    pts = [(0, 0), (256, 299), (128, 150)]
    assert records(cpu.centroids(img, pts, 400)) == reference(img, pts, 400)


@pytest.mark.parametrize("dtype, channels, name", INT_FORMATS, ids=IDS)
def test_layouts(cpu, dtype, channels, name):
    img = random_image(dtype, channels, 14, 17, 8)
    pts = some_points(14, 17, 8)
    want = cpu.centroids(img, pts, 2, 3).tobytes()
    for layout, view in layouts(img):
        assert cpu.centroids(view, pts, 2, 3).tobytes() == want, layout


def test_points_forms(cpu):
    img = random_image(np.uint16, 4, 12, 13, 5)
    pts = [(1, 2), (12, 11), (0, 7)]
    want = cpu.centroids(img, pts, 2).tobytes()
    arr = np.array(pts)
    forms = {
        "tuples": tuple(pts),
        "list of lists": [list(p) for p in pts],
        "int8": arr.astype(np.int8),
        "uint64": arr.astype(np.uint64),
        "big-endian": arr.astype(">i4"),
        "Fortran": np.asfortranarray(arr),
        "strided": np.repeat(arr, 2, axis=1)[:, ::2],
        "columns reversed": arr[:, ::-1].copy()[:, ::-1],
        "records": np.array(pts, [("x", "i2"), ("y", "u8")]),
        "records with more fields": np.array([(9, y, x) for x, y in pts], [("k", "u1"), ("y", "i4"), ("x", "i4")]),
    }
    for name, form in forms.items():
        assert cpu.centroids(img, form, 2).tobytes() == want, name


def test_module_level_and_dtype():
    img = spots(np.uint8, 3, 16, 18, 1)
    pts = [[3, 4], [17, 15]]
    got = clpix.centroids(img, pts, 2, background=9)
    assert got.tobytes() == clpix.Engine("cpu").centroids(img, pts, 2, 9).tobytes()
    assert clpix.CENTROID_DTYPE.names == ("x", "y", "weight_sum")
    assert clpix.CENTROID_DTYPE["x"] == np.float64 and clpix.CENTROID_DTYPE["weight_sum"] == np.uint64
    assert clpix.CENTROID_DTYPE.itemsize == 24
    assert "centroids" in clpix.__all__ and "CENTROID_DTYPE" in clpix.__all__


def test_errors(cpu):
    img = np.zeros((4, 5), np.uint8)
    pts = [[1, 1]]
    with pytest.raises(TypeError, match="float32 of shape"):
        cpu.centroids(np.zeros((4, 5), np.float64), pts, 1)
    with pytest.raises(TypeError, match="float32 of shape"):
        cpu.centroids(np.zeros((4, 5), np.int32), pts, 1)
    with pytest.raises(TypeError):
        cpu.centroids([[1, 2]], pts, 1)
    with pytest.raises(ValueError, match="shape"):
        cpu.centroids(np.zeros((4, 5, 2), np.uint8), pts, 1)
    with pytest.raises(ValueError, match="RGB8"):
        cpu.centroids(np.zeros((4, 5, 3), np.uint16), pts, 1)
    for outside in ([5, 0], [0, 4], [-1, 0], [0, -1], [2**32, 0], [2**40, 2**40]):
        with pytest.raises(ValueError, match="centroid place"):
            cpu.centroids(img, [[1, 1], outside], 1)
    with pytest.raises(ValueError, match="centroid place"):
        cpu.centroids(np.zeros((0, 5), np.uint8), [[0, 0]], 1)
    with pytest.raises(ValueError, match="centroid place"):
        cpu.centroids(img, np.array([(7, 0)], [("x", "u4"), ("y", "u4")]), 1)
    for shape in [(2,), (3, 3), (2, 2, 2), (1, 1), ()]:
        with pytest.raises(ValueError, match=r"\(N, 2\)"):
            cpu.centroids(img, np.zeros(shape, np.int64), 1)
    with pytest.raises(ValueError, match=r"\(N, 2\)"):
        cpu.centroids(img, [[1, 2], [3]], 1)
    for bad in ([[1.0, 2.0]], np.zeros((1, 2), np.float32), [[True, False]], [["a", "b"]], None, [[1, None]]):
        with pytest.raises(TypeError, match=r"\(N, 2\)"):
            cpu.centroids(img, bad, 1)
    with pytest.raises(TypeError, match="no field"):
        cpu.centroids(img, np.zeros(2, [("x", "u4"), ("z", "u4")]), 1)
    with pytest.raises(TypeError, match="dtype"):
        cpu.centroids(img, np.zeros(2, [("x", "f4"), ("y", "u4")]), 1)
    with pytest.raises(ValueError, match="records of shape"):
        cpu.centroids(img, np.zeros((2, 2), [("x", "u4"), ("y", "u4")]), 1)
    for r in (-1, 2**32):
        with pytest.raises(ValueError, match="radius"):
            cpu.centroids(img, pts, r)
    for b in (-1, 2**32):
        with pytest.raises(ValueError, match="background"):
            cpu.centroids(img, pts, 1, b)
    with pytest.raises(TypeError):
        cpu.centroids(img, pts, 1.5)
    with pytest.raises(TypeError):
        clpix.centroids(img, pts)
