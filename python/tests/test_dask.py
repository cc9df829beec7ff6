"""clpix.dask against the single-image call, bit for bit: on a LocalCluster of two worker
processes (every operation and border mode, on an image of many chunks), and with the local
scheduler for layouts, edge cases and errors."""

from __future__ import annotations

import numpy as np
import pytest

da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")

import dask  # noqa: E402

import clpix  # noqa: E402
import clpix.dask as cd  # noqa: E402
import clpix._dask_engines as clpix_engines  # noqa: E402
from conftest import opencl_engine  # noqa: E402
from images import few_values, random_image, scene  # noqa: E402
from test_formats import random_image as format_image  # noqa: E402

BORDERS = ["clamp", "reflect", "wrap", "zero"]


def same(a, b):
    """Equal bit for bit (arrays, records, hits, statistics)."""
    if isinstance(a, np.ndarray):
        assert a.dtype == b.dtype and a.shape == b.shape
        if a.dtype == np.float32:
            np.testing.assert_array_equal(a.view(np.uint32), b.view(np.uint32))
        else:
            np.testing.assert_array_equal(a, b)
    else:
        assert a == b


def check_everything(img: np.ndarray, chunks, single: clpix.Engine, backend=None, radii=(1, 4)):
    """Every operation of clpix.dask on img in `chunks` equals `single`'s call."""
    d = da.from_array(img, chunks=chunks)
    kw = {"backend": backend}
    same(cd.extreme(d, "brightest", **kw), single.extreme(img, "brightest"))
    same(cd.extreme(d, "darkest", **kw), single.extreme(img, "darkest"))
    same(cd.luminance_stats(d, **kw), single.luminance_stats(img))
    same(cd.histogram_rgba(d, **kw), single.histogram_rgba(img))
    same(cd.histogram_luminance(d, **kw), single.histogram_luminance(img))
    for t in (0, 400, 900):
        same(cd.compact(d, t, **kw), single.compact(img, t))
        same(cd.compact(d, t, "luminance", **kw), single.compact(img, t, "luminance"))
    for order in ("scan", "luminance"):
        same(cd.compacted_image(d, 400, order, **kw).compute(), single.compacted_image(img, 400, order))
    for k, dist in [(7, 0.0), (12, 3.0), (5, 25.5), (3, float("inf"))]:
        same(cd.extremes(d, "brightest", k, dist, **kw), single.extremes(img, "brightest", k, dist))
        same(cd.extremes(d, "darkest", k, dist, **kw), single.extremes(img, "darkest", k, dist))
    same(cd.luminance(d).compute(), clpix.luminance(img))
    f32 = (img.astype(np.float32) - 100.0) / 3.0
    df32 = da.from_array(f32, chunks=chunks)
    for border in BORDERS:
        for radius in radii:
            blurred = single.gaussian_blur(img, radius, None, border)
            lazy = cd.gaussian_blur(d, radius, None, border, **kw)
            same(lazy.compute(), blurred)
            # Reductions of the lazy blur, computed in the blur's own tasks (every radius: its
            # halo; the others at one radius, the same tasks).
            same(cd.histogram_rgba(lazy, **kw), single.histogram_rgba(blurred))
            same(cd.extreme(lazy, "brightest", **kw), single.extreme(blurred, "brightest"))
            if radius == radii[0]:
                same(cd.histogram_luminance(lazy, **kw), single.histogram_luminance(blurred))
                same(cd.luminance_stats(lazy, **kw), single.luminance_stats(blurred))
                same(cd.compact(lazy, 400, "luminance", **kw), single.compact(blurred, 400, "luminance"))
        same(cd.gaussian_blur(df32, 3, 1.1, border, **kw).compute(), single.gaussian_blur(f32, 3, 1.1, border))


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(
        processes=True, n_workers=2, threads_per_worker=1, dashboard_address=None
    )
    with distributed.Client(cluster) as c:
        yield c
    cluster.close()


@pytest.mark.parametrize("backend", [None, "opencl"])
def test_cluster_equals_single_call(client, cpu, backend):
    if backend == "opencl":
        opencl_engine()  # skips, or fails under CLPIX_REQUIRE_OPENCL=1, without a device
    img = scene(150, 170, 12)
    img[60:64, 10:160] = 255  # a saturated bar across chunks: ties in scan order
    # 7 × 6 chunks of 23 × 29 pixels (the last ones smaller); radius 30 merges chunks,
    # radius 200 is larger than the image.
    check_everything(img, (23, 29, 4), cpu, backend, radii=(1, 6, 30, 200))
    kinds = client.run(lambda: cd.engine(backend).kind)
    assert len(kinds) == 2
    assert set(kinds.values()) == ({"opencl"} if backend == "opencl" else {clpix.default_engine().kind})


