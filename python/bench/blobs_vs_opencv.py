"""clpix's CPU blobs against OpenCV's and scikit-image's, call by call in one process.

    python bench/blobs_vs_opencv.py                   # 4096², median of 5 after a warm-up
    python bench/blobs_vs_opencv.py --size 1024 --runs 3 --images spots,spiral
    python bench/blobs_vs_opencv.py --checksums --size 8192   # the images' checksums only

Issue 54's images, made here exactly as benches/anchors/blobs_anchor.cu makes them (NPP's
anchor; compare the `checksum` lines): `spots` (2,000 Gaussian spots of radius 3-15 on noise
0..40, threshold 100), `noise` (uniform 0..255, threshold 127: about half the pixels), `spiral`
(one image-wide spiral of width 1 with gaps of 1, threshold 127). Every call sees the mono8 image
and the threshold (the foreground: keys strictly above it), 8-connected:

- clpix: `Engine("cpu").blobs(img, threshold)`, labels and statistics (rayon's threads);
- OpenCV: `cv2.threshold` (THRESH_BINARY, the same foreground), `cv2.connectedComponentsWithStats`
  (connectivity 8, CV_32S) on its mask, and the two in one call, with `cv2.setNumThreads(2)`
  (OpenCV's centroids are unweighted; clpix's are intensity-weighted);
- scikit-image: `img > threshold`, `skimage.measure.label(mask, connectivity=2)`, `regionprops(
  labels, intensity_image=img)` with every region's weighted centroid read (so it is computed).

Each round calls every side once, the order rotated round by round; each side's median is taken
over `--runs` rounds after one untimed round. A side whose timed calls pass `--budget` seconds
stops early (scikit-image on `noise` has hundreds of thousands of regions): the `runs` column says
how many calls its median has. The ratio is the peer's median over clpix's (above 1: clpix is
faster); the issue's targets are 1.5 against OpenCV's threshold + labelling and 5 against
scikit-image. A missing side (clpix without `blobs`, OpenCV or scikit-image not installed) is
a row that says so; the others still run.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

# splitmix64, counter-based: rnd(seed, i) is output i of a splitmix64 generator seeded with seed.
GOLDEN = np.uint64(0x9E3779B97F4A7C15)
MIX1 = np.uint64(0xBF58476D1CE4E5B9)
MIX2 = np.uint64(0x94D049BB133111EB)
SEED_SPOT_NOISE, SEED_SPOTS, SEED_NOISE = 1, 2, 3
SPOTS = 2000
THRESHOLDS = {"spots": 100, "noise": 127, "spiral": 127}
CHUNK = 1 << 22


def rnd(seed: int, idx: np.ndarray) -> np.ndarray:
    """Output idx (a uint64 array) of splitmix64 seeded with seed, wrapping like C's uint64_t."""
    with np.errstate(over="ignore"):
        z = np.uint64(seed) + (idx + np.uint64(1)) * GOLDEN
        z = (z ^ (z >> np.uint64(30))) * MIX1
        z = (z ^ (z >> np.uint64(27))) * MIX2
        return z ^ (z >> np.uint64(31))


def below(seed: int, start: int, count: int, n: int) -> np.ndarray:
    """(rnd(seed, i) >> 32) mod n for i in start..start + count, as int64."""
    out = np.empty(count, dtype=np.int64)
    for a in range(0, count, CHUNK):
        b = min(count, a + CHUNK)
        idx = np.arange(start + a, start + b, dtype=np.uint64)
        out[a:b] = ((rnd(seed, idx) >> np.uint64(32)) % np.uint64(n)).astype(np.int64)
    return out


