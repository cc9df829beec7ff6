"""clpix.dask's brightest, darkest, statistics and histograms on every pixel format (uint8,
uint16, float32 arrays shaped (H, W), (H, W, 3) or (H, W, 4)) against the single-image call,
bit for bit, with the local scheduler (the cluster: tests/test_dask.py)."""

from __future__ import annotations

import math

import numpy as np
import pytest

da = pytest.importorskip("dask.array")

import dask  # noqa: E402

import clpix  # noqa: E402
import clpix.dask as cd  # noqa: E402
from test_formats import FORMAT_IDS, FORMATS, extremes_int, random_image, special_f32  # noqa: E402


@pytest.fixture(autouse=True)
def local():
    with dask.config.set(scheduler="threads"):
        yield


def images(dtype, channels):
    out = [random_image(dtype, channels, 29, 37, 1)]
    if dtype == np.float32:
        out.append(special_f32(23, 31, 2, channels))
        out.append(special_f32(23, 31, 3, channels, infinite=False))
        nan_rows = random_image(dtype, channels, 20, 30, 4)
        nan_rows[:10] = np.nan  # whole chunks without a key
        out.append(nan_rows)
    else:
        out.append(extremes_int(dtype, channels, 23, 31, 5))
    return out


def chunkings(img):
    tail = img.shape[2:]
    h, w = img.shape[:2]
    out = [(5, 7) + tail, (h, w) + tail, ((3, h - 4, 1), (1, w - 10, 9)) + tail]
    if img.ndim == 3:
        out.append((10, 10, 2))  # the channel axis chunked: rechunked
    return out


def check(img, chunks, cpu, backend=None):
    d = da.from_array(img, chunks=chunks)
    kw = {"backend": backend}
    for which in ("brightest", "darkest"):
        # repr: bit-exact floats (-0.0, NaN channels) where == would not say.
        assert repr(cd.extreme(d, which, **kw)) == repr(cpu.extreme(img, which))
        # One chunk or many: the candidates' order is clpix's own (ties, -0.0 and +0.0).
        for k, apart in ((6, 0.0), (4, 2.5)):
            got, want = cd.extremes(d, which, k, apart, **kw), cpu.extremes(img, which, k, apart)
            assert got.tobytes() == want.tobytes() and got.dtype == want.dtype
    assert repr(cd.luminance_stats(d, **kw)) == repr(cpu.luminance_stats(img))
    for bins, bounds in [(17, (0, 200)), (64, (0, 65535)), (5, (-1, 1))]:
        got = cd.histogram(d, bins, bounds, **kw)
        assert got.dtype == np.uint32
        np.testing.assert_array_equal(got, cpu.histogram(img, bins, bounds))
        np.testing.assert_array_equal(cd.histogram_keys(d, bins, bounds, **kw), cpu.histogram_keys(img, bins, bounds))


@pytest.mark.parametrize("dtype, channels", FORMATS, ids=FORMAT_IDS)
def test_equals_single_call(cpu, dtype, channels):
    for img in images(dtype, channels):
        for chunks in chunkings(img):
            check(img, chunks, cpu)


@pytest.mark.parametrize("dtype, channels", [(np.uint16, 1), (np.float32, 4)], ids=["mono16", "rgba-f32"])
def test_opencl_workers(cpu, dtype, channels):
    from conftest import opencl_engine

    opencl_engine()  # skips without a device
    img = images(dtype, channels)[1]
    check(img, (6, 8) + img.shape[2:], cpu, backend="opencl")


def test_f32_sum_is_exact_across_chunks(cpu):
    # Each chunk's sum is exact alone; adding rounded chunk sums would lose 2**-60.
    v = np.array([[1.0, 2.0**-60, -1.0, 2.0**-149, 3e38, -3e38]], np.float32)
    s = cd.luminance_stats(da.from_array(v, chunks=(1, 1)))
    assert s.sum == math.fsum([2.0**-60, 2.0**-149]) and s == cpu.luminance_stats(v)
    rgba = np.zeros((1, 3, 4), np.float32)
    rgba[0, :, 1] = [1.0 / 0.72, 2.0**-40, -1.0 / 0.72]
    s = cd.luminance_stats(da.from_array(rgba, chunks=(1, 1, 4)))
    assert repr(s) == repr(cpu.luminance_stats(rgba))
    inf = np.array([[np.inf, 1.0], [np.nan, -np.inf]], np.float32)
    s = cd.luminance_stats(da.from_array(inf, chunks=(1, 1)))
    assert math.isnan(s.sum) and s.count == 3
    s = cd.luminance_stats(da.from_array(inf[:, :1], chunks=(1, 1)))
    assert s.sum == math.inf and s.count == 1


def test_no_keys(cpu):
    nan = da.from_array(np.full((6, 8), np.nan, np.float32), chunks=(3, 4))
    with pytest.raises(ValueError, match=r"brightest needs at least one pixel, but the image is 8×6"):
        cd.extreme(nan, "brightest")
    with pytest.raises(ValueError, match=r"luminance_stats \(every key is NaN\) needs at least one pixel"):
        cd.luminance_stats(nan)
    assert cd.histogram_keys(nan, 3, (0, 1)).tolist() == [0, 0, 0]
    for dtype, channels in FORMATS:
        shape = (0, 5) + (() if channels == 1 else (channels,))
        empty = da.zeros(shape, dtype=dtype, chunks=2)
        with pytest.raises(ValueError, match="needs at least one pixel"):
            cd.extreme(empty, "darkest")
        with pytest.raises(ValueError, match="needs at least one pixel"):
            cd.luminance_stats(empty)
        assert cd.histogram(empty, 4, (0, 9)).shape == (channels, 4)
        assert cd.histogram_keys(empty, 4, (0, 9)).shape == (4,)


def test_numpy_input(cpu):
    img = random_image(np.uint16, 4, 9, 10, 3)
    assert cd.extreme(img, "brightest") == cpu.extreme(img, "brightest")


def test_errors():
    accepted = r"uint8, uint16 or float32 of shape \(H, W\), \(H, W, 3\) \(uint8 only\) or \(H, W, 4\)"
    d16 = da.zeros((6, 6, 3), dtype=np.uint16, chunks=3)
    with pytest.raises(ValueError, match="RGB8, uint8 only"):
        cd.extreme(d16, "brightest")
    with pytest.raises(ValueError, match=accepted + r"; got an array of shape \(6, 6, 5\)"):
        cd.luminance_stats(da.zeros((6, 6, 5), dtype=np.uint8, chunks=3))
    with pytest.raises(TypeError, match=accepted + r" \(native byte order\); got dtype float64"):
        cd.histogram(da.zeros((6, 6), dtype=np.float64, chunks=3), 4, (0, 1))
    with pytest.raises(TypeError, match="native byte order"):
        cd.histogram_keys(np.zeros((6, 6), ">u2"), 4, (0, 1))
    with pytest.raises(TypeError, match="dask.array.Array"):
        cd.histogram([[1, 2]], 4, (0, 1))
    u8 = da.zeros((6, 6), dtype=np.uint8, chunks=3)
    with pytest.raises(ValueError, match="integer bounds"):
        cd.histogram(u8, 4, (0.5, 9))
    with pytest.raises(ValueError, match="invalid bin count = 0"):
        cd.histogram_keys(u8[:0], 0, (0, 9))  # checked without pixels too
    with pytest.raises(ValueError, match="invalid which"):
        cd.extreme(u8, "top")
    assert isinstance(cd.luminance_stats(u8), clpix.LuminanceStats)
