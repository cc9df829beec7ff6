"""Images an engine holds (``Engine.upload`` → ``clpix.DeviceImage``): every operation of every
format gives on a held image what it gives on the array; ``download`` gives the array back;
``gaussian_blur_device`` keeps the blur on the engine; an image held by one engine is taken by
another."""

from __future__ import annotations

import numpy as np
import pytest

import clpix
import format_reference as fref
from test_formats import FORMAT_IDS, FORMATS, random_image


def attempt(f):
    """``f()``, or the ClpixError it raises as comparable text (a device without f32
    denormals refuses f32 blurs, on held images and arrays alike)."""
    try:
        return f()
    except clpix.ClpixError as e:
        return ("ClpixError", str(e))


def threshold_of(img):
    t = float(np.nanmedian(fref.keys(img)))
    return t if img.dtype == np.float32 else int(t)


def every_op(engine, img, host):
    """Every operation on ``img`` (``host`` its array), as comparable values."""
    t = threshold_of(host)
    lo, hi = (-5.0, 5.0) if host.dtype == np.float32 else (0, int(np.iinfo(host.dtype).max))
    out = []
    for which in ("brightest", "darkest"):
        out.append(repr(engine.extreme(img, which)))
        out.append(engine.extremes(img, which, 5, 2.0).tobytes())
    out.append(repr(engine.luminance_stats(img)))
    out.append(engine.histogram(img, 17, (lo, hi)).tobytes())
    out.append(engine.histogram_keys(img, 9, (lo, hi)).tobytes())
    for order in ("scan", "luminance"):
        out.append(engine.compact(img, t, order).tobytes())
        out.append(engine.compacted_image(img, t, order).tobytes())
    labels, stats = engine.blobs(img, t, 8, background=t)
    out += [labels.tobytes(), stats.tobytes()]
    out.append(engine.centroids(img, [[0, 0], [3, 2]], 2).tobytes())
    out.append(attempt(lambda: engine.gaussian_blur(img, 3).tobytes()))
    return out


@pytest.mark.parametrize("dtype, channels", FORMATS, ids=FORMAT_IDS)
def test_every_operation_of_a_held_image(engine, dtype, channels):
    img = random_image(dtype, channels, 23, 37, 4)
    held = engine.upload(img)
    assert isinstance(held, clpix.DeviceImage)
    assert held.shape == img.shape and held.dtype == img.dtype
    assert "DeviceImage(shape=" in repr(held)
    got = engine.download(held)
    assert got.dtype == img.dtype and got.shape == img.shape
    assert got.tobytes() == np.ascontiguousarray(img).tobytes()
    assert every_op(engine, held, img) == every_op(engine, img, img)
    try:
        once = engine.gaussian_blur(img, 3)
    except clpix.ClpixError as e:
        # A device that flushes f32 denormals refuses f32 blurs, held or not, saying so.
        assert dtype == np.float32 and "denormals" in str(e)
        with pytest.raises(clpix.ClpixError, match="denormals"):
            engine.gaussian_blur_device(held, 3)
        return
    # The blur kept on the engine, then read back; and blurred again from there.
    kept = engine.gaussian_blur_device(img, 3)
    assert isinstance(kept, clpix.DeviceImage) and kept.shape == img.shape
    assert engine.download(kept).tobytes() == engine.gaussian_blur(img, 3).tobytes()
    twice = engine.gaussian_blur_device(kept, 2, border="reflect")
    assert engine.download(twice).tobytes() == engine.gaussian_blur(once, 2, border="reflect").tobytes()
    # A blur of a held image into an array.
    out = np.empty_like(np.ascontiguousarray(img))
    assert engine.gaussian_blur(held, 3, out=out) is out
    assert out.tobytes() == once.tobytes()


def test_held_by_another_engine(engine, cpu):
    img = random_image(np.uint16, 1, 19, 21, 5)
    on_cpu = cpu.upload(img)
    held = engine.upload(img)
    assert repr(engine.extreme(on_cpu, "brightest")) == repr(cpu.extreme(held, "brightest"))
    assert engine.download(on_cpu).tobytes() == cpu.download(held).tobytes() == img.tobytes()


def test_held_errors(cpu):
    img = np.zeros((4, 5), np.uint8)
    with pytest.raises(TypeError):
        cpu.upload(np.zeros((4, 5), np.float64))
    with pytest.raises(TypeError):
        cpu.download(img)
    held = cpu.upload(img)
    with pytest.raises(ValueError, match="threshold"):
        cpu.compact(held, 256)
    with pytest.raises(ValueError):
        cpu.gaussian_blur(held, 2, out=np.empty((4, 6), np.uint8))
    assert "DeviceImage" in clpix.__all__


@pytest.mark.parametrize("dtype, channels", FORMATS, ids=FORMAT_IDS)
def test_crop_and_assemble(engine, dtype, channels):
    img = np.ascontiguousarray(random_image(dtype, channels, 21, 34, 6))
    held = engine.upload(img)
    for y, x, h, w in [(0, 0, 21, 34), (3, 5, 10, 7), (20, 33, 1, 1), (4, 0, 0, 9), (21, 34, 0, 0)]:
        window = engine.crop(held, y, x, h, w)
        assert window.shape == (h, w) + img.shape[2:] and window.dtype == img.dtype
        assert engine.download(window).tobytes() == np.ascontiguousarray(img[y : y + h, x : x + w]).tobytes()
    # A grid of held tiles and arrays (uploaded on the way), like numpy.block.
    rows = [
        [engine.crop(held, 0, 0, 8, 10), img[:8, 10:30], engine.crop(held, 0, 30, 8, 4)],
        [img[8:, :]],
    ]
    whole = engine.assemble(rows)
    assert whole.shape == img.shape
    assert engine.download(whole).tobytes() == img.tobytes()
    # Every operation reads the assembled image as the array.
    assert repr(engine.extreme(whole, "brightest")) == repr(engine.extreme(img, "brightest"))
    # Windows outside the image, and tiles that do not fit, are refused.
    for bad in [(0, 30, 1, 5), (18, 0, 4, 1), (-1, 0, 1, 1), (0, 0, 1, 2**40)]:
        with pytest.raises(ValueError):
            engine.crop(held, *bad)
    with pytest.raises(ValueError, match="rows high"):
        engine.assemble([[img[:3], img[:4]]])
    with pytest.raises(ValueError, match="pixels wide"):
        engine.assemble([[img[:3]], [img[:3, :5]]])
    with pytest.raises(ValueError, match="no image"):
        engine.assemble([[]])
    with pytest.raises(TypeError):
        engine.assemble(held)
    other = np.zeros((2, 34, 4), np.uint8 if dtype != np.uint8 or channels != 4 else np.uint16)
    with pytest.raises(ValueError, match="one format"):
        engine.assemble([[img[:2]], [other]])


def test_histograms_of_held_rgba8(engine):
    img = random_image(np.uint8, 4, 17, 23, 9)
    held = engine.upload(img)
    assert engine.histogram_rgba(held).tobytes() == engine.histogram_rgba(img).tobytes()
    assert engine.histogram_luminance(held).tobytes() == engine.histogram_luminance(img).tobytes()
    mono = engine.upload(random_image(np.uint16, 1, 5, 6, 1))
    with pytest.raises(TypeError, match="RGBA8"):
        engine.histogram_rgba(mono)
