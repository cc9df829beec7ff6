"""clpix's Python benchmarks: the overhead of the Python call over the same Rust call, and
clpix.dask against dask-image and dask.array on a LocalCluster.

    python bench/bench.py                    # everything (the 16384² part takes minutes)
    python bench/bench.py --skip-dask        # the overhead table only

1. Overhead: each operation on a size² RGBA8 image, timed from Python (`engine.op(img)`,
   the NumPy conversion of the result included) and inside the extension
   (`clpix._time_rust`: the same Rust call on the same borrowed pixels, in a Rust loop,
   its result dropped), alternately, the median of each. On a busy machine the two medians
   differ by more than Python's cost, so that cost is also measured alone: the mean time of
   2000 calls on a 1×1 image from Python minus the same 2000 calls inside Rust (best of 5).
2. Dask: a dask-size² RGBA8 image (random, persisted on a LocalCluster of 2 worker processes
   with 1 thread each) blurred by clpix.dask.gaussian_blur and by dask-image's
   gaussian_filter with the same sigma and radius (the result persisted on the workers), and
   its RGBA histogram by clpix.dask.histogram_rgba and by dask.array.histogram per channel;
   for scale, the same clpix calls on the whole image in this process, without Dask.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time

import numpy as np

import clpix


def median_ms(values) -> float:
    return statistics.median(values) * 1e3


def overhead_rows(engine: clpix.Engine, size: int, reps: int, radius: int, threshold: int):
    rng = np.random.default_rng(0)
    # A dark noisy image with bright spots: compaction keeps a realistic ~1% of the pixels.
    img = rng.integers(0, 60, (size, size, 4), dtype=np.uint8)
    spots = rng.integers(0, size, (size * size // 100, 2))
    img[spots[:, 0], spots[:, 1]] = 255
    calls = {
        "brightest": lambda: engine.extreme(img, "brightest"),
        "darkest": lambda: engine.extreme(img, "darkest"),
        "luminance_stats": lambda: engine.luminance_stats(img),
        "histogram_rgba": lambda: engine.histogram_rgba(img),
        "histogram_luminance": lambda: engine.histogram_luminance(img),
        "compact": lambda: engine.compact(img, threshold),
        "compact_sorted": lambda: engine.compact(img, threshold, "luminance"),
        "compacted_image": lambda: engine.compacted_image(img, threshold),
        "gaussian_blur": lambda: engine.gaussian_blur(img, radius),
        "luminance": lambda: clpix.luminance(img),
    }
    tiny = img[:1, :1].copy()
    rows = []
    for op, call in calls.items():
        call()  # warm: kernels built, pages touched
        py, rs = [], []
        for _ in range(reps):
            t = time.perf_counter()
            call()
            py.append(time.perf_counter() - t)
            rs.extend(clpix._time_rust(engine, op, img, 1, threshold=threshold, radius=radius))
        p, r = median_ms(py), median_ms(rs)
        rows.append((op, r, p, (p - r) / r * 100.0, fixed_cost_us(engine, op, tiny, threshold, radius)))
    return rows


def fixed_cost_us(engine, op, tiny, threshold, radius, n=2000) -> float:
    """The Python call's own cost: a 1×1 image, n calls from Python against n in Rust."""
    args = {
        "brightest": ("brightest",),
        "darkest": ("darkest",),
        "compact": (threshold,),
        "compact_sorted": (threshold, "luminance"),
        "compacted_image": (threshold,),
        "gaussian_blur": (radius,),
    }.get(op, ())
    method = {"brightest": "extreme", "darkest": "extreme", "compact_sorted": "compact"}.get(op, op)
    fn = clpix.luminance if op == "luminance" else getattr(engine, method)
    best = float("inf")
    for _ in range(5):
        t = time.perf_counter()
        for _ in range(n):
            fn(tiny, *args)
        py = (time.perf_counter() - t) / n
        rs = sum(clpix._time_rust(engine, op, tiny, n, threshold=threshold, radius=radius)) / n
        best = min(best, (py - rs) * 1e6)
    return best


