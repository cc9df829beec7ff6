"""Blobs of float32 images (``Engine.blobs``, ``clpix.dask.blobs``) against a plain Python
reference of docs/SPEC.md ("Blobs", f32 weights): the weights' exponent by a walk over every
exponent in exact rationals, each weight ``max(⌊k·2^s⌋ − ⌊b·2^s⌋, 1)`` in Python integers, the
sums of the records their exact sums times ``2^-s``; awkward keys (NaN, −inf, ±0, denormals,
huge) in mono and RGBA; Dask's chunks equal to the single call across seams."""

from __future__ import annotations

import math
from fractions import Fraction

import dask
import dask.array as da
import numpy as np
import pytest

import clpix
import clpix.dask as cd
import format_reference as fref
from test_blobs import MASKS, centroid, components
from test_formats import special_f32


def floor_scaled(v: float, s: int) -> int:
    return math.floor(Fraction(v) * Fraction(2) ** s)


def exponent(largest: float, background: float) -> int:
    """The largest s in -200..200 whose span fits 32 bits (a walk down, exact rationals)."""
    for s in range(200, -201, -1):
        if floor_scaled(largest, s) - floor_scaled(background, s) <= 2**32 - 1:
            return s
    raise AssertionError("no exponent")


def reference(img, t, connectivity=8, background=0.0):
    """(labels, stats as tuples of the record's fields) of a float32 image, in plain Python."""
    keys = fref.keys(img).astype(np.float64).tolist()
    h, w = img.shape[:2]
    t, background = float(np.float32(t)), float(np.float32(background))
    found = components(keys, t, connectivity)
    everything = [keys[y][x] for c in found for y, x in c]
    s = exponent(max(everything), background) if everything else 0
    base = floor_scaled(background, s)
    labels = [[0] * w for _ in range(h)]
    stats = []
    for n, pixels in enumerate(found, 1):
        ks = [(keys[y][x], y, x) for y, x in sorted(pixels)]
        wts = [max(floor_scaled(k, s) - base, 1) for k, _, _ in ks]
        for y, x in pixels:
            labels[y][x] = n
        total = sum(wts)
        wx = sum(wt * x for wt, (_, _, x) in zip(wts, ks))
        wy = sum(wt * y for wt, (_, y, _) in zip(wts, ks))
        peak = min(ks, key=lambda p: (-p[0], p[1], p[2]))
        first = min(pixels)
        stats.append((
            n, len(pixels),
            min(x for _, x in pixels), min(y for y, _ in pixels),
            max(x for _, x in pixels), max(y for y, _ in pixels),
            first[1], math.ldexp(float(total), -s), math.ldexp(float(total), -s),
            centroid(wx, total), centroid(wy, total),
            peak[2], peak[1], peak[0] + 0.0,
        ))
    return labels, stats, s


def finite_special(h, w, seed, channels):
    return special_f32(h, w, seed, channels, infinite=False)


def check(engine, img, t, connectivity=8, background=0.0):
    labels, stats = engine.blobs(img, t, connectivity, background=background)
    want_labels, want_stats, s = reference(img, t, connectivity, background)
    assert stats.dtype == clpix.BLOB_F32_DTYPE
    assert stats.tolist() == want_stats
    assert labels.tolist() == want_labels
    # The exponent fixed to the one found: the same; one more: an error (weights too wide).
    if want_stats:
        fixed = engine.blobs(img, t, connectivity, background=background, weight_exponent=s)
        assert fixed[1].tobytes() == stats.tobytes()
        with pytest.raises(ValueError, match="exponent"):
            engine.blobs(img, t, connectivity, background=background, weight_exponent=s + 1)


@pytest.mark.parametrize("connectivity", [4, 8])
@pytest.mark.parametrize("t, background", [(0.0, 0.0), (-0.5, -1e30), (0.6, 0.6), (-3e38, -3e38)])
def test_mono_special_values(engine, connectivity, t, background):
    for seed in range(3):
        check(engine, finite_special(23, 31, seed, 1), t, connectivity, background)


@pytest.mark.parametrize("connectivity", [4, 8])
def test_masks_and_rgba(engine, connectivity):
    rng = np.random.default_rng(3)
    for name in ("spiral", "comb", "random 0.45"):
        mask = MASKS[name]
        img = np.where(mask, rng.normal(50, 20, mask.shape) ** 2 + 1, -rng.random(mask.shape))
        check(engine, img.astype(np.float32), 0.0, connectivity, -2.5)
    rgba = finite_special(9, 11, 5, 4)
    check(engine, rgba, 0.0, connectivity, -1.0)
    check(engine, np.ascontiguousarray(rgba[:, ::2]), -1.0, connectivity, -1.0)


def test_dtype_and_module_level():
    img = np.zeros((5, 6), np.float32)
    img[1:3, 2:4] = [[1.0, 2.0], [0.5, 1e-40]]
    labels, stats = clpix.blobs(img, 0.0, 4)
    assert clpix.BLOB_F32_DTYPE.names == clpix.BLOB_DTYPE.names
    assert clpix.BLOB_F32_DTYPE["peak_key"] == np.float32
    assert clpix.BLOB_F32_DTYPE["weight_sum"] == np.float64
    assert stats["peak_key"].tolist() == [2.0] and stats["area"].tolist() == [4]
    assert stats["weight_sum"][0] == pytest.approx(3.5)
    assert clpix.blob_weight_exponent(2.0, 0.0) == 30
    assert "BLOB_F32_DTYPE" in clpix.__all__ and "blob_weight_exponent" in clpix.__all__


