"""Every pixel format (uint8, uint16, float32 arrays shaped (H, W), (H, W, 3) or (H, W, 4)) through
extreme, luminance_stats, histogram and histogram_keys, on the CPU and (where found) OpenCL
engines, against the references of tests/format_reference.py, in many memory layouts."""

from __future__ import annotations

import math
import pickle

import numpy as np
import pytest

import clpix
import format_reference as ref

# (dtype, channels) of the six formats besides RGBA8 (and RGBA8 itself, through the same API).
FORMATS = [
    (np.uint8, 1),
    (np.uint16, 1),
    (np.float32, 1),
    (np.uint8, 3),
    (np.uint8, 4),
    (np.uint16, 4),
    (np.float32, 4),
]
FORMAT_IDS = ["mono8", "mono16", "mono-f32", "rgb8", "rgba8", "rgba16", "rgba-f32"]


def shaped(values: np.ndarray, channels: int) -> np.ndarray:
    return values[..., 0] if channels == 1 else values


def random_image(dtype, channels: int, h: int, w: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if dtype == np.float32:
        v = rng.normal(0.0, 2.0, (h, w, 4)).astype(np.float32)
    else:
        v = rng.integers(0, np.iinfo(dtype).max + 1, (h, w, 4), dtype=dtype)
    return shaped(v[..., :channels] if channels > 1 else v, channels)


def special_f32(h: int, w: int, seed: int, channels: int, infinite: bool = True) -> np.ndarray:
    """float32 values full of the awkward ones: NaN, ±inf, ±0, denormals, huge, ties (without
    the infinities when not ``infinite``)."""
    rng = np.random.default_rng(seed)
    specials = [np.nan, 0.0, -0.0, 1e-45, -1e-45, 1e-40, -3e-39, 3.4e38, -3.4e38, 0.5, 0.5, 1.0, -1.0, 0.1, 0.7, 3e-8]
    specials = np.array(specials + ([np.inf, -np.inf] if infinite else []), np.float32)
    v = specials[rng.integers(0, len(specials), (h, w, 4))]
    return shaped(v[..., :channels] if channels > 1 else v, channels)


def extremes_int(dtype, channels: int, h: int, w: int, seed: int) -> np.ndarray:
    """Only the smallest and largest values of the type: every key at its bounds, many ties."""
    rng = np.random.default_rng(seed)
    top = np.iinfo(dtype).max
    v = np.where(rng.random((h, w, 4)) < 0.5, 0, top).astype(dtype)
    return shaped(v[..., :channels] if channels > 1 else v, channels)


def constant(dtype, channels: int, h: int, w: int, value) -> np.ndarray:
    return shaped(np.full((h, w, 4), value, dtype)[..., : max(channels, 1)], channels)


def cases(dtype, channels: int):
    """(name, image) pairs: sizes 1×1, thin, odd, random; all equal; extremes; specials."""
    out = [
        ("1x1", random_image(dtype, channels, 1, 1, 1)),
        ("1x23", random_image(dtype, channels, 1, 23, 2)),
        ("19x1", random_image(dtype, channels, 19, 1, 3)),
        ("random", random_image(dtype, channels, 21, 34, 4)),
        ("equal", constant(dtype, channels, 9, 13, 7)),
    ]
    if dtype == np.float32:
        out.append(("specials", special_f32(17, 26, 5, channels)))
        out.append(("specials-2", special_f32(6, 40, 6, channels)))
        out.append(("finite-specials", special_f32(13, 31, 8, channels, infinite=False)))
        out.append(("all-nan-but-one", _nan_but_one(channels)))
        out.append(("-0-and-+0", shaped(np.array([[[-0.0] * 4, [0.0] * 4, [-0.0] * 4]], np.float32)[..., : max(channels, 1)], channels)))
        out.append(("denormals", shaped((np.arange(1, 25, dtype=np.float32).reshape(2, 3, 4) * np.float32(1e-45)), channels)))
    else:
        out.append(("bounds", extremes_int(dtype, channels, 15, 22, 7)))
        out.append(("max", constant(dtype, channels, 4, 5, np.iinfo(dtype).max)))
    return out


def _nan_but_one(channels: int) -> np.ndarray:
    v = np.full((5, 7, 4), np.nan, np.float32)
    v[3, 2] = (-2.5, 1.0, 4.0, 1.0)
    return shaped(v[..., :channels] if channels > 1 else v, channels)


def layouts(img: np.ndarray):
    """The same pixels in many memory layouts (strides, offsets, orders)."""
    h, w = img.shape[:2]
    tail = img.shape[2:]
    yield "contiguous", img
    wide = np.zeros((h, w + 5) + tail, img.dtype)
    wide[:, 3 : 3 + w] = img
    yield "padded rows", wide[:, 3 : 3 + w]
    big = np.zeros((2 * h, w + 1) + tail, img.dtype)
    big[::2, 1:] = img
    yield "a[::2, 1:]", big[::2, 1:]
    yield "transposed", np.ascontiguousarray(img.swapaxes(0, 1)).swapaxes(0, 1)
    yield "Fortran order", np.asfortranarray(img)
    yield "flipped rows", np.flipud(np.flipud(img).copy())
    yield "flipped columns", np.fliplr(np.fliplr(img).copy())
    if img.ndim == 3:
        yield "channels reversed", img[..., ::-1].copy()[..., ::-1]
        sparse = np.zeros((h, w, 2 * img.shape[2]), img.dtype)
        sparse[..., ::2] = img
        yield "channels apart", sparse[..., ::2]
    raw = np.zeros(img.nbytes + 1, np.uint8)
    raw[1:] = np.frombuffer(np.ascontiguousarray(img).tobytes(), np.uint8)
    yield "unaligned", np.frombuffer(raw.data, img.dtype, offset=1).reshape(img.shape) if img.dtype.itemsize > 1 else raw[1:].view(img.dtype).reshape(img.shape)
    readonly = img.copy()
    readonly.setflags(write=False)
    yield "read-only", readonly


def same(a: float, b: float) -> bool:
    """Equal floats, the sign of zero included; NaN equals NaN."""
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return a == b and math.copysign(1.0, a) == math.copysign(1.0, b)


def check_extreme(engine, img: np.ndarray, which: str) -> None:
    want = ref.extreme(img, which == "darkest")
    if want is None:
        with pytest.raises(ValueError, match="needs at least one pixel"):
            engine.extreme(img, which)
        return
    h = engine.extreme(img, which)
    got = (h.format, h.x, h.y, h.key, h.value)
    if img.dtype == np.float32:
        # Compare floats by bits (keys -0 as +0; values as they are, NaN included).
        assert got[:3] == want[:3]
        assert np.float32(got[3]).tobytes() == np.float32(want[3]).tobytes()
        assert np.array(got[4], np.float32).tobytes() == np.array(want[4], np.float32).tobytes()
    else:
        assert got == want
    if img.dtype == np.uint8 and img.ndim == 3 and img.shape[2] == 4:
        assert isinstance(h, clpix.Hit) and (h.luminance, h.rgba) == (h.key, h.value)
    else:
        assert isinstance(h, clpix.FormatHit)


def check_stats(engine, img: np.ndarray) -> None:
    want = ref.stats(img)
    if want is None:
        with pytest.raises(ValueError, match="needs at least one pixel"):
            engine.luminance_stats(img)
        return
    s = engine.luminance_stats(img)
    got = (s.sum, s.count, s.mean, s.min, s.max)
    if img.dtype == np.float32:
        assert isinstance(s, clpix.FloatStats)
        assert all(same(a, b) for a, b in zip(got, want)), (got, want)
    else:
        assert isinstance(s, clpix.LuminanceStats)
        assert got == want


def bin_choices(img: np.ndarray):
    """(bins, lo, hi) for the channels and for the keys of an image's format."""
    if img.dtype == np.float32:
        both = [(10, 0.0, 1.0), (7, -1.5, 2.25), (3, 0.5, 0.5), (64, -3.4e38, 3.4e38), (5, 0.1, 0.7), (1, -1e-44, 1e-44), (1000, -4.0, 4.0)]
        return both, both
    top = int(np.iinfo(img.dtype).max)
    chans = [(top + 1, 0, top), (7, 3, top - 5), (1, 0, 0), (13, top, top), (3, 0, top)]
    key_top = {"mono8": 255, "mono16": 65535, "rgb8": 1023, "rgba8": 1023, "rgba16": 65535}[ref.format_of(img)]
    keys = [(key_top + 1, 0, key_top), (10, 1, key_top - 1), (1, 0, key_top), (6, 100, 100)]
    return chans, keys


def check_histograms(engine, img: np.ndarray) -> None:
    chans, keys = bin_choices(img)
    for bins, lo, hi in chans:
        got = engine.histogram(img, bins, (lo, hi))
        assert got.dtype == np.uint32 and got.shape == (1 if img.ndim == 2 else img.shape[2], bins)
        np.testing.assert_array_equal(got, ref.histogram(img, bins, lo, hi), err_msg=f"{bins} bins over {lo}..{hi}")
    for bins, lo, hi in keys:
        got = engine.histogram_keys(img, bins, (lo, hi))
        assert got.dtype == np.uint32 and got.shape == (bins,)
        np.testing.assert_array_equal(got, ref.histogram_keys(img, bins, lo, hi), err_msg=f"{bins} bins over {lo}..{hi}")


@pytest.mark.parametrize("dtype, channels", FORMATS, ids=FORMAT_IDS)
def test_every_format_against_the_reference(engine, dtype, channels):
    for name, img in cases(dtype, channels):
        for which in ("brightest", "darkest"):
            check_extreme(engine, img, which)
        check_stats(engine, img)
        check_histograms(engine, img)


@pytest.mark.parametrize("dtype, channels", FORMATS, ids=FORMAT_IDS)
def test_layouts_give_the_same_results(engine, dtype, channels):
    imgs = [random_image(dtype, channels, 11, 17, 11)]
    imgs.append(special_f32(9, 14, 12, channels) if dtype == np.float32 else extremes_int(dtype, channels, 9, 14, 12))
    for img in imgs:
        want_b, want_d = ref.extreme(img, False), ref.extreme(img, True)
        want_s = engine.luminance_stats(img)
        chans, keys = bin_choices(img)
        bins, lo, hi = chans[1]
        kbins, klo, khi = keys[1]
        want_h = ref.histogram(img, bins, lo, hi)
        want_k = ref.histogram_keys(img, kbins, klo, khi)
        for name, view in layouts(img):
            np.testing.assert_array_equal(np.asarray(view), img)
            b, d = engine.extreme(view, "brightest"), engine.extreme(view, "darkest")
            assert (b.x, b.y) == want_b[1:3], name
            assert (d.x, d.y) == want_d[1:3], name
            s = engine.luminance_stats(view)
            assert repr(s) == repr(want_s), name
            np.testing.assert_array_equal(engine.histogram(view, bins, (lo, hi)), want_h, err_msg=name)
            np.testing.assert_array_equal(engine.histogram_keys(view, kbins, (klo, khi)), want_k, err_msg=name)


@pytest.mark.parametrize("seed", range(6))
def test_random_shapes_and_slices(engine, seed):
    rng = np.random.default_rng(100 + seed)
    for dtype, channels in FORMATS:
        h, w = int(rng.integers(1, 40)), int(rng.integers(1, 40))
        base = random_image(dtype, channels, 2 * h + 3, 2 * w + 3, seed)
        sy, sx = int(rng.integers(1, 3)), int(rng.integers(1, 3))
        oy, ox = int(rng.integers(0, 3)), int(rng.integers(0, 3))
        view = base[oy : oy + sy * h : sy, ox : ox + sx * w : sx]
        if rng.random() < 0.5:
            view = view.swapaxes(0, 1)
        img = np.ascontiguousarray(view)
        check_extreme(engine, view, "brightest")
        check_extreme(engine, view, "darkest")
        check_stats(engine, view)
        bins = int(rng.integers(1, 300))
        lo, hi = (-2.0, 3.5) if dtype == np.float32 else (int(rng.integers(0, 50)), int(np.iinfo(dtype).max) - int(rng.integers(0, 50)))
        np.testing.assert_array_equal(engine.histogram(view, bins, (lo, hi)), ref.histogram(img, bins, lo, hi))
        if dtype != np.float32 or channels == 1:  # (RGBA f32 keys: the small cases)
            klo, khi = (lo, hi) if channels == 1 else (0, 1023 if dtype == np.uint8 else 65535)
            np.testing.assert_array_equal(engine.histogram_keys(view, bins, (klo, khi)), ref.histogram_keys(img, bins, klo, khi))


def test_rgba_f32_keys_on_large_images_match_the_cpu(engine, cpu):
    """RGBA f32 keys (an fma sequence) on images too large for the exact rational reference:
    the OpenCL engine against the CPU engine, which the small images check exactly."""
    rng = np.random.default_rng(7)
    img = (rng.normal(0, 1, (301, 257, 4)) * np.float32(10.0) ** rng.integers(-40, 38, (301, 257, 4))).astype(np.float32)
    img[rng.random((301, 257)) < 0.01, 1] = np.nan
    for which in ("brightest", "darkest"):
        assert engine.extreme(img, which) == cpu.extreme(img, which)
    assert repr(engine.luminance_stats(img)) == repr(cpu.luminance_stats(img))
    for bins, lo, hi in [(1000, -1e30, 1e30), (17, -1.0, 1.0)]:
        np.testing.assert_array_equal(engine.histogram_keys(img, bins, (lo, hi)), cpu.histogram_keys(img, bins, (lo, hi)))
        np.testing.assert_array_equal(engine.histogram(img, bins, (lo, hi)), ref.histogram(img, bins, lo, hi))


def test_large_integer_images(engine):
    rng = np.random.default_rng(8)
    for img in (
        rng.integers(0, 65536, (513, 1031), dtype=np.uint16),
        rng.integers(0, 256, (257, 383, 3), dtype=np.uint8),
        rng.integers(0, 65536, (129, 257, 4), dtype=np.uint16),
    ):
        check_extreme(engine, img, "brightest")
        check_extreme(engine, img, "darkest")
        check_stats(engine, img)
        np.testing.assert_array_equal(engine.histogram(img, 4096, (0, 65535)), ref.histogram(img, 4096, 0, 65535))
        np.testing.assert_array_equal(engine.histogram_keys(img, 1000, (0, 999)), ref.histogram_keys(img, 1000, 0, 999))


def test_f32_sum_is_exact(engine):
    # 1 + 2**-60 + ... : float64 summation in order would lose the small ones.
    v = np.array([[1.0, 2.0**-60, -1.0, 2.0**-60, 3.0e38, -3.0e38, 2.0**-149]], np.float32)
    s = engine.luminance_stats(v)
    assert s.sum == math.fsum([2.0**-60, 2.0**-60, 2.0**-149]) and s.count == 7
    assert engine.luminance_stats(np.array([[np.inf, 1.0, np.nan]], np.float32)).sum == math.inf
    both = engine.luminance_stats(np.array([[np.inf, -np.inf]], np.float32))
    assert math.isnan(both.sum) and both.count == 2 and (both.min, both.max) == (-math.inf, math.inf)


def test_nan_is_never_chosen(engine):
    v = np.full((4, 6), np.nan, np.float32)
    v[1, 4] = -np.inf
    for which in ("brightest", "darkest"):
        h = engine.extreme(v, which)
        assert (h.x, h.y, h.key) == (4, 1, -math.inf)
    rgba = np.zeros((2, 3, 4), np.float32)
    rgba[..., 3] = np.nan  # alpha is not in the key
    rgba[0, 0, 2] = np.nan  # a NaN blue is
    h = engine.extreme(rgba, "darkest")
    assert (h.x, h.y, h.key) == (1, 0, 0.0) and math.isnan(h.value[3])
    assert engine.luminance_stats(rgba).count == 5
    for img in (np.full((3, 3), np.nan, np.float32), np.full((2, 2, 4), np.nan, np.float32)):
        with pytest.raises(ValueError, match="needs at least one pixel"):
            engine.extreme(img, "brightest")
        with pytest.raises(ValueError, match="needs at least one pixel"):
            engine.luminance_stats(img)
        assert engine.histogram_keys(img, 4, (0.0, 1.0)).sum() == 0


@pytest.mark.parametrize("dtype, channels", FORMATS, ids=FORMAT_IDS)
def test_images_without_pixels(engine, dtype, channels):
    for h, w in [(0, 0), (0, 5), (7, 0)]:
        img = np.zeros((h, w) + (() if channels == 1 else (channels,)), dtype)
        with pytest.raises(ValueError, match="needs at least one pixel"):
            engine.extreme(img, "darkest")
        with pytest.raises(ValueError, match="needs at least one pixel"):
            engine.luminance_stats(img)
        got = engine.histogram(img, 5, (0, 10))
        assert got.shape == (channels, 5) and got.dtype == np.uint32 and not got.any()
        assert engine.histogram_keys(img, 3, (0, 10)).tolist() == [0, 0, 0]


def test_f32_bins_follow_numpy_in_float64():
    """numpy.histogram of a float32 array uses float32 edges; clpix's bins are those of the
    values as float64: 0.7f (0.69999998...) lies below the edge 0.7."""
    v = np.array([[0.7, 0.3, 0.1, 0.5]], np.float32)
    got = clpix.Engine("cpu").histogram(v, 10, (0.0, 1.0))[0]
    np.testing.assert_array_equal(got, np.histogram(v.astype(np.float64), 10, (0.0, 1.0))[0])
    assert got[6] == 1 and got[7] == 0


def test_module_functions():
    img = np.arange(12, dtype=np.uint16).reshape(3, 4)
    assert clpix.extreme(img, "brightest") == clpix.FormatHit("mono16", 3, 2, 11, (11,))
    assert clpix.luminance_stats(img) == clpix.LuminanceStats(66, 12, 0, 11)
    np.testing.assert_array_equal(clpix.histogram(img, 2, (0, 11)), [[6, 6]])
    np.testing.assert_array_equal(clpix.histogram_keys(img, 3, (0, 11)), [4, 4, 4])
    assert clpix.MAX_BINS == 2**20


def test_records():
    h = clpix.FormatHit("rgba-f32", 1, 2, 0.5, (1.0, -0.0, float("nan"), 2.5))
    assert (h.format, h.x, h.y, h.key) == ("rgba-f32", 1, 2, 0.5) and math.isnan(h.value[2])
    assert repr(h) == 'FormatHit(format="rgba-f32", x=1, y=2, key=0.5, value=(1.0, -0.0, nan, 2.5))'
    g = clpix.FormatHit("rgb8", 3, 4, 1023, (255, 255, 255))
    assert g == pickle.loads(pickle.dumps(g)) and hash(g) == hash(clpix.FormatHit("rgb8", 3, 4, 1023, [255, 255, 255]))
    assert g != clpix.FormatHit("rgb8", 3, 4, 1022, (255, 255, 254))
    assert clpix.FormatHit("mono-f32", 0, 0, -0.0, (-0.0,)) == clpix.FormatHit("mono-f32", 0, 0, 0.0, (0.0,))
    assert hash(clpix.FormatHit("mono-f32", 0, 0, -0.0, (-0.0,))) == hash(clpix.FormatHit("mono-f32", 0, 0, 0.0, (0.0,)))
    assert len({g, clpix.FormatHit("rgb8", 3, 4, 1023, (255, 255, 255))}) == 1
    with pytest.raises(ValueError, match="invalid format"):
        clpix.FormatHit("rgba8", 0, 0, 0, (0, 0, 0, 0))
    with pytest.raises(ValueError, match="has 3 channels"):
        clpix.FormatHit("rgb8", 0, 0, 0, (0, 0))
    with pytest.raises(ValueError, match="0..=255"):
        clpix.FormatHit("mono8", 0, 0, 0, (256,))
    with pytest.raises(ValueError, match="0..=1023"):
        clpix.FormatHit("rgb8", 0, 0, 1024, (0, 0, 0))
    s = clpix.FloatStats(1.5, 3, -0.25, 2.0)
    assert (s.sum, s.count, s.mean, s.min, s.max) == (1.5, 3, 0.5, -0.25, 2.0)
    assert pickle.loads(pickle.dumps(s)) == s
    assert repr(s) == "FloatStats(sum=1.5, count=3, mean=0.5, min=-0.25, max=2.0)"
    rgba = clpix.Hit(1, 2, 300, (1, 2, 3, 4))
    assert (rgba.format, rgba.key, rgba.value) == ("rgba8", 300, (1, 2, 3, 4))


ACCEPTED = r"uint8, uint16 or float32 of shape \(H, W\), \(H, W, 3\) \(uint8 only\) or \(H, W, 4\)"

BAD = [
    ([[1, 2], [3, 4]], TypeError, "expected a numpy.ndarray, " + ACCEPTED + "; got list"),
    (np.zeros((4, 4), np.float64), TypeError, ACCEPTED + r".*got dtype float64"),
    (np.zeros((4, 4, 4), np.int16), TypeError, "got dtype int16"),
    (np.zeros((4, 4), bool), TypeError, "got dtype bool"),
    (np.zeros((4, 4), ">u2"), TypeError, "native byte order"),
    (np.zeros((4, 4, 4), ">f4"), TypeError, "native byte order"),
    (np.zeros((4, 4, 3), np.uint16), ValueError, r"\(H, W, 3\) image is RGB8, uint8 only; a uint16 image is of shape \(H, W\) or \(H, W, 4\)"),
    (np.zeros((4, 4, 3), np.float32), ValueError, r"uint8 only; a float32 image"),
    (np.zeros((4, 4, 5), np.uint8), ValueError, ACCEPTED + r"; got an array of shape \(4, 4, 5\)"),
    (np.zeros((4, 4, 1), np.uint8), ValueError, r"got an array of shape \(4, 4, 1\)"),
    (np.zeros(16, np.uint8), ValueError, r"got an array of shape \(16,\)"),
    (np.zeros((2, 4, 4, 4), np.float32), ValueError, r"got an array of shape \(2, 4, 4, 4\)"),
]


@pytest.mark.parametrize("img, exc, match", BAD)
def test_bad_images(cpu, img, exc, match):
    ops = [
        lambda i: cpu.extreme(i, "brightest"),
        lambda i: cpu.extreme(i, "darkest"),
        cpu.luminance_stats,
        lambda i: cpu.histogram(i, 4, (0, 10)),
        lambda i: cpu.histogram_keys(i, 4, (0, 10)),
        lambda i: clpix.histogram(i, 4, (0, 10)),
        lambda i: cpu.compact(i, 0, "luminance"),
    ]
    for op in ops:
        with pytest.raises(exc, match=match):
            op(img)


def test_bad_bins(engine):
    u8, f32 = np.zeros((3, 3), np.uint8), np.zeros((3, 3, 4), np.float32)
    cases = [
        (lambda: engine.histogram(u8, 0, (0, 255)), "invalid bin count = 0"),
        (lambda: engine.histogram(u8, clpix.MAX_BINS + 1, (0, 255)), "invalid bin count = 1048577"),
        (lambda: engine.histogram_keys(u8, -3, (0, 255)), "invalid bins = -3"),
        (lambda: engine.histogram(u8, 4, (0.5, 255)), "for an integer format"),
        (lambda: engine.histogram_keys(u8, 4, (0, 254.5)), "integer bounds"),
        (lambda: engine.histogram(u8, 4, (10, 2)), "lo <= hi"),
        (lambda: engine.histogram(f32, 4, (0.0, math.nan)), "finite bounds"),
        (lambda: engine.histogram_keys(f32, 4, (-math.inf, 1.0)), "finite bounds"),
    ]
    for call, message in cases:
        with pytest.raises(ValueError) as info:
            call()
        assert message in str(info.value)
    with pytest.raises(TypeError, match=r"range must be a sequence of two numbers \(lo, hi\); got 255"):
        engine.histogram(u8, 4, 255)
    with pytest.raises(ValueError, match="range must be"):
        engine.histogram_keys(u8, 4, (0, 1, 2))
    # Any sequence of two numbers (numpy's range takes lists too).
    np.testing.assert_array_equal(engine.histogram(u8, 4, [0, 255]), engine.histogram(u8, 4, np.array([0.0, 255.0])))
    with pytest.raises(ValueError, match="invalid which"):
        engine.extreme(u8, "brighter")


def test_input_is_not_modified(engine):
    for dtype, channels in FORMATS:
        img = random_image(dtype, channels, 10, 12, 5)
        before = img.copy()
        engine.extreme(img, "brightest")
        engine.luminance_stats(img)
        engine.histogram(img, 8, (0, 200))
        engine.histogram_keys(img, 8, (0, 200))
        assert img.tobytes() == before.tobytes()