def spots(side: int) -> np.ndarray:
    img = below(SEED_SPOT_NOISE, 0, side * side, 41).astype(np.uint8).reshape(side, side)
    p = below(SEED_SPOTS, 0, 4 * SPOTS, 1 << 32).reshape(SPOTS, 4)  # rnd >> 32, reduced below
    for k in range(SPOTS):
        cx, cy = int(p[k, 0]) % side, int(p[k, 1]) % side
        r, peak = 3 + int(p[k, 2]) % 13, 200 + int(p[k, 3]) % 56
        y0, y1, x0, x1 = max(0, cy - r), min(side - 1, cy + r), max(0, cx - r), min(side - 1, cx + r)
        ys = np.arange(y0, y1 + 1, dtype=np.int64)[:, None]
        xs = np.arange(x0, x1 + 1, dtype=np.int64)[None, :]
        d2 = (xs - cx) * (xs - cx) + (ys - cy) * (ys - cy)
        add = (peak * np.exp(-2.0 * d2 / float(r * r)) + 0.5).astype(np.int64)
        patch = img[y0 : y1 + 1, x0 : x1 + 1].astype(np.int64)
        img[y0 : y1 + 1, x0 : x1 + 1] = np.where(d2 <= r * r, np.minimum(255, patch + add), patch)
    return img


def noise(side: int) -> np.ndarray:
    return below(SEED_NOISE, 0, side * side, 256).astype(np.uint8).reshape(side, side)


def spiral(side: int) -> np.ndarray:
    """The C++ walk (step while the next cell is inside and undrawn and the one after it is not
    drawn; else turn clockwise; stop at the second turn in a row), a straight run at a time."""
    img = np.zeros((side, side), dtype=np.uint8)
    img[0, 0] = 255
    x = y = d = turns = 0
    while turns < 2:
        # The cells ahead, nearest first, up to the edge, and where the run would write.
        if d == 0:
            ahead = img[y, x + 1 :]
        elif d == 1:
            ahead = img[y + 1 :, x]
        elif d == 2:
            ahead = img[y, :x][::-1]
        else:
            ahead = img[:y, x][::-1]
        hits = np.flatnonzero(ahead)
        # Step s (1-based) is allowed while cells s and s + 1 are undrawn: up to the edge when
        # none ahead is drawn, else up to two short of the first drawn cell.
        moves = len(ahead) if len(hits) == 0 else max(int(hits[0]) + 1 - 2, 0)
        if moves:
            if d == 0:
                img[y, x + 1 : x + 1 + moves] = 255
                x += moves
            elif d == 1:
                img[y + 1 : y + 1 + moves, x] = 255
                y += moves
            elif d == 2:
                img[y, x - moves : x] = 255
                x -= moves
            else:
                img[y - moves : y, x] = 255
                y -= moves
            turns = 0
        d = (d + 1) % 4
        turns += 1
    return img


MAKERS = {"spots": spots, "noise": noise, "spiral": spiral}


def checksum(img: np.ndarray) -> int:
    """Σ (i + 1) · pixel[i] mod 2^64 over the row-major bytes, as the anchor prints it."""
    flat = img.ravel()
    total = np.uint64(0)
    with np.errstate(over="ignore"):
        for a in range(0, flat.size, CHUNK):
            b = min(flat.size, a + CHUNK)
            w = np.arange(a + 1, b + 1, dtype=np.uint64)
            total = total + (w * flat[a:b].astype(np.uint64)).sum(dtype=np.uint64)
    return int(total)


def fmt(ms: float) -> str:
    return f"{ms:.2f}" if ms < 10 else f"{ms:.1f}"


def timed(call) -> float:
    t = time.perf_counter()
    call()
    return time.perf_counter() - t


def measure(sides: dict, runs: int, budget: float) -> dict:
    """Each side's timed calls: one untimed round, then `runs` rounds, each side once a round in
    an order rotated every round; a side stops once its timed calls pass `budget` seconds."""
    names = list(sides)
    for name in names:
        sides[name]()
    times = {name: [] for name in names}
    for r in range(runs):
        for name in names[r % len(names) :] + names[: r % len(names)]:
            if sum(times[name]) <= budget:
                times[name].append(timed(sides[name]))
    return times


