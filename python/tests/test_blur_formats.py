"""The Gaussian blur of every pixel format (uint8, uint16, float32 arrays shaped (H, W),
(H, W, 3) or (H, W, 4)) against the reference of tests/format_reference.py, channel by
channel, in many memory layouts, into ``out=``, and through clpix.dask."""

from __future__ import annotations

import numpy as np
import pytest

import clpix
import format_reference as ref
from test_formats import FORMAT_IDS, FORMATS, extremes_int, layouts, random_image, special_f32

BORDERS = ["clamp", "reflect", "wrap", "zero"]
# (radius, sigma): 25 is larger than the images' sides (borders repeat).
RADII = [(1, None), (3, 0.7), (6, None), (25, None)]


def same(got: np.ndarray, want: np.ndarray) -> None:
    """Equal shape, dtype and values; float32 bit for bit, any NaN equal to any NaN."""
    assert got.dtype == want.dtype and got.shape == want.shape
    if got.dtype != np.float32:
        np.testing.assert_array_equal(got, want)
        return
    nan = np.isnan(got)
    np.testing.assert_array_equal(nan, np.isnan(want))
    np.testing.assert_array_equal(got[~nan].view(np.uint32), want[~nan].view(np.uint32))


def images(dtype, channels):
    out = [random_image(dtype, channels, 13, 19, 1), random_image(dtype, channels, 1, 7, 2)]
    if dtype == np.float32:
        out.append(special_f32(9, 11, 3, channels))
    else:
        out.append(extremes_int(dtype, channels, 9, 11, 4))
    return out


@pytest.mark.parametrize("dtype, channels", FORMATS, ids=FORMAT_IDS)
def test_against_the_reference(engine, dtype, channels):
    for img in images(dtype, channels):
        for border in BORDERS:
            for radius, sigma in RADII:
                want = ref.blur(img, radius, sigma, border)
                same(engine.gaussian_blur(img, radius, sigma, border), want)
        # Into `out` (filled with other values first), which is returned.
        out = np.full(img.shape, 7, dtype)
        assert engine.gaussian_blur(img, 4, None, "reflect", out) is out
        same(out, ref.blur(img, 4, None, "reflect"))


def test_radius_zero_is_a_copy(engine):
    for dtype, channels in FORMATS:
        for img in images(dtype, channels):
            got = engine.gaussian_blur(img, 0)
            assert got.tobytes() == img.tobytes() and not np.shares_memory(got, img)
            out = np.zeros_like(img)
            assert engine.gaussian_blur(img, 0, out=out).tobytes() == img.tobytes()


def test_each_channel_is_blurred_alone(engine):
    """A mono blur is one channel of the RGBA blur of the image in every channel, RGB8 the
    first three of the RGBA8 blur with any alpha: every format against RGBA8's and RGBA f32's
    own paths."""
    rng = np.random.default_rng(5)
    for dtype in (np.uint8, np.uint16, np.float32):
        mono = random_image(dtype, 1, 17, 23, 6)
        rgba = np.repeat(mono[..., None], 4, axis=2)
        for border in BORDERS:
            for radius, sigma in [(2, None), (5, 1.7), (12, None)]:
                full = engine.gaussian_blur(rgba, radius, sigma, border)
                got = engine.gaussian_blur(mono, radius, sigma, border)
                for c in range(4):
                    same(got, np.ascontiguousarray(full[..., c]))
                if dtype == np.uint8:
                    rgb = random_image(dtype, 3, 17, 23, 7)
                    alpha = rng.integers(0, 256, (17, 23, 1), dtype=np.uint8)
                    full = engine.gaussian_blur(np.concatenate([rgb, alpha], axis=2), radius, sigma, border)
                    same(engine.gaussian_blur(rgb, radius, sigma, border), np.ascontiguousarray(full[..., :3]))


@pytest.mark.parametrize("dtype, channels", FORMATS, ids=FORMAT_IDS)
def test_layouts_give_the_same_results(cpu, dtype, channels):
    img = random_image(dtype, channels, 12, 17, 8)
    for radius, border in [(3, "reflect"), (9, "zero")]:
        want = ref.blur(img, radius, None, border)
        for name, view in layouts(img):
            same(cpu.gaussian_blur(view, radius, None, border), want)
            out = np.empty(img.shape, dtype)
            assert cpu.gaussian_blur(view, radius, None, border, out=out) is out, name
            same(out, want)
    before = img.copy()
    cpu.gaussian_blur(img, 3)
    assert img.tobytes() == before.tobytes()


def test_out_may_be_the_image(cpu):
    # The image is copied first (as for RGBA f32); an RGBA8 `out` must not share memory with it.
    for dtype, channels in FORMATS:
        img = random_image(dtype, channels, 11, 14, 9)
        want = ref.blur(img, 3, None, "wrap")
        if (dtype, channels) == (np.uint8, 4):
            with pytest.raises(ValueError, match="cannot be written"):
                cpu.gaussian_blur(img, 3, None, "wrap", out=img)
            continue
        inplace = img.copy()
        assert cpu.gaussian_blur(inplace, 3, None, "wrap", out=inplace) is inplace
        same(inplace, want)
        # The image a padded view whose memory `out` shares.
        wide = np.zeros((11, 20) + img.shape[2:], dtype)
        wide[:, :14] = img
        flat = wide.reshape(-1)[: img.size].reshape(img.shape)
        assert np.shares_memory(flat, wide[:, :14])
        cpu.gaussian_blur(wide[:, :14], 3, None, "wrap", out=flat)
        same(flat, want)