def test_cluster_every_format(client, cpu):
    """Records of every format travel between processes; float32 sums stay exact."""
    rng = np.random.default_rng(21)
    imgs = [
        rng.integers(0, 65536, (61, 47), dtype=np.uint16),
        rng.integers(0, 256, (61, 47, 3), dtype=np.uint8),
        (rng.normal(0, 1, (61, 47, 4)) * 10.0 ** rng.integers(-30, 30, (61, 47, 4))).astype(np.float32),
    ]
    for img in imgs:
        d = da.from_array(img, chunks=(13, 11) + img.shape[2:])
        for which in ("brightest", "darkest"):
            assert repr(cd.extreme(d, which)) == repr(cpu.extreme(img, which))
        assert repr(cd.luminance_stats(d)) == repr(cpu.luminance_stats(img))
        same(cd.histogram(d, 100, (0, 1000)), cpu.histogram(img, 100, (0, 1000)))
        same(cd.histogram_keys(d, 7, (3, 60000)), cpu.histogram_keys(img, 7, (3, 60000)))


def test_each_worker_keeps_one_engine(client):
    first = client.run(lambda: id(cd.engine()))
    d = da.from_array(scene(64, 64, 3), chunks=(16, 16, 4))
    cd.extreme(d, "brightest")
    assert client.run(lambda: id(cd.engine())) == first
    assert client.run(lambda: cd.engine() is clpix.default_engine()) == {w: True for w in first}


def test_cluster_blur_large_image_in_many_chunks(client, cpu):
    img = random_image(300, 260, 5)
    d = da.from_array(img, chunks=(64, 48, 4))
    for border in BORDERS:
        same(cd.gaussian_blur(d, 9, None, border).compute(), cpu.gaussian_blur(img, 9, None, border))


def test_one_device_per_worker(client, cpu):
    """Each worker takes its device from the plugin (worker n: devices[n % len]), keeps it for
    every task, and the results stay the single call's; use_device refuses a device that is not
    there."""
    opencl_engine()  # skips, or fails under CLPIX_REQUIRE_OPENCL=1, without a device
    devices = [d.index for d in clpix.devices()]
    chosen = [devices[-1], devices[0]]
    client.register_plugin(cd.one_device_per_worker(chosen))
    try:
        got = client.run(lambda dask_worker: (int(dask_worker.name), cd.engine().device.index))
        assert len(got) == 2
        for name, index in got.values():
            assert index == chosen[name % 2]
        assert all(client.run(lambda: cd.engine() is not clpix.default_engine()).values())
        img = scene(90, 70, 13)
        d = da.from_array(img, chunks=(30, 25, 4))
        assert cd.extreme(d, "brightest") == cpu.extreme(img, "brightest")
        same(cd.histogram_rgba(d), cpu.histogram_rgba(img))
        same(cd.gaussian_blur(d, 4).compute(), cpu.gaussian_blur(img, 4))
        engines = client.run(lambda: id(cd.engine()))
        assert client.run(lambda: id(cd.engine())) == engines
    finally:
        client.unregister_worker_plugin("clpix-one-device-per-worker")
        client.run(lambda: setattr(clpix_engines, "_device_engine", None))
    with pytest.raises(Exception, match="device"):
        cd.use_device(len(devices) + 5)
    assert cd.engine() is clpix.default_engine()


# --- the local scheduler ----------------------------------------------------------------


@pytest.fixture()
def local():
    with dask.config.set(scheduler="threads"):
        yield


@pytest.mark.parametrize(
    "make, chunks",
    [
        (lambda: few_values(31, 45, 2), (7, 9, 4)),  # ties everywhere
        (lambda: random_image(40, 33, 3), (40, 33, 4)),  # one chunk
        (lambda: random_image(1, 50, 4), (1, 7, 4)),  # one row
        (lambda: random_image(50, 1, 5), (6, 1, 4)),  # one column
        (lambda: scene(37, 41, 6), ((5, 20, 12), (1, 30, 10), 4)),  # uneven, 1-pixel chunks
        (lambda: scene(30, 30, 7), (10, 10, 2)),  # the channel axis chunked: rechunked
    ],
)
def test_local_equals_single_call(local, cpu, make, chunks):
    check_everything(make(), chunks, cpu, radii=(1, 2, 7, 45))


