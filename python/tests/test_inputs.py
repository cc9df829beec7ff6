"""Layouts (contiguous, padded rows, views, negative and odd strides), errors, threads."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

import clpix
import reference as ref
from images import random_image, scene


def layouts(img: np.ndarray):
    """The same pixels in many memory layouts."""
    h, w, _ = img.shape
    wide = np.zeros((h, w + 7, 4), np.uint8)
    wide[:, 3 : 3 + w] = img
    yield "padded rows (a view into a wider array)", wide[:, 3 : 3 + w]
    tall = np.zeros((2 * h, w, 4), np.uint8)
    tall[::2] = img
    yield "every other row", tall[::2]
    yield "flipped rows", np.flipud(np.flipud(img).copy())
    yield "flipped columns", np.fliplr(np.fliplr(img).copy())
    yield "Fortran order", np.asfortranarray(img)
    yield "channel-reversed view", img[..., ::-1].copy()[..., ::-1]
    yield "transposed copy", np.ascontiguousarray(img.transpose(1, 0, 2)).transpose(1, 0, 2)
    sparse = np.zeros((h, w, 8), np.uint8)
    sparse[..., ::2] = img
    yield "channels two bytes apart", sparse[..., ::2]
    readonly = img.copy()
    readonly.setflags(write=False)
    yield "read-only", readonly
    yield "from bytes", np.frombuffer(img.tobytes(), np.uint8).reshape(img.shape)


@pytest.mark.parametrize("name, view", list(layouts(scene(29, 43, 9))), ids=lambda v: v if isinstance(v, str) else "")
def test_layouts_give_the_same_results(engine, name, view):
    img = np.ascontiguousarray(view)
    assert not np.shares_memory(img, view) or view.flags.c_contiguous
    assert engine.extreme(view, "brightest") == engine.extreme(img, "brightest")
    assert engine.extreme(view, "darkest") == engine.extreme(img, "darkest")
    assert engine.luminance_stats(view) == engine.luminance_stats(img)
    np.testing.assert_array_equal(engine.histogram_rgba(view), ref.histogram_rgba(img))
    np.testing.assert_array_equal(engine.compact(view, 200), engine.compact(img, 200))
    np.testing.assert_array_equal(engine.extremes(view, "brightest", 5, 3.0), engine.extremes(img, "brightest", 5, 3.0))
    np.testing.assert_array_equal(engine.gaussian_blur(view, 4, None, "reflect"), ref.blur_u8(img, 4, None, "reflect"))
    np.testing.assert_array_equal(engine.compacted_image(view, 200), ref.compacted_image(img, 200, False))
    np.testing.assert_array_equal(clpix.luminance(view), ref.luminance(img))


def test_strided_f32_and_u32(engine):
    img = (np.random.default_rng(3).random((11, 14, 4)) * 10).astype(np.float32)
    wide = np.zeros((11, 20, 4), np.float32)
    wide[:, 2:16] = img
    np.testing.assert_array_equal(engine.gaussian_blur(wide[:, 2:16], 3), ref.blur_f32(img, 3))
    values = np.arange(40, dtype=np.uint32)
    np.testing.assert_array_equal(engine.exclusive_scan(values[::3]), ref.exclusive_scan(values[::3]))


def test_input_is_not_modified(engine):
    img = scene(20, 30, 4)
    before = img.copy()
    engine.gaussian_blur(img, 3)
    engine.compacted_image(img, 100, "luminance")
    np.testing.assert_array_equal(img, before)
    # A C-contiguous float32 image is read in place: still not written.
    f = img.astype(np.float32) / 7
    f_before = f.copy()
    engine.gaussian_blur(f, 3)
    engine.gaussian_blur(f, 3, out=np.empty_like(f))
    np.testing.assert_array_equal(f.view(np.uint32), f_before.view(np.uint32))


def test_results_own_their_memory(engine):
    img = random_image(8, 9, 1)
    out = engine.gaussian_blur(img, 1)
    assert not np.shares_memory(out, img)
    out[:] = 0  # writable
    recs = engine.compact(img, 0)
    recs["x"] += 1  # writable records


BAD_IMAGES = [
    ([[1, 2, 3, 4]], TypeError, "numpy.ndarray"),
    (np.zeros((4, 4, 3), np.uint8), ValueError, r"shape \(H, W, 4\)"),
    (np.zeros((4, 4), np.uint8), ValueError, r"shape \(H, W, 4\)"),
    (np.zeros((2, 4, 4, 4), np.uint8), ValueError, r"shape \(H, W, 4\)"),
    (np.zeros((4, 4, 4), np.float64), TypeError, "dtype uint8"),
    (np.zeros((4, 4, 4), np.int8), TypeError, "dtype uint8"),
    (np.zeros((4, 4, 4), np.uint16), TypeError, "dtype uint8"),
]


@pytest.mark.parametrize("img, exc, match", BAD_IMAGES)
def test_bad_images(cpu, img, exc, match):
    # The RGBA8 operations (extreme, extremes, luminance_stats, the histograms with bins per
    # call, compact and compacted_image take every format: tests/test_formats.py,
    # tests/test_compact_formats.py, tests/test_extremes_formats.py).
    for op in (cpu.histogram_rgba, cpu.histogram_luminance, clpix.luminance):
        with pytest.raises(exc, match=match):
            op(img)


def test_bad_parameters(engine):
    img = random_image(5, 6, 2)
    cases = [
        (lambda: engine.compact(img, 1024), "invalid threshold = 1024: 0..=1023"),
        (lambda: engine.compact(img, -1, "luminance"), "invalid threshold = -1"),
        (lambda: engine.compacted_image(img, 5000), "invalid threshold = 5000"),
        (lambda: engine.compacted_image(img, 5, order="sideways"), "invalid order"),
        (lambda: engine.gaussian_blur(img, 3, sigma=0.0), "invalid sigma = 0"),
        (lambda: engine.gaussian_blur(img, 3, sigma=float("nan")), "invalid sigma = NaN"),
        (lambda: engine.gaussian_blur(img, 2, border="mirror"), "invalid border"),
        (lambda: engine.gaussian_blur(img, -1), "invalid radius = -1"),
        (lambda: engine.gaussian_blur(img, clpix.MAX_RADIUS + 1), "invalid radius = 1048577"),
        (lambda: engine.extremes(img, "brightest", 3, -1.0), "invalid min_distance = -1"),
        (lambda: engine.extremes(img, "darkest", 3, float("nan")), "invalid min_distance = NaN"),
        (lambda: engine.extremes(img, "brightest", -2, 1.0), "invalid k = -2"),
        (lambda: engine.extreme(img, "brighest"), 'invalid which = "brighest"'),
        (lambda: engine.extremes(img, "lightest", 2), 'invalid which = "lightest"'),
        (lambda: engine.compact(img, 5, "sideways"), "invalid order"),
    ]
    for call, message in cases:
        with pytest.raises(ValueError) as info:
            call()
        assert message in str(info.value)


def test_bad_blur_and_scan_inputs(cpu):
    with pytest.raises(TypeError, match="uint8, uint16 or float32 .*got dtype float64"):
        cpu.gaussian_blur(np.zeros((3, 3, 4), np.float64), 1)
    with pytest.raises(TypeError, match="dtype uint32"):
        cpu.exclusive_scan(np.arange(4, dtype=np.int64))
    with pytest.raises(ValueError, match="1-D"):
        cpu.exclusive_scan(np.zeros((2, 2), np.uint32))
    with pytest.raises(TypeError, match="numpy.ndarray"):
        cpu.exclusive_scan([1, 2, 3])


def test_bad_engines():
    with pytest.raises(ValueError, match="invalid backend"):
        clpix.Engine("cuda")
    with pytest.raises(ValueError, match="device"):
        clpix.Engine("cpu", device=0)
    with pytest.raises(ValueError, match="no OpenCL device matches"):
        clpix.Engine("opencl", device="no such device name")
    with pytest.raises(TypeError, match="device must be"):
        clpix.Engine("opencl", device=1.5)


def test_engine_properties(engine):
    assert engine.kind in ("cpu", "opencl")
    assert engine.backend.startswith("CPU: rayon" if engine.kind == "cpu" else "OpenCL: ")
    assert (engine.device is None) == (engine.kind == "cpu")
    assert engine.backend in repr(engine)
    if engine.kind == "opencl":
        d = engine.device
        assert d.name in engine.backend and d.compute_units > 0
        assert any(x.name == d.name for x in clpix.devices())
        assert clpix.Engine("opencl", device=d).device.name == d.name
        assert clpix.Engine("auto", device=d.name[:5]).kind == "opencl"


def test_records(cpu):
    img = np.zeros((3, 4, 4), np.uint8)
    img[2, 1] = (9, 200, 30, 77)
    h = cpu.extreme(img, "brightest")
    assert (h.x, h.y, h.rgba) == (1, 2, (9, 200, 30, 77))
    assert h == clpix.Hit(1, 2, h.luminance, (9, 200, 30, 77)) and hash(h) == hash(clpix.Hit(*[1, 2, h.luminance, (9, 200, 30, 77)]))
    assert "Hit(x=1, y=2" in repr(h)
    import pickle

    assert pickle.loads(pickle.dumps(h)) == h
    s = cpu.luminance_stats(img)
    assert pickle.loads(pickle.dumps(s)) == s and s.mean == s.sum / 12
    recs = cpu.compact(img, 0)
    assert recs.dtype.names == ("x", "y", "luminance", "rgba") and recs.dtype.itemsize == 14
    assert recs["rgba"].shape == (1, 4) and recs[0]["luminance"] == h.luminance


def test_the_gil_is_released(cpu):
    """A Python thread keeps running while clpix blurs on another."""
    img = scene(1500, 1500, 1)
    done = threading.Event()

    def blur():
        for _ in range(3):
            cpu.gaussian_blur(img, 25)
        done.set()

    t = threading.Thread(target=blur)
    t.start()
    spins = 0
    start = time.perf_counter()
    while not done.is_set():
        spins += 1
    elapsed = time.perf_counter() - start
    t.join()
    # Holding the GIL, the blur would leave this loop a few 5 ms switch intervals at most.
    assert elapsed > 0.05
    assert spins > 10_000, (spins, elapsed)


def test_threads_share_an_engine(engine):
    imgs = [scene(50, 60, s) for s in range(6)]
    want = [ref.brightest(i) for i in imgs]
    got = [None] * len(imgs)

    def run(i):
        got[i] = engine.extreme(imgs[i], "brightest")

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(imgs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert [(h.x, h.y, h.luminance, h.rgba) for h in got] == want