def test_bad_out(cpu):
    img = random_image(np.uint16, 1, 6, 8, 10)
    read_only = np.zeros_like(img)
    read_only.flags.writeable = False
    raw = np.zeros(img.nbytes + 1, np.uint8)
    unaligned = np.frombuffer(raw.data, np.uint16, offset=1).reshape(img.shape)
    bad = [
        ([[0]], TypeError, r"numpy.ndarray of the image's shape \(6, 8\) and dtype uint16; got list"),
        (np.zeros((6, 8), np.uint8), TypeError, "dtype uint16; got dtype uint8"),
        (np.zeros((6, 8, 4), np.uint16), ValueError, r"out= has shape \(6, 8, 4\), but the image is \(6, 8\)"),
        (np.zeros((8, 6), np.uint16).T, ValueError, "C-contiguous"),
        (unaligned, ValueError, "aligned"),
        (read_only, ValueError, "cannot be written: it is read-only"),
    ]
    for out, error, words in bad:
        with pytest.raises(error, match=words):
            cpu.gaussian_blur(img, 2, out=out)
    with pytest.raises(TypeError, match=r"dtype float32; got dtype uint16"):
        cpu.gaussian_blur(img.astype(np.float32)[..., None].repeat(4, axis=2), 2, out=np.zeros((6, 8, 4), np.uint16))


def test_bad_images_and_empty_images(cpu):
    accepted = r"uint8, uint16 or float32 of shape \(H, W\), \(H, W, 3\) \(uint8 only\) or \(H, W, 4\)"
    bad = [
        ([[1, 2], [3, 4]], TypeError, "numpy.ndarray, " + accepted),
        (np.zeros((4, 4), np.float64), TypeError, accepted + r".*got dtype float64"),
        (np.zeros((4, 4, 4), np.int16), TypeError, "got dtype int16"),
        (np.zeros((4, 4), ">u2"), TypeError, "native byte order"),
        (np.zeros((4, 4, 3), np.uint16), ValueError, r"\(H, W, 3\) image is RGB8, uint8 only"),
        (np.zeros((4, 4, 5), np.float32), ValueError, accepted + r"; got an array of shape \(4, 4, 5\)"),
        (np.zeros(16, np.uint8), ValueError, r"got an array of shape \(16,\)"),
    ]
    for img, error, words in bad:
        for blur in (cpu.gaussian_blur, clpix.gaussian_blur):
            with pytest.raises(error, match=words):
                blur(img, 2)
    for dtype, channels in FORMATS:
        for h, w in [(0, 5), (4, 0)]:
            img = random_image(dtype, channels, h, w, 1)
            got = cpu.gaussian_blur(img, 3)
            assert got.shape == img.shape and got.dtype == img.dtype
    with pytest.raises(ValueError, match="invalid sigma"):
        cpu.gaussian_blur(np.zeros((3, 3), np.uint16), 2, sigma=-1.0)


@pytest.mark.parametrize("dtype, channels", FORMATS, ids=FORMAT_IDS)
def test_dask_equals_single_call(cpu, dtype, channels):
    da = pytest.importorskip("dask.array")
    import dask
    import clpix.dask as cd

    img = random_image(dtype, channels, 29, 37, 11)
    tail = img.shape[2:]
    chunkings = [(5, 7) + tail, ((3, 22, 4), (1, 27, 9)) + tail]
    if tail:
        chunkings.append((10, 10, 2))  # the channels chunked: rechunked
    with dask.config.set(scheduler="threads"):
        for chunks in chunkings:
            d = da.from_array(img, chunks=chunks)
            for radius, sigma, border in [(3, None, "clamp"), (2, None, "zero"), (7, None, "reflect"), (4, 1.3, "wrap")]:
                got = cd.gaussian_blur(d, radius, sigma, border)
                assert isinstance(got, da.Array)
                same(got.compute(), cpu.gaussian_blur(img, radius, sigma, border))
        same(cd.gaussian_blur(img, 3).compute(), cpu.gaussian_blur(img, 3))  # a NumPy array
        empty = da.zeros((0, 6) + tail, dtype=dtype, chunks=3)
        assert cd.gaussian_blur(empty, 3).compute().shape == empty.shape
        with pytest.raises(ValueError, match="invalid sigma"):
            cd.gaussian_blur(d, 3, sigma=-1.0)
    if dtype == np.uint16 and channels == 1:
        with pytest.raises(ValueError, match=r"\(H, W, 3\) image is RGB8"):
            cd.gaussian_blur(da.zeros((4, 4, 3), dtype=np.uint16), 1)
        with pytest.raises(TypeError, match="got dtype int32"):
            cd.gaussian_blur(da.zeros((4, 4), dtype=np.int32), 1)
