"""Every operation against the NumPy references of tests/reference.py, on the CPU and (where
found) OpenCL engines, on random, tie-heavy and real-looking images."""

from __future__ import annotations

import numpy as np
import pytest

import clpix
import reference as ref
from images import images, random_image, scene

IMAGES = images()
IDS = [name for name, _ in IMAGES]


def as_tuple(h: clpix.Hit) -> tuple:
    return (h.x, h.y, h.luminance, h.rgba)


@pytest.mark.parametrize("img", [i for _, i in IMAGES], ids=IDS)
def test_reductions(engine, img):
    assert as_tuple(engine.extreme(img, "brightest")) == ref.brightest(img)
    assert as_tuple(engine.extreme(img, "darkest")) == ref.darkest(img)
    s = engine.luminance_stats(img)
    assert (s.sum, s.count, s.mean, s.min, s.max) == ref.luminance_stats(img)


@pytest.mark.parametrize("img", [i for _, i in IMAGES], ids=IDS)
def test_histograms(engine, img):
    h = engine.histogram_rgba(img)
    assert h.dtype == np.uint32 and h.shape == (4, 256)
    np.testing.assert_array_equal(h, ref.histogram_rgba(img))
    lh = engine.histogram_luminance(img)
    assert lh.dtype == np.uint32 and lh.shape == (1024,)
    np.testing.assert_array_equal(lh, ref.histogram_luminance(img))


@pytest.mark.parametrize("img", [i for _, i in IMAGES], ids=IDS)
@pytest.mark.parametrize("threshold", [0, 300, 700, 1022, 1023])
def test_compaction(engine, img, threshold):
    for sort, got in [(False, engine.compact(img, threshold)), (True, engine.compact(img, threshold, "luminance"))]:
        assert got.dtype == clpix.HIT_DTYPE
        want = ref.records(img, ref.compact_indices(img, threshold, sort))
        assert ref.as_tuples(got) == want
        order = "luminance" if sort else "scan"
        out = engine.compacted_image(img, threshold, order=order)
        assert out.dtype == np.uint8 and out.shape == img.shape
        np.testing.assert_array_equal(out, ref.compacted_image(img, threshold, sort))


@pytest.mark.parametrize("img", [i for _, i in IMAGES], ids=IDS)
@pytest.mark.parametrize("k, min_distance", [(1, 0.0), (5, 0.0), (6, 2.5), (9, 4.0), (4, float("inf")), (40, 1.0), (3, 1e-3)])
def test_select_k(engine, img, k, min_distance):
    got = engine.extremes(img, "brightest", k, min_distance)
    assert ref.as_tuples(got) == ref.select_k(img, k, min_distance, darkest=False)
    got = engine.extremes(img, "darkest", k, min_distance)
    assert ref.as_tuples(got) == ref.select_k(img, k, min_distance, darkest=True)


def test_select_k_more_than_pixels(engine):
    img = random_image(3, 4, 5)
    assert len(engine.extremes(img, "brightest", 100, 0.0)) == 12
    assert len(engine.extremes(img, "brightest", 0, 0.0)) == 0


@pytest.mark.parametrize("border", ["clamp", "reflect", "wrap", "zero"])
@pytest.mark.parametrize("radius, sigma", [(0, None), (1, None), (3, 0.7), (6, None), (9, 30.0), (45, None)])
def test_blur_u8(engine, border, radius, sigma):
    # 45 is larger than both sides: borders repeat (reflect, wrap) more than once.
    for img in (scene(21, 33, 3), random_image(9, 1, 4)):
        got = engine.gaussian_blur(img, radius, sigma, border)
        assert got.dtype == np.uint8 and got.shape == img.shape
        np.testing.assert_array_equal(got, ref.blur_u8(img, radius, sigma, border))