def test_errors(cpu):
    img = np.ones((3, 4), np.float32)
    img[1, 1] = np.inf
    with pytest.raises(ValueError, match="inf"):
        cpu.blobs(img, 0.5)
    assert len(cpu.blobs(img, np.inf)[1]) == 0  # nothing above +inf
    ok = np.ones((3, 4), np.float32)
    with pytest.raises(ValueError, match="background"):
        cpu.blobs(ok, 0.5, background=0.75)
    with pytest.raises(ValueError, match="background"):
        cpu.blobs(ok, 0.5, background=float("nan"))
    with pytest.raises(TypeError, match="background"):
        cpu.blobs(ok, 0.5, background="low")
    with pytest.raises(TypeError, match="background"):
        cpu.blobs(np.ones((3, 4), np.uint8), 0, background=0.5)
    with pytest.raises(ValueError, match="exponent"):
        cpu.blobs(np.ones((3, 4), np.uint8), 0, weight_exponent=3)
    with pytest.raises(ValueError):
        clpix.blob_weight_exponent(float("inf"), 0.0)


@pytest.fixture
def local():
    with dask.config.set(scheduler="threads"):
        yield


@pytest.mark.parametrize("connectivity", [4, 8])
def test_dask_equals_the_single_call(local, cpu, connectivity):
    rng = np.random.default_rng(7)
    mono = finite_special(30, 41, 8, 1)
    mono[rng.random(mono.shape) < 0.3] = np.nan
    spots = np.where(MASKS["random 0.6"], rng.random(MASKS["random 0.6"].shape) * 1e6, -1.0)
    rgba = finite_special(12, 14, 9, 4)
    for img, t, bg in [(mono, 0.0, -1.0), (spots.astype(np.float32), 0.0, 0.0), (rgba, -1.0, -2.0)]:
        tail = img.shape[2:]
        want_labels, want_stats = cpu.blobs(img, t, connectivity, background=bg)
        for chunks in [(7, 5), (2, 3), (13, 100)]:
            d = da.from_array(img, chunks=chunks + tail)
            labels, stats = cd.blobs(d, t, connectivity, background=bg, backend="cpu")
            assert stats.dtype == clpix.BLOB_F32_DTYPE
            assert stats.tobytes() == want_stats.tobytes()
            np.testing.assert_array_equal(labels.compute(), want_labels)


def test_dask_errors_and_no_foreground(local, cpu):
    img = np.ones((6, 6), np.float32)
    img[4, 5] = np.inf
    with pytest.raises(ValueError):
        cd.blobs(da.from_array(img, chunks=3), 0.0, backend="cpu")
    none = np.full((6, 6), np.nan, np.float32)
    labels, stats = cd.blobs(da.from_array(none, chunks=3), 0.0, backend="cpu")
    assert len(stats) == 0 and stats.dtype == clpix.BLOB_F32_DTYPE
    assert not labels.compute().any()


def test_centroids_of_float32(engine):
    """Windows of float32 keys: weights ``max(⌊k·2^s⌋ − ⌊b·2^s⌋, 0)``, ``s`` from the
    windows' largest key, NaN and −inf weighing 0; the sums' unit in float64."""
    img = finite_special(19, 23, 4, 1)
    img[3, 4] = -np.inf
    pts = np.array([[0, 0], [22, 18], [10, 9], [4, 3]])
    for radius, bg in [(0, 0.0), (2, -1.0), (3, 0.5)]:
        got = engine.centroids(img, pts, radius, bg)
        assert got.dtype == clpix.CENTROID_F32_DTYPE
        b = float(np.float32(bg))
        h, w = img.shape
        windows = [
            [(y, x) for y in range(max(py - radius, 0), min(py + radius, h - 1) + 1)
             for x in range(max(px - radius, 0), min(px + radius, w - 1) + 1)]
            for px, py in pts.tolist()
        ]
        keys = [float(img[y, x]) for win in windows for y, x in win]
        finite = [k for k in keys if not math.isnan(k)]
        top = max(finite)
        s = exponent(top, b) if top > b else 0
        for (px, py), win, rec in zip(pts.tolist(), windows, got.tolist()):
            wts = []
            for y, x in win:
                k = float(img[y, x])
                ok = top > b and math.isfinite(k)
                wts.append((max(floor_scaled(k, s) - floor_scaled(b, s), 0) if ok else 0, x, y))
            total = sum(t for t, _, _ in wts)
            if total:
                cx = centroid(sum(t * x for t, x, _ in wts), total)
                cy = centroid(sum(t * y for t, _, y in wts), total)
            else:
                cx, cy = float(px), float(py)
            assert rec == (cx, cy, math.ldexp(float(total), -s))
    bad = img.copy()
    bad[9, 10] = np.inf
    with pytest.raises(ValueError):
        engine.centroids(bad, pts, 1)
    with pytest.raises(TypeError, match="background"):
        engine.centroids(img, pts, 1, "low")
