"""clpix's CPU blur against OpenCV's, call by call in one process.

    python bench/vs_opencv.py                         # 4096², 15 pairs, every case
    python bench/vs_opencv.py --size 2048 --pairs 31 --cases u2,d2

Each case calls clpix (`Engine("cpu")`) and OpenCV alternately, the order swapped every pair,
and reports each side's median and the median and quartiles of the per-pair ratio (OpenCV's
time over clpix's): on a shared machine whose speed drifts between runs, a ratio of two calls
made back to back is steadier than one of two medians taken minutes apart.

Cases: `u<w>` RGBA8 into a new array, `d<w>` RGBA8 into a reused `out=` array, `f<w>` float32
into a new array (radius w, sigma w / 2, clamped border: OpenCV's BORDER_REPLICATE), and
`k<d>` the darkest 1024 pixels at least d apart against the brightest (both clpix, on
`--backend`: the ratio is darkest over brightest); the mono frames: `b8`/`b16` the brightest
of a uint8/uint16 frame against `cv2.minMaxLoc`, `h16` the 65,536-bin histogram of a uint16
frame against `cv2.calcHist` and `n16` against `np.bincount`; `g8`/`g16`/`gf` the blur of a
uint8/uint16/float32 frame into a new array against `cv2.GaussianBlur` (BORDER_REPLICATE), one
row each for w = 2, 8 and 25 (sigma w / 2). OpenCV runs with its default threads, clpix
with rayon's.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

import clpix


def timed(call) -> float:
    t = time.perf_counter()
    call()
    return time.perf_counter() - t


def pair_up(ours, theirs, pairs: int):
    """Times of `ours` and `theirs` made back to back, the first of each pair alternating."""
    ours()
    theirs()
    a, b = [], []
    for i in range(pairs):
        if i % 2:
            a.append(timed(ours))
            b.append(timed(theirs))
        else:
            b.append(timed(theirs))
            a.append(timed(ours))
    return a, b


# The radii of the mono blur cases (g8, g16, gf), a row each.
MONO_RADII = (2, 8, 25)


def mono_blurs(engine, cv2, case: str, m8: np.ndarray, m16: np.ndarray):
    """The rows of a mono blur case: (label, clpix, OpenCV) for each radius of MONO_RADII."""
    m = {"g8": m8, "g16": m16, "gf": m8.astype(np.float32) / 255}[case]
    rows = []
    for w in MONO_RADII:
        size = (2 * w + 1, 2 * w + 1)
        rows.append(
            (
                f"{case} w={w}",
                lambda w=w: engine.gaussian_blur(m, w, sigma=w / 2),
                lambda w=w, size=size: cv2.GaussianBlur(m, size, w / 2, borderType=cv2.BORDER_REPLICATE),
            )
        )
    return rows


def mono_calls(engine, cv2, case: str, size: int):
    """The mono-frame cases: (clpix, other), a list of (label, clpix, other) for the blurs, or
    None for another case."""
    rng = np.random.default_rng(2)
    m8 = rng.integers(0, 256, (size, size), dtype=np.uint8)
    m16 = rng.integers(0, 65536, (size, size), dtype=np.uint16)
    if case in ("g8", "g16", "gf"):
        return mono_blurs(engine, cv2, case, m8, m16)
    if case in ("b8", "b16"):
        m = m8 if case == "b8" else m16
        return (lambda: engine.extreme(m, "brightest"), lambda: cv2.minMaxLoc(m))
    if case == "h16":
        return (
            lambda: engine.histogram_keys(m16, 65536, (0, 65535)),
            lambda: cv2.calcHist([m16], [0], None, [65536], [0, 65536]),
        )
    if case == "n16":
        return (
            lambda: engine.histogram_keys(m16, 65536, (0, 65535)),
            lambda: np.bincount(m16.ravel(), minlength=65536),
        )
    return None


def calls(engine, cv2, case: str, img: np.ndarray, imgf: np.ndarray):
    mono = mono_calls(engine, cv2, case, img.shape[0])
    if mono is not None:
        return mono
    kind, n = case[0], int(case[1:])
    if kind == "k":
        return (
            lambda: engine.extremes(img, "brightest", 1024, n),
            lambda: engine.extremes(img, "darkest", 1024, n),
        )
    src = imgf if kind == "f" else img
    size = (2 * n + 1, 2 * n + 1)
    replicate = cv2.BORDER_REPLICATE
    if kind == "d":
        ours_out, cv_out = np.empty_like(src), np.empty_like(src)
        return (
            lambda: engine.gaussian_blur(src, n, sigma=n / 2, out=ours_out),
            lambda: cv2.GaussianBlur(src, size, n / 2, dst=cv_out, borderType=replicate),
        )
    if kind not in "uf":
        raise SystemExit(f"unknown case {case!r}: u<w>, d<w>, f<w>, k<d>, b8, b16, h16, n16, g8, g16 or gf")
    return (
        lambda: engine.gaussian_blur(src, n, sigma=n / 2),
        lambda: cv2.GaussianBlur(src, size, n / 2, borderType=replicate),
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--size", type=int, default=4096)
    ap.add_argument("--pairs", type=int, default=15)
    ap.add_argument("--cases", default="u2,d2,u8,u25,f2,f8,f25,k20")
    ap.add_argument("--backend", default="cpu", help="clpix's engine (an OpenCL one for k<d>)")
    args = ap.parse_args()
    import cv2  # opencv-python-headless: only this benchmark needs it

    engine = clpix.Engine(args.backend)
    rng = np.random.default_rng(1)
    img = rng.integers(0, 256, (args.size, args.size, 4), dtype=np.uint8)
    imgf = img.astype(np.float32) / 255
    print(f"{args.size}² RGBA, {args.pairs} pairs; clpix {engine.backend}; OpenCV {cv2.__version__} ({cv2.getNumThreads()} threads)")
    print("| case | clpix median | other median | ratio median | ratio quartiles |")
    print("|---|---|---|---|---|")
    for case in args.cases.split(","):
        rows = calls(engine, cv2, case, img, imgf)
        for label, ours, theirs in rows if isinstance(rows, list) else [(case, *rows)]:
            a, b = pair_up(ours, theirs, args.pairs)
            ratios = [y / x for x, y in zip(a, b)]
            q = statistics.quantiles(ratios, n=4)
            ms = lambda v: f"{statistics.median(v) * 1e3:.1f} ms"  # noqa: E731
            print(f"| {label} | {ms(a)} | {ms(b)} | {statistics.median(ratios):.2f} | {q[0]:.2f}–{q[2]:.2f} |")


if __name__ == "__main__":
    main()