@pytest.mark.parametrize("border", ["clamp", "reflect", "wrap", "zero"])
@pytest.mark.parametrize("radius, sigma", [(0, None), (2, None), (4, 1.3), (17, None)])
def test_blur_f32(engine, border, radius, sigma):
    rng = np.random.default_rng(radius)
    img = (rng.standard_normal((13, 19, 4)) * 100).astype(np.float32)
    got = engine.gaussian_blur(img, radius, sigma, border)
    assert got.dtype == np.float32 and got.shape == img.shape
    want = ref.blur_f32(img, radius, sigma, border)
    np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32))


@pytest.mark.parametrize("radius", [0, 2, 9])
def test_blur_into_out(engine, radius):
    # The result written into `out` (filled with other values first), which is returned.
    img = scene(21, 33, 5)
    out = np.full(img.shape, 7, np.uint8)
    assert engine.gaussian_blur(img, radius, border="reflect", out=out) is out
    np.testing.assert_array_equal(out, ref.blur_u8(img, radius, None, "reflect"))
    out[:] = 7
    assert clpix.gaussian_blur(img, radius, None, "reflect", out) is out
    np.testing.assert_array_equal(out, ref.blur_u8(img, radius, None, "reflect"))
    rng = np.random.default_rng(radius)
    f = (rng.standard_normal((13, 19, 4)) * 100).astype(np.float32)
    out_f = np.full(f.shape, np.nan, np.float32)
    assert engine.gaussian_blur(f, radius, out=out_f) is out_f
    want = ref.blur_f32(f, radius, None, "clamp")
    np.testing.assert_array_equal(out_f.view(np.uint32), want.view(np.uint32))
    # float32 in place (the image is copied on the way in).
    g = f.copy()
    engine.gaussian_blur(g, radius, out=g)
    np.testing.assert_array_equal(g.view(np.uint32), want.view(np.uint32))


def test_blur_out_errors(engine):
    img = scene(21, 33, 5)
    f = img.astype(np.float32)
    bad = [
        (np.empty((21, 32, 4), np.uint8), img, ValueError, "shape"),
        (np.empty((21, 33, 4), np.float32), img, TypeError, "dtype"),
        (np.empty((21, 33, 4), np.uint8), f, TypeError, "dtype"),
        (np.empty((33, 21, 4), np.uint8).transpose(1, 0, 2), img, ValueError, "C-contiguous"),
        (img, img, ValueError, "cannot be written"),
        ([[0]], img, TypeError, "numpy.ndarray"),
    ]
    for out, src, error, words in bad:
        before = out.copy() if isinstance(out, np.ndarray) else None
        with pytest.raises(error, match=words):
            engine.gaussian_blur(src, 2, out=out)
        if before is not None and out is not img:
            np.testing.assert_array_equal(out, before)
    read_only = np.zeros_like(img)
    read_only.flags.writeable = False
    with pytest.raises(ValueError, match="cannot be written"):
        engine.gaussian_blur(img, 2, out=read_only)


def test_blur_constant_stays_constant(engine):
    img = np.full((17, 23, 4), (50, 100, 150, 255), np.uint8)
    for border in ("clamp", "reflect", "wrap"):
        np.testing.assert_array_equal(engine.gaussian_blur(img, 7, None, border), img)


def test_reflect_is_numpys_reflect_not_symmetric(engine):
    # The specification's Reflect mirrors without repeating the edge: NumPy's "reflect".
    img = scene(24, 30, 11)
    w = 5
    got = engine.gaussian_blur(img, w, border="reflect")
    padded = np.pad(img, ((w, w), (w, w), (0, 0)), mode="reflect")
    np.testing.assert_array_equal(engine.gaussian_blur(padded, w)[w:-w, w:-w], got)
    sym = np.pad(img, ((w, w), (w, w), (0, 0)), mode="symmetric")
    assert not np.array_equal(engine.gaussian_blur(sym, w)[w:-w, w:-w], got)


def test_luminance(engine):
    for _, img in IMAGES:
        lum = clpix.luminance(img)
        assert lum.dtype == np.uint16 and lum.shape == img.shape[:2]
        np.testing.assert_array_equal(lum, ref.luminance(img))
        np.testing.assert_array_equal(engine.luminance(img), lum)