@pytest.mark.parametrize(
    "shape, chunks",
    [((37, 41), (9, 11)), ((30, 26), (30, 26)), ((25, 40), (25, 6)), ((44, 3), (5, 3))],
)
@pytest.mark.parametrize("held", [True, False], ids=["held", "numpy"])
def test_blur_on_a_device_equals_single_call(local, cpu, monkeypatch, shape, chunks, held):
    """On a GPU each chunk's padded block is assembled on the device, blurred there and cropped
    there (``Engine.assemble``, ``gaussian_blur_device``, ``Engine.crop``); the reductions of the
    lazy blur (histograms, extremes, statistics, compaction) run there too, the blur never read
    back. On a CPU device NumPy assembles it: both ways are run here on whatever OpenCL device
    there is."""
    from clpix import _dask_blur

    opencl_engine()  # the device, or a skip (a failure with CLPIX_REQUIRE_OPENCL=1)
    monkeypatch.setattr(_dask_blur, "_on_device", lambda e: held)
    img = random_image(*shape, 8)
    d = da.from_array(img, chunks=chunks + (4,))
    starts = (cd._offsets(d.chunks[0]), cd._offsets(d.chunks[1]))
    for border in BORDERS:
        for radius in (0, 1, 4, 13):
            blurred = cpu.gaussian_blur(img, radius, None, border)
            lazy = cd.gaussian_blur(d, radius, None, border, backend="opencl")
            assert _dask_blur.reduced_parts(lazy, cd._hist_part, ("rgba", "opencl"), starts) is not None
            same(lazy.compute(), blurred)
            kw = {"backend": "opencl"}
            same(cd.histogram_rgba(lazy, **kw), cpu.histogram_rgba(blurred))
            same(cd.histogram_luminance(lazy, **kw), cpu.histogram_luminance(blurred))
            same(cd.histogram(lazy, 7, (10, 250), **kw), cpu.histogram(blurred, 7, (10, 250)))
            same(cd.histogram_keys(lazy, 9, (0, 1023), **kw), cpu.histogram_keys(blurred, 9, (0, 1023)))
            for which in ("brightest", "darkest"):
                same(cd.extreme(lazy, which, **kw), cpu.extreme(blurred, which))
            same(cd.luminance_stats(lazy, **kw), cpu.luminance_stats(blurred))
            same(cd.compact(lazy, 300, **kw), cpu.compact(blurred, 300))
            for which, k, apart in (("brightest", 5, 4.0), ("darkest", 3, 0.0)):
                same(cd.extremes(lazy, which, k, apart, **kw), cpu.extremes(blurred, which, k, apart))
        # Every format's reductions of its blur (float32: the exact sum is not fused).
        for dtype, channels in ((np.uint16, 1), (np.float32, 1), (np.float32, 4), (np.uint8, 3)):
            f = format_image(dtype, channels, *shape, 3)
            df = da.from_array(f, chunks=chunks + f.shape[2:])
            blurred = cpu.gaussian_blur(f, 3, None, border)
            lazy = cd.gaussian_blur(df, 3, None, border, backend="opencl")
            same(cd.extreme(lazy, "brightest", **kw), cpu.extreme(blurred, "brightest"))
            same(cd.luminance_stats(lazy, **kw), cpu.luminance_stats(blurred))
            same(cd.histogram(lazy, 5, (-2.0, 300.0), **kw), cpu.histogram(blurred, 5, (-2.0, 300.0)))
            same(cd.compact(lazy, 1, **kw), cpu.compact(blurred, 1))
            same(cd.extremes(lazy, "brightest", 4, 3.0, **kw), cpu.extremes(blurred, "brightest", 4, 3.0))
    # Not a lazy blur, or one of another backend: computed from the pixels.
    assert _dask_blur.reduced_parts(d, cd._hist_part, ("rgba", "opencl"), starts) is None
    assert _dask_blur.reduced_parts(cd.gaussian_blur(d, 2), cd._hist_part, ("rgba", "opencl"), starts) is None


def test_select_k_with_far_distances(local, cpu):
    # Distances that exclude many pixels: each chunk must send enough candidates.
    img = few_values(48, 52, 9)
    d = da.from_array(img, chunks=(8, 8, 4))
    for k, dist in [(30, 2.0), (20, 6.0), (9, 14.2), (4, 60.0), (200, 1.5)]:
        same(cd.extremes(d, "brightest", k, dist), cpu.extremes(img, "brightest", k, dist))
        same(cd.extremes(d, "darkest", k, dist), cpu.extremes(img, "darkest", k, dist))


