"""Engine.blobs, clpix.blobs and clpix.dask.blobs (connected components) against a reference
written in plain Python from docs/SPEC.md ("Blobs"): the pixels whose key is strictly above the
threshold, their 4- or 8-connected components (flood fill), the areas kept, numbered 1..n in
the scan order of their first pixels, with exact integer statistics and the centroid
``q + r / Σw`` (``q, r = divmod(Σ w·x, Σ w)``, one f64 rounding each). The keys of the colour
formats come from format_reference.keys. clpix.dask must give the single call's result bit
for bit, whatever the chunks."""

from __future__ import annotations

import numpy as np
import pytest

import clpix
import format_reference as fref
from test_formats import layouts, random_image

# (dtype, channels, name) of the integer-key formats, and their largest keys.
INT_FORMATS = [
    (np.uint8, 1, "mono8"),
    (np.uint16, 1, "mono16"),
    (np.uint8, 3, "rgb8"),
    (np.uint8, 4, "rgba8"),
    (np.uint16, 4, "rgba16"),
]
MAX_KEY = {"mono8": 255, "mono16": 65535, "rgb8": 1023, "rgba8": 1023, "rgba16": 65535}
FIELDS = ("label", "area", "min_x", "min_y", "max_x", "max_y", "first_x", "key_sum",
          "weight_sum", "centroid_x", "centroid_y", "peak_x", "peak_y", "peak_key")


# --- the reference -------------------------------------------------------------------------


def components(keys, t, connectivity):
    """The connected components of the keys above ``t`` (NaN never), each a list of ``(y, x)``,
    in the scan order of their first pixels (the order the scan meets them); flood fill."""
    h, w = len(keys), len(keys[0]) if keys else 0
    steps = [(0, 1), (0, -1), (1, 0), (-1, 0)]
    if connectivity == 8:
        steps += [(1, 1), (1, -1), (-1, 1), (-1, -1)]
    seen = [[False] * w for _ in range(h)]
    found = []
    for y in range(h):
        for x in range(w):
            if not keys[y][x] > t or seen[y][x]:
                continue
            seen[y][x] = True
            pixels, stack = [], [(y, x)]
            while stack:
                py, px = stack.pop()
                pixels.append((py, px))
                for dy, dx in steps:
                    ny, nx = py + dy, px + dx
                    if 0 <= ny < h and 0 <= nx < w and not seen[ny][nx] and keys[ny][nx] > t:
                        seen[ny][nx] = True
                        stack.append((ny, nx))
            found.append(pixels)
    return found


def reference(img, t, connectivity=8, min_area=1, max_area=None, background=0):
    """(labels as lists of rows, stats as tuples of FIELDS' order), in plain Python."""
    keys = fref.keys(img).tolist()
    h, w = img.shape[:2]
    kept = [c for c in components(keys, t, connectivity) if len(c) >= min_area and (max_area is None or len(c) <= max_area)]
    labels = [[0] * w for _ in range(h)]
    stats = []
    for n, pixels in enumerate(kept, 1):
        for y, x in pixels:
            labels[y][x] = n
        ks = [(keys[y][x], y, x) for y, x in pixels]
        weights = sum(k - background for k, _, _ in ks)
        wx = sum((k - background) * x for k, _, x in ks)
        wy = sum((k - background) * y for k, y, _ in ks)
        peak = min(ks, key=lambda p: (-p[0], p[1], p[2]))
        first = min(pixels)
        stats.append((
            n, len(pixels),
            min(x for _, x in pixels), min(y for y, _ in pixels),
            max(x for _, x in pixels), max(y for y, _ in pixels),
            first[1], sum(k for k, _, _ in ks), weights,
            centroid(wx, weights), centroid(wy, weights),
            peak[2], peak[1], peak[0],
        ))
    return labels, stats


def centroid(n: int, d: int) -> float:
    """The SPEC's rule: the integer quotient plus the remainder's f64 fraction."""
    q, r = divmod(n, d)
    return float(q) + float(r) / float(d)


# --- images --------------------------------------------------------------------------------