def cpu_name() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def dask_rows(size: int, chunk: int, radius: int, sigma: float, reps: int):
    import dask.array as da
    from dask_image.ndfilters import gaussian_filter
    from distributed import Client, LocalCluster, wait

    import clpix.dask as cd

    cluster = LocalCluster(processes=True, n_workers=2, threads_per_worker=1, dashboard_address=None)
    client = Client(cluster)
    try:
        base = da.random.default_rng(1).integers(
            0, 256, size=(size, size, 4), dtype=np.uint8, chunks=(chunk, chunk, 4)
        )
        backends = set(client.run(lambda: cd.engine().backend).values())  # engines made first
        truncate = radius / sigma

        def per_channel(img):
            hs = [da.histogram(img[..., c], bins=256, range=(0, 256))[0] for c in range(4)]
            return da.compute(*hs)

        calls = {
            "blur_clpix": lambda img: client.persist(cd.gaussian_blur(img, radius, sigma, "clamp")),
            "blur_peer": lambda img: client.persist(
                gaussian_filter(img, sigma=(sigma, sigma, 0), mode="nearest", truncate=truncate)
            ),
            "hist_clpix": lambda img: cd.histogram_rgba(img),
            "hist_peer": per_channel,
        }
        times = {k: [] for k in calls}
        for rep in range(reps):
            # A fresh copy of the image a repetition: new keys, so that no result is reused.
            img = client.persist(base.map_blocks(np.copy, dtype=np.uint8, name=f"bench-input-{rep}"))
            wait(img)
            for name, call in calls.items():
                t = time.perf_counter()
                out = call(img)
                if name.startswith("blur"):
                    wait(out)
                times[name].append(time.perf_counter() - t)
                del out
            del img
        blur_clpix, blur_peer, hist_clpix, hist_peer = (
            statistics.median(times[k]) for k in ("blur_clpix", "blur_peer", "hist_clpix", "hist_peer")
        )
        img = client.persist(base)
        wait(img)
        # The same answers (the blur differs: dask-image rounds a float64 blur).
        assert np.array_equal(np.stack(per_channel(img)), cd.histogram_rgba(img))
        # For scale: the same clpix calls in this process on the whole image, without Dask.
        whole = img.compute()
        del img
        engine = clpix.default_engine()

        def median_s(call):
            ts = []
            for _ in range(reps):
                t = time.perf_counter()
                call()
                ts.append(time.perf_counter() - t)
            return statistics.median(ts)

        single_blur = median_s(lambda: engine.gaussian_blur(whole, radius, sigma, "clamp"))
        single_hist = median_s(lambda: engine.histogram_rgba(whole))
        return backends, [
            (f"gaussian_blur w={radius} σ={sigma:g}", blur_clpix, single_blur, "dask-image gaussian_filter", blur_peer),
            ("histogram_rgba", hist_clpix, single_hist, "dask.array.histogram ×4 channels", hist_peer),
        ]
    finally:
        client.close()
        cluster.close()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--backend", default="auto", choices=["auto", "cpu", "opencl"])
    ap.add_argument("--size", type=int, default=4096)
    ap.add_argument("--reps", type=int, default=15)
    ap.add_argument("--radius", type=int, default=8)
    ap.add_argument("--sigma", type=float, default=2.0)
    ap.add_argument("--threshold", type=int, default=500)
    ap.add_argument("--dask-size", type=int, default=16384)
    ap.add_argument("--chunk", type=int, default=2048)
    ap.add_argument("--dask-reps", type=int, default=3)
    ap.add_argument("--skip-dask", action="store_true")
    ap.add_argument("--skip-overhead", action="store_true")
    args = ap.parse_args()

    engine = clpix.Engine(args.backend)
    print(f"machine: {cpu_name()}, {os.cpu_count()} CPUs; Python {sys.version.split()[0]}")
    print(f"engine: {engine.backend}")
    if not args.skip_overhead:
        print(f"\n### Python overhead per call, {args.size}² RGBA8 (median of {args.reps}; blur w = {args.radius}, threshold {args.threshold})\n")
        print("| operation | Rust call | Python call | difference | Python's own cost a call (1×1 image) | that cost / Rust call |")
        print("|---|---|---|---|---|---|")
        for op, r, p, pct, fixed in overhead_rows(engine, args.size, args.reps, args.radius, args.threshold):
            share = fixed / (r * 1e3) * 100.0
            print(f"| {op} | {r:.2f} ms | {p:.2f} ms | {pct:+.1f}% | {fixed:.1f} µs | {share:.2f}% |")
            sys.stdout.flush()
    if not args.skip_dask:
        backends, rows = dask_rows(args.dask_size, args.chunk, args.radius, args.sigma, args.dask_reps)
        print(
            f"\n### Dask, LocalCluster of 2 worker processes × 1 thread, {args.dask_size}² RGBA8 in "
            f"{args.chunk}² chunks (median of {args.dask_reps})\n"
        )
        print(f"workers' engines: {'; '.join(sorted(backends))}\n")
        print("| operation | clpix.dask | clpix, one process, no Dask | peer (same cluster) | peer time | peer / clpix.dask |")
        print("|---|---|---|---|---|---|")
        for op, c, single, peer, p in rows:
            print(f"| {op} | {c:.2f} s | {single:.2f} s | {peer} | {p:.2f} s | {p / c:.1f}× |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