def test_neighbour_bound_counts_the_disc():
    # The offsets (dx, dy) ≠ 0 with dx² + dy² < d², counted by brute force.
    for d in [0.5, 1.0, 1.5, 2.0, 2.3, 5.0, 7.9, 12.0]:
        r = int(d) + 1
        dy, dx = np.mgrid[-r : r + 1, -r : r + 1]
        brute = int(((dx * dx + dy * dy) < d * d).sum()) - 1
        assert cd._neighbours(d * d, 1000, 1000) == brute, d
    assert cd._neighbours(100.0**2, 10, 10) is None  # every two pixels are closer


def test_numpy_input_and_empty_images(local, cpu):
    img = scene(20, 24, 1)
    same(cd.extreme(img, "brightest"), cpu.extreme(img, "brightest"))
    for shape in [(0, 8, 4), (8, 0, 4)]:
        empty = da.zeros(shape, dtype=np.uint8, chunks=(4, 4, 4))
        with pytest.raises(ValueError, match="needs at least one pixel"):
            cd.extreme(empty, "brightest")
        with pytest.raises(ValueError, match="needs at least one pixel"):
            cd.luminance_stats(empty)
        same(cd.histogram_rgba(empty), np.zeros((4, 256), np.uint32))
        same(cd.histogram_luminance(empty), np.zeros(1024, np.uint32))
        assert len(cd.compact(empty, 0)) == 0 and len(cd.extremes(empty, "brightest", 3)) == 0
        assert cd.gaussian_blur(empty, 3).compute().shape == shape
        assert cd.compacted_image(empty, 3).compute().shape == shape


def test_exclusive_scan(local, cpu):
    values = np.random.default_rng(4).integers(0, 2**32, 5000, dtype=np.uint32)
    for chunks in (5000, 777, 1):
        if chunks == 1:
            values = values[:60]
        got = cd.exclusive_scan(da.from_array(values, chunks=chunks)).compute()
        same(got, cpu.exclusive_scan(values))
    assert cd.exclusive_scan(da.zeros(0, dtype=np.uint32, chunks=5)).compute().shape == (0,)


def test_laziness(local):
    d = da.from_array(scene(40, 40, 2), chunks=(10, 10, 4))
    for out in (cd.gaussian_blur(d, 3), cd.luminance(d), cd.compacted_image(d, 100)):
        assert isinstance(out, da.Array)
        assert out.chunks[:2] == d.chunks[:2]


def test_errors(local):
    d = da.from_array(random_image(10, 10, 1), chunks=(5, 5, 4))
    with pytest.raises(TypeError, match="got dtype int16"):
        cd.extreme(d.astype(np.int16), "brightest")
    with pytest.raises(TypeError, match="got dtype int16"):
        cd.compacted_image(d.astype(np.int16), 3)  # every format (tests/test_extremes_formats.py)
    with pytest.raises(ValueError, match="RGB8, uint8 only"):
        cd.compacted_image(d[..., :3].astype(np.uint16), 3)
    with pytest.raises(TypeError, match="dask.array.Array"):
        cd.extreme([[1, 2, 3, 4]], "brightest")
    with pytest.raises(ValueError, match="invalid threshold = 1024"):
        cd.compact(d, 1024)
    with pytest.raises(ValueError, match="invalid order"):
        cd.compacted_image(d, 3, "sideways")
    with pytest.raises(ValueError, match="invalid sigma"):
        cd.gaussian_blur(d, 3, sigma=-1.0)
    with pytest.raises(ValueError, match="invalid border"):
        cd.gaussian_blur(d, 3, border="mirror")
    with pytest.raises(ValueError, match="invalid min_distance"):
        cd.extremes(d, "brightest", 3, -2.0)
    with pytest.raises(ValueError, match="invalid which"):
        cd.extreme(d, "top")
    with pytest.raises(ValueError, match="invalid which"):
        cd.extremes(d, "top", 3)
    with pytest.raises(ValueError, match="invalid order"):
        cd.compact(d, 3, "sideways")
    with pytest.raises(ValueError, match="unknown"):
        cd.extreme(d[d[:, 0, 0] > 0], "brightest")
    with pytest.raises(TypeError, match="uint32"):
        cd.exclusive_scan(da.zeros(4, dtype=np.int64, chunks=2))