def spiral(h, w):
    """A 4-connected path that winds inward with one-pixel gaps."""
    m = np.zeros((h, w), bool)
    y = x = 0
    dy, dx = 0, 1
    m[0, 0] = True

    def free(ny, nx):
        if not (0 <= ny < h and 0 <= nx < w) or m[ny, nx]:
            return False
        ay, ax = ny + dy, nx + dx  # the cell beyond stays a gap
        return not (0 <= ay < h and 0 <= ax < w and m[ay, ax])

    turns = 0
    while turns < 2:
        if free(y + dy, x + dx):
            y, x = y + dy, x + dx
            m[y, x] = True
            turns = 0
        else:
            dy, dx = dx, -dy
            turns += 1
    return m


def comb(h, w, down=True):
    """Teeth on every other column joined by the first row (by the last one for ``down=False``:
    the scan meets every tooth before the row that joins them)."""
    m = np.zeros((h, w), bool)
    m[:, ::2] = True
    m[0 if down else h - 1, :] = True
    return m


def masks():
    rng = np.random.default_rng(7)
    yy, xx = np.mgrid[:23, :29]
    out = {
        "one pixel": np.pad(np.ones((1, 1), bool), ((4, 6), (3, 8))),
        "full": np.ones((13, 17), bool),
        "none": np.zeros((9, 11), bool),
        "checkerboard": (yy + xx) % 2 == 0,
        "spiral": spiral(25, 31),
        "comb": comb(15, 21),
        "comb up": comb(15, 21, down=False),
        "diagonals": (yy == xx) | (yy == 28 - xx) | (yy + 5 == xx),
        "ring": (np.abs(yy - 11) <= 8) & (np.abs(xx - 14) <= 8) & ~((np.abs(yy - 11) <= 5) & (np.abs(xx - 14) <= 5)),
        "1 row": rng.random((1, 40)) < 0.5,
        "1 column": rng.random((33, 1)) < 0.5,
    }
    for p in (0.1, 0.45, 0.6, 0.9):
        out[f"random {p}"] = rng.random((31, 27)) < p
    return out


MASKS = masks()


def from_mask(mask, t=100, seed=0, dtype=np.uint8):
    """A mono image whose pixels above ``t`` are ``mask``'s, of random values either side."""
    rng = np.random.default_rng(seed)
    top = np.iinfo(dtype).max
    above = rng.integers(t + 1, top + 1, mask.shape, dtype=np.int64)
    below = rng.integers(0, t + 1, mask.shape, dtype=np.int64)
    return np.where(mask, above, below).astype(dtype)


def check(got, want):
    """``got`` (labels, stats) from clpix equals ``want`` from the reference."""
    labels, stats = got
    want_labels, want_stats = want
    assert stats.dtype == clpix.BLOB_DTYPE
    assert stats.tolist() == want_stats
    if labels is not None:
        assert labels.dtype == np.uint32 and labels.flags.c_contiguous
        assert labels.tolist() == want_labels


# --- the single call -----------------------------------------------------------------------


@pytest.mark.parametrize("connectivity", [4, 8])
@pytest.mark.parametrize("name", list(MASKS))
def test_masks_against_reference(engine, name, connectivity):
    img = from_mask(MASKS[name], seed=len(name))
    for background in (0, 60, 100):
        want = reference(img, 100, connectivity, background=background)
        check(engine.blobs(img, 100, connectivity, background=background), want)


@pytest.mark.parametrize("connectivity", [4, 8])
@pytest.mark.parametrize("dtype, channels, name", INT_FORMATS, ids=[f[2] for f in INT_FORMATS])
def test_formats_against_reference(engine, dtype, channels, name, connectivity):
    img = random_image(dtype, channels, 19, 26, 3)
    keys = fref.keys(img)
    for t in (0, int(np.median(keys)), int(np.quantile(keys, 0.8)), MAX_KEY[name]):
        background = t // 3
        want = reference(img, t, connectivity, background=background)
        check(engine.blobs(img, t, connectivity, background=background), want)


def test_large_weights_exact(engine):
    """Big sums: mono16 keys near 65535 over a wide image, weighted sums beyond 2^53."""
    rng = np.random.default_rng(5)
    img = rng.integers(60000, 65536, (37, 3000), dtype=np.uint16)
    img[::5, ::7] = 0
    for connectivity in (4, 8):
        check(engine.blobs(img, 59999, connectivity, background=1), reference(img, 59999, connectivity, background=1))