def test_luminance_every_colour():
    # All 2^24 colours would take long: every r and b, every 3rd g (as the Rust test).
    r, g, b = np.meshgrid(np.arange(256), np.arange(0, 256, 3), np.arange(256), indexing="ij")
    img = np.stack([r, g, b, np.zeros_like(r)], axis=-1).reshape(-1, 256, 4).astype(np.uint8)
    exact = np.floor((1023 * (21 * r + 72 * g + 7 * b)) / 25500.0).reshape(-1, 256)
    np.testing.assert_array_equal(clpix.luminance(img), exact)


@pytest.mark.parametrize("n", [0, 1, 2, 1000, 4099])
def test_exclusive_scan(engine, n):
    rng = np.random.default_rng(n)
    values = rng.integers(0, 2**32, n, dtype=np.uint32)  # wraps often
    got = engine.exclusive_scan(values)
    assert got.dtype == np.uint32 and got.shape == (n,)
    np.testing.assert_array_equal(got, ref.exclusive_scan(values))


def test_empty_images(engine):
    for shape in [(0, 5, 4), (7, 0, 4), (0, 0, 4)]:
        img = np.zeros(shape, np.uint8)
        np.testing.assert_array_equal(engine.histogram_rgba(img), np.zeros((4, 256), np.uint32))
        np.testing.assert_array_equal(engine.histogram_luminance(img), np.zeros(1024, np.uint32))
        assert len(engine.compact(img, 0)) == 0 and len(engine.compact(img, 0, "luminance")) == 0
        assert len(engine.extremes(img, "brightest", 3, 1.0)) == 0
        assert engine.gaussian_blur(img, 3).shape == shape
        assert engine.compacted_image(img, 0).shape == shape
        assert clpix.luminance(img).shape == shape[:2]
        for op in (lambda i: engine.extreme(i, "brightest"), lambda i: engine.extreme(i, "darkest"), engine.luminance_stats):
            with pytest.raises(ValueError, match="needs at least one pixel"):
                op(img)


def test_backends_agree(cpu, engine):
    img = scene(64, 80, 21)
    assert cpu.extreme(img, "brightest") == engine.extreme(img, "brightest")
    np.testing.assert_array_equal(cpu.gaussian_blur(img, 5, None, "wrap"), engine.gaussian_blur(img, 5, None, "wrap"))


def test_module_functions_use_the_default_engine():
    img = scene(30, 40, 5)
    e = clpix.default_engine()
    assert e is clpix.default_engine()
    assert clpix.extreme(img, "brightest") == e.extreme(img, "brightest")
    assert clpix.extreme(img, "darkest") == e.extreme(img, "darkest")
    assert clpix.luminance_stats(img) == e.luminance_stats(img)
    np.testing.assert_array_equal(clpix.extremes(img, "brightest", 4, 3.0), e.extremes(img, "brightest", 4, 3.0))
    np.testing.assert_array_equal(clpix.extremes(img, "darkest", 4, 3.0), e.extremes(img, "darkest", 4, 3.0))
    np.testing.assert_array_equal(clpix.histogram_rgba(img), ref.histogram_rgba(img))
    np.testing.assert_array_equal(clpix.histogram_luminance(img), ref.histogram_luminance(img))
    np.testing.assert_array_equal(clpix.compact(img, 500), e.compact(img, 500))
    np.testing.assert_array_equal(clpix.compact(img, 500, "luminance"), e.compact(img, 500, "luminance"))
    np.testing.assert_array_equal(clpix.compacted_image(img, 500, "luminance"), ref.compacted_image(img, 500, True))
    np.testing.assert_array_equal(clpix.gaussian_blur(img, 3, 1.0, "zero"), ref.blur_u8(img, 3, 1.0, "zero"))
    v = np.arange(10, dtype=np.uint32)
    np.testing.assert_array_equal(clpix.exclusive_scan(v), ref.exclusive_scan(v))