def clpix_side():
    """A call of clpix's CPU blobs, or the reason there is none."""
    try:
        import clpix
    except ImportError as e:
        return None, f"clpix: not available ({e})"
    engine = clpix.Engine("cpu")
    if not hasattr(engine, "blobs"):
        return None, "clpix: not available (this build has no Engine.blobs)"
    return engine, f"clpix {getattr(clpix, '__version__', '?')} ({engine.backend})"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--size", type=int, default=4096)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--budget", type=float, default=30.0, help="seconds of timed calls per side and image")
    ap.add_argument("--images", default="spots,noise,spiral")
    ap.add_argument("--checksums", action="store_true", help="print the images' checksums only")
    args = ap.parse_args()
    images = args.images.split(",")
    for name in images:
        if name not in MAKERS:
            raise SystemExit(f"unknown image {name!r}: spots, noise or spiral")

    if args.checksums:
        for name in images:
            img = MAKERS[name](args.size)
            fg = int(np.count_nonzero(img > THRESHOLDS[name]))
            print(f"{name}: {args.size}², threshold {THRESHOLDS[name]}, foreground {fg} px, checksum {checksum(img):016x}")
        return

    engine, clpix_line = clpix_side()
    try:
        import cv2

        cv2.setNumThreads(2)
        cv2_line = f"OpenCV {cv2.__version__} ({cv2.getNumThreads()} threads)"
    except ImportError:
        cv2, cv2_line = None, "OpenCV: not installed"
    try:
        import skimage
        import skimage.measure

        sk_line = f"scikit-image {skimage.__version__}"
    except ImportError:
        skimage, sk_line = None, "scikit-image: not installed"
    print(f"{args.size}² mono8, 8-connected, median of {args.runs} after a warm-up; {clpix_line}; {cv2_line}; {sk_line}")
    print()
    print("| image | peer | blobs | runs | ms | clpix ms | ratio | target |")
    print("|---|---|---|---|---|---|---|---|")

    for name in images:
        img = MAKERS[name](args.size)
        t = THRESHOLDS[name]
        sides, counts = {}, {}
        if engine is not None:
            sides["clpix"] = lambda: engine.blobs(img, t, connectivity=8)
        if cv2 is not None:
            mask = cv2.threshold(img, t, 255, cv2.THRESH_BINARY)[1]
            ccws = cv2.connectedComponentsWithStats
            sides["cv2.threshold"] = lambda: cv2.threshold(img, t, 255, cv2.THRESH_BINARY)
            sides["cv2.connectedComponentsWithStats"] = lambda: ccws(mask, connectivity=8, ltype=cv2.CV_32S)
            sides["cv2.threshold + connectedComponentsWithStats"] = lambda: ccws(
                cv2.threshold(img, t, 255, cv2.THRESH_BINARY)[1], connectivity=8, ltype=cv2.CV_32S
            )
            counts["cv2.connectedComponentsWithStats"] = ccws(mask, connectivity=8, ltype=cv2.CV_32S)[0] - 1
            counts["cv2.threshold + connectedComponentsWithStats"] = counts["cv2.connectedComponentsWithStats"]
        if skimage is not None:

            def sk_call():
                labels = skimage.measure.label(img > t, connectivity=2)
                props = skimage.measure.regionprops(labels, intensity_image=img)
                return labels, [p.centroid_weighted for p in props]

            sides["skimage label + regionprops"] = sk_call
            counts["skimage label + regionprops"] = int(skimage.measure.label(img > t, connectivity=2).max())
        if engine is not None:
            counts["clpix"] = len(engine.blobs(img, t, connectivity=8)[1])

        times = measure(sides, args.runs, args.budget)
        ms = {k: statistics.median(v) * 1e3 for k, v in times.items()}
        ours = ms.get("clpix")
        ours_text = fmt(ours) if ours is not None else "—"
        if ours is not None:
            print(f"| {name} | clpix blobs | {counts['clpix']} | {len(times['clpix'])} | {ours_text} | {ours_text} | 1.00 | |")
        else:
            print(f"| {name} | clpix blobs | — | — | — | — | — | not available |")
        peers = [
            ("cv2.threshold", ""),
            ("cv2.connectedComponentsWithStats", ""),
            ("cv2.threshold + connectedComponentsWithStats", "≥ 1.5"),
            ("skimage label + regionprops", "≥ 5"),
        ]
        for peer, target in peers:
            if peer not in ms:
                missing = "OpenCV not installed" if peer.startswith("cv2") else "scikit-image not installed"
                print(f"| {name} | {peer} | — | — | — | {ours_text} | — | {missing} |")
                continue
            ratio = f"{ms[peer] / ours:.2f}" if ours is not None else "—"
            blobs = counts.get(peer, "")
            print(f"| {name} | {peer} | {blobs} | {len(times[peer])} | {fmt(ms[peer])} | {ours_text} | {ratio} | {target} |")


if __name__ == "__main__":
    main()