@pytest.mark.parametrize("connectivity", [4, 8])
def test_area_filters(engine, connectivity):
    img = from_mask(MASKS["random 0.45"], seed=3)
    areas = [(1, None), (2, None), (3, 10), (5, 5), (0, 0), (1, 1), (50, None), (10**6, None), (0, 2**64 - 1)]
    for lo, hi in areas:
        want = reference(img, 100, connectivity, lo, hi)
        check(engine.blobs(img, 100, connectivity, min_area=lo, max_area=hi), want)
        labels, stats = engine.blobs(img, 100, connectivity, lo, hi, 0, False)
        assert labels is None and stats.tolist() == want[1]


@pytest.mark.parametrize("dtype, channels, name", INT_FORMATS, ids=[f[2] for f in INT_FORMATS])
def test_layouts(cpu, dtype, channels, name):
    img = random_image(dtype, channels, 14, 17, 8)
    t = int(np.median(fref.keys(img)))
    want_labels, want_stats = cpu.blobs(img, t)
    for layout, view in layouts(img):
        labels, stats = cpu.blobs(view, t)
        assert np.array_equal(labels, want_labels), layout
        assert stats.tobytes() == want_stats.tobytes(), layout


def test_no_pixels_and_no_foreground(engine):
    for shape in [(0, 5), (5, 0), (0, 0), (0, 3, 4)]:
        labels, stats = engine.blobs(np.zeros(shape, np.uint8), 0)
        assert labels.shape == shape[:2] and labels.dtype == np.uint32
        assert len(stats) == 0 and stats.dtype == clpix.BLOB_DTYPE
    img = np.full((6, 7), 200, np.uint8)
    labels, stats = engine.blobs(img, 200)
    assert not labels.any() and len(stats) == 0
    labels, stats = engine.blobs(np.full((3, 4, 4), 65535, np.uint16), 65535, labels=False)
    assert labels is None and len(stats) == 0


def test_module_level_and_dtype():
    img = from_mask(MASKS["comb up"], seed=1)
    labels, stats = clpix.blobs(img, 100, 4, 2, 100, 7)
    want = clpix.Engine("cpu").blobs(img, 100, connectivity=4, min_area=2, max_area=100, background=7)
    assert np.array_equal(labels, want[0]) and stats.tobytes() == want[1].tobytes()
    assert clpix.BLOB_DTYPE.names == FIELDS
    assert clpix.BLOB_DTYPE["centroid_x"] == np.float64 and clpix.BLOB_DTYPE["area"] == np.uint64
    assert clpix.BLOB_DTYPE["label"] == np.uint32 and clpix.BLOB_DTYPE["peak_key"] == np.uint32
    assert "blobs" in clpix.__all__ and "BLOB_DTYPE" in clpix.__all__


def test_errors(cpu):
    img = np.zeros((4, 5), np.uint8)
    with pytest.raises(TypeError, match="float32 of shape"):
        cpu.blobs(np.zeros((4, 5), np.float64), 0)
    with pytest.raises(TypeError, match="float32 of shape"):
        cpu.blobs(np.zeros((4, 5), np.int32), 0)
    with pytest.raises(TypeError):
        cpu.blobs([[1, 2]], 0)
    with pytest.raises(ValueError, match="shape"):
        cpu.blobs(np.zeros((4, 5, 2), np.uint8), 0)
    with pytest.raises(ValueError, match="RGB8"):
        cpu.blobs(np.zeros((4, 5, 3), np.uint16), 0)
    for c in (0, 1, 6, -8, 9):
        with pytest.raises(ValueError, match="connectivity"):
            cpu.blobs(img, 0, c)
    with pytest.raises(ValueError, match="threshold"):
        cpu.blobs(img, 256)
    with pytest.raises(ValueError, match="threshold"):
        cpu.blobs(np.zeros((4, 5, 4), np.uint8), 1024)
    with pytest.raises(ValueError, match="threshold"):
        cpu.blobs(img, -1)
    with pytest.raises(TypeError, match="threshold"):
        cpu.blobs(img, 1.5)
    with pytest.raises(ValueError, match="background"):
        cpu.blobs(img, 10, background=11)
    with pytest.raises(ValueError, match="background"):
        cpu.blobs(img, 10, background=-1)
    with pytest.raises(ValueError, match="area"):
        cpu.blobs(img, 10, min_area=5, max_area=4)
    with pytest.raises(ValueError, match="min_area"):
        cpu.blobs(img, 10, min_area=-1)
    with pytest.raises(ValueError, match="max_area"):
        cpu.blobs(img, 10, max_area=2**64)
    with pytest.raises(TypeError):
        cpu.blobs(img, 10, min_area=1.5)


def canonical(labels):
    """Labels renumbered 1..n in the scan order of their first pixels (0 stays 0)."""
    out = np.zeros(labels.shape, np.uint32)
    numbers = {}
    for i, v in enumerate(labels.ravel().tolist()):
        if v:
            out.flat[i] = numbers.setdefault(v, len(numbers) + 1)
    return out


@pytest.mark.parametrize("connectivity", [4, 8])
def test_against_skimage(cpu, connectivity):
    measure = pytest.importorskip("skimage.measure")
    for name, mask in MASKS.items():
        img = from_mask(mask, seed=2)
        want = canonical(measure.label(mask, connectivity=connectivity // 4, background=0))
        assert np.array_equal(cpu.blobs(img, 100, connectivity)[0], want), name


# --- clpix.dask ----------------------------------------------------------------------------

da = pytest.importorskip("dask.array")
import dask  # noqa: E402

import clpix.dask as cd  # noqa: E402


@pytest.fixture
def local():
    with dask.config.set(scheduler="threads"):
        yield


def check_dask(img, chunks, cpu, *args, backend="cpu", **kw):
    d = da.from_array(img, chunks=chunks)
    want_labels, want_stats = cpu.blobs(img, *args, **kw)
    labels, stats = cd.blobs(d, *args, backend=backend, **kw)
    assert stats.dtype == clpix.BLOB_DTYPE
    assert stats.tolist() == want_stats.tolist()
    assert stats.tobytes() == want_stats.tobytes()
    if want_labels is None:
        assert labels is None
        return
    assert isinstance(labels, da.Array) and labels.dtype == np.uint32
    assert labels.chunks == d.chunks[:2]
    got = labels.compute()
    assert got.dtype == np.uint32
    np.testing.assert_array_equal(got, want_labels)


SEAM_MASKS = ["spiral", "comb", "comb up", "checkerboard", "diagonals", "ring", "random 0.45", "random 0.6"]


@pytest.mark.parametrize("connectivity", [4, 8])
@pytest.mark.parametrize("name", SEAM_MASKS)
def test_dask_across_seams(local, cpu, name, connectivity):
    img = from_mask(MASKS[name], seed=4)
    h, w = img.shape
    for chunks in [(7, 5), (16, 16), (3, 4), ((2, h - 5, 3), (9, 1, w - 10))]:
        check_dask(img, chunks, cpu, 100, connectivity, background=40)


@pytest.mark.parametrize("connectivity", [4, 8])
def test_dask_one_pixel_chunks(local, cpu, connectivity):
    """Every pixel its own chunk: every join is across a seam or a corner."""
    for name in ("spiral", "diagonals", "random 0.45"):
        img = from_mask(MASKS[name][:12, :13], seed=5)
        check_dask(img, (1, 1), cpu, 100, connectivity)
        check_dask(img, (1, 13), cpu, 100, connectivity)
        check_dask(img, (12, 1), cpu, 100, connectivity)


def test_dask_corners(local, cpu):
    """Diagonal touches exactly at the corner of four chunks: one blob 8-connected, two
    4-connected, on both diagonals."""
    for pixels in ([(3, 3), (4, 4)], [(3, 4), (4, 3)], [(3, 3), (4, 4), (3, 5), (5, 3), (2, 6)]):
        img = np.zeros((8, 8), np.uint8)
        for y, x in pixels:
            img[y, x] = 200 + y
        for connectivity, n in ((8, 1), (4, len(pixels))):
            labels, stats = cd.blobs(da.from_array(img, chunks=(4, 4)), 0, connectivity, backend="cpu")
            assert len(stats) == n
            check_dask(img, (4, 4), cpu, 0, connectivity)
    # A staircase through the corners of many chunks.
    img = np.zeros((30, 30), np.uint16)
    for i in range(30):
        img[i, i] = 1000 + i
        img[i, 29 - i] = 2000
    for connectivity in (4, 8):
        for chunks in [(5, 5), (3, 7), (1, 1)]:
            check_dask(img, chunks, cpu, 0, connectivity, background=0)


@pytest.mark.parametrize("dtype, channels, name", INT_FORMATS, ids=[f[2] for f in INT_FORMATS])
def test_dask_formats(local, cpu, dtype, channels, name):
    img = random_image(dtype, channels, 29, 37, 9)
    t = int(np.quantile(fref.keys(img), 0.4))
    tail = img.shape[2:]
    for connectivity in (4, 8):
        check_dask(img, (7, 5) + tail, cpu, t, connectivity, background=t // 2)
    if tail:
        check_dask(img, (10, 10, 2 if channels == 4 else 1), cpu, t)  # channels chunked


def test_dask_area_filters_and_no_labels(local, cpu):
    img = from_mask(MASKS["random 0.6"], seed=6)
    for lo, hi in [(1, None), (2, 30), (4, None), (1, 1), (10**6, None), (0, 0)]:
        for labels in (True, False):
            check_dask(img, (7, 5), cpu, 100, 8, min_area=lo, max_area=hi, labels=labels)
            check_dask(img, (16, 16), cpu, 100, 4, lo, hi, 0, labels)


def test_dask_large_blob_exact(local, cpu):
    """One blob over every chunk with mono16 weights: the merged sums beyond 2^53."""
    rng = np.random.default_rng(11)
    img = rng.integers(50000, 65536, (64, 700), dtype=np.uint16)
    img[5::9, 3::11] = 0
    check_dask(img, (16, 16), cpu, 40000, 8, background=39999)
    check_dask(img, (13, 100), cpu, 40000, 4, background=17)


def test_dask_default_backend_and_numpy_input(local):
    img = from_mask(MASKS["spiral"], seed=8)
    labels, stats = cd.blobs(img, 100)  # a NumPy array: one chunk, the default engine
    want = clpix.blobs(img, 100)
    assert np.array_equal(labels.compute(), want[0]) and stats.tobytes() == want[1].tobytes()
    labels, stats = cd.blobs(da.from_array(img, chunks=(6, 9)), 100, 4)
    want = clpix.blobs(img, 100, 4)
    assert np.array_equal(labels.compute(), want[0]) and stats.tobytes() == want[1].tobytes()
    assert "blobs" in cd.__all__


def test_dask_no_pixels_and_empty_chunks(local, cpu):
    for shape in [(0, 5), (4, 0), (0, 3, 4)]:
        labels, stats = cd.blobs(da.zeros(shape, dtype=np.uint8, chunks=2), 0, backend="cpu")
        assert labels.shape == shape[:2] and labels.dtype == np.uint32 and len(stats) == 0
    img = from_mask(MASKS["comb up"], seed=9)
    h, w = img.shape
    check_dask(img, ((0, 5, 0, h - 5), (w, 0)), cpu, 100, 8)
    check_dask(np.zeros((9, 9), np.uint8), (4, 4), cpu, 0)


def test_dask_errors(local):
    img = da.zeros((6, 6), dtype=np.uint8, chunks=3)
    with pytest.raises(TypeError, match="float32 of shape"):
        cd.blobs(da.zeros((6, 6), dtype=np.float64, chunks=3), 0)
    with pytest.raises(TypeError, match="float32 of shape"):
        cd.blobs(np.zeros((6, 6), np.int16), 0)
    with pytest.raises(TypeError):
        cd.blobs([[1]], 0)
    with pytest.raises(ValueError, match="shape"):
        cd.blobs(da.zeros((6, 6, 2), dtype=np.uint8, chunks=3), 0)
    with pytest.raises(ValueError, match="connectivity"):
        cd.blobs(img, 0, 6)
    with pytest.raises(ValueError, match="threshold"):
        cd.blobs(img, 256)
    with pytest.raises(ValueError, match="background"):
        cd.blobs(img, 3, background=4)
    with pytest.raises(ValueError, match="area"):
        cd.blobs(img, 3, min_area=3, max_area=2)
