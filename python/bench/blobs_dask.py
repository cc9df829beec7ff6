"""clpix.dask.blobs against dask-image's label + center_of_mass on a LocalCluster: issue 54's
Python/Dask target (16384² chunked 2048², 2 workers: ≥ 5× `dask_image.ndmeasure.label` +
`center_of_mass`).

    python bench/blobs_dask.py                    # 16384² in 2048² chunks, 2 workers × 1 thread
    python bench/blobs_dask.py --size 8192 --chunk 1024
    python bench/blobs_dask.py --peer-labels 0    # dask-image's centroids of every blob (slow)

The image is blobs_vs_opencv.py's `spots` (2,000 Gaussian spots of radius 3-15 on noise 0..40,
mono8, threshold 100), made once here and scattered to the workers in chunk² blocks. Each call
gets a copy of it under new keys, persisted before the clock starts, so that no call reuses
another's results. The cluster: `LocalCluster(n_workers=--workers, threads_per_worker=--threads,
processes=True)`, without a memory limit; each clpix worker makes its default engine.

- clpix: `clpix.dask.blobs(img, 100, labels=True)`: the statistics (the intensity-weighted
  centroids among them) computed, and the label image persisted on the workers and waited for.
- dask-image: `ndmeasure.label(img > 100, structure=np.ones((3, 3)))` with the label image
  and the count persisted, then `ndmeasure.center_of_mass(img, labels, index=range(1, n + 1))`
  computed (weighted by the pixel values, as clpix's centroids with background 0).

dask-image's center_of_mass with an index builds a graph per label over the whole image (the
label image compared with the label, the image and the pixels' positions masked with that: about
28 tasks a label and a chunk, 1.9 million tasks for 1,051 labels in 64 chunks), so its time grows
as labels × pixels and the full call runs out of memory on a small machine (24 GiB: out of memory
at 1024² already). `--peer-labels K` (default 64) therefore times center_of_mass of the labels
1..K and scales that time by n / K (each label costs the same: the whole image compared and
masked); the table marks such a time as an estimate, and the ratio as a lower bound when the
measured part alone (the labelling and K labels' centroids) is already slower than clpix.
`--peer-labels 0` times the full call.

Each round calls each side once, the order swapped round by round, after one untimed round; the
medians of `--runs` rounds are printed as a markdown table. The blob counts must agree, and the
centroids dask-image gives must be clpix's (within 1e-6 px); the script says so.
"""

from __future__ import annotations

import argparse
import itertools
import os
import statistics
import sys
import time
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from blobs_vs_opencv import THRESHOLDS, spots  # noqa: E402


class PeerTimeout(Exception):
    """A dask-image call ran past --peer-timeout."""


def scattered(client, img: np.ndarray, chunk: int):
    """`img` as a Dask array chunked chunk², its blocks scattered to the workers (no copy of
    the image in the task graph) and persisted."""
    import dask.array as da
    from distributed import wait

    h, w = img.shape
    ys, xs = range(0, h, chunk), range(0, w, chunk)
    blocks = [img[y : y + chunk, x : x + chunk] for y in ys for x in xs]
    futures = client.scatter(blocks)
    grid = [
        [da.from_delayed(futures[i * len(xs) + j], shape=blocks[i * len(xs) + j].shape, dtype=img.dtype) for j in range(len(xs))]
        for i in range(len(ys))
    ]
    arr = client.persist(da.block(grid))
    wait(arr)
    return arr


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size", type=int, default=16384)
    ap.add_argument("--chunk", type=int, default=2048)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--threads", type=int, default=1, help="threads per worker")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--peer-labels", type=int, default=64, help="labels whose centroids dask-image computes (0: all)")
    ap.add_argument("--peer-timeout", type=float, default=900.0, help="seconds a dask-image call may take")
    ap.add_argument("--skip-peer", action="store_true")
    args = ap.parse_args()

    import dask
    from distributed import Client, LocalCluster, wait

    import clpix
    import clpix.dask as cd

    threshold = THRESHOLDS["spots"]
    t = time.perf_counter()
    img = spots(args.size)
    made = time.perf_counter() - t
    foreground = int(np.count_nonzero(img > threshold))
    print(
        f"spots {args.size}² mono8 (made in {made:.1f} s, {foreground} px above {threshold}), "
        f"chunks {args.chunk}², {args.workers} workers × {args.threads} threads, {os.cpu_count()} cores, "
        f"load average {os.getloadavg()[0]:.1f}"
    )

    # dask-image's label graph is large (16 MiB for 64 chunks): dask warns of it every call.
    warnings.filterwarnings("ignore", message="Sending large graph")
    # dask-image's labelling would otherwise go through P2P rechunks, whose barrier tasks break
    # the later center_of_mass graph that reuses the persisted labels ("lost dependencies").
    dask.config.set({"array.rechunk.method": "tasks"})
    cluster = LocalCluster(
        n_workers=args.workers,
        threads_per_worker=args.threads,
        processes=True,
        dashboard_address=None,
        memory_limit=0,
    )
    client = Client(cluster)
    try:
        base = scattered(client, img, args.chunk)
        engines = set(client.run(lambda: str(cd.engine())).values())
        print(f"clpix {clpix.__version__}, the workers' engines: {', '.join(sorted(engines))}")
        serial = itertools.count()

        def fresh():
            # A copy of the image under new keys, persisted before the timing starts.
            x = client.persist(base.map_blocks(np.copy, dtype=base.dtype, name=f"spots-copy-{next(serial)}"))
            wait(x)
            return x

        def clpix_call(x):
            labels, stats = cd.blobs(x, threshold, labels=True)
            labels = client.persist(labels)
            wait(labels)
            return labels, stats

        def peer_call(x):
            """(label s, center_of_mass s, n, labels of the centroids, centroids, label image)."""
            from dask_image import ndmeasure

            start = time.perf_counter()

            def left():
                rest = args.peer_timeout - (time.perf_counter() - start)
                if rest <= 0:
                    raise PeerTimeout
                return rest

            labels, n = ndmeasure.label(x > threshold, structure=np.ones((3, 3)))
            labels, n = client.persist([labels, n])
            try:
                wait([labels, n], timeout=left())
            except TimeoutError:
                client.cancel([labels, n])
                raise PeerTimeout from None
            n = int(n.compute())
            t_label = time.perf_counter() - start
            m = n if args.peer_labels <= 0 else min(args.peer_labels, n)
            com = np.zeros((0, 2))
            if m:
                future = client.compute(ndmeasure.center_of_mass(x, labels, index=range(1, m + 1)))
                try:
                    wait(future, timeout=left())
                except TimeoutError:
                    client.cancel([future, labels])
                    raise PeerTimeout from None
                com = np.asarray(future.result()).reshape(m, 2)
            return t_label, time.perf_counter() - start - t_label, n, m, com, labels

        sides = {"clpix": clpix_call}
        if not args.skip_peer:
            sides["dask-image"] = peer_call
        times = {name: [] for name in sides}
        results = {}
        timed_out = set()
        for r in range(args.runs + 1):  # round 0 untimed
            order = list(sides) if r % 2 == 0 else list(sides)[::-1]
            for name in order:
                if name in timed_out:
                    continue
                x = fresh()
                t = time.perf_counter()
                try:
                    out = sides[name](x)
                except PeerTimeout:
                    timed_out.add(name)
                    print(f"dask-image: no result within {args.peer_timeout:.0f} s (round {r}); its later rounds skipped")
                    continue
                elapsed = time.perf_counter() - t
                if r:
                    times[name].append((elapsed, out[:2]) if name == "dask-image" else elapsed)
                results[name] = out
                del x, out
            print(f"round {r} done (load average {os.getloadavg()[0]:.1f})", flush=True)

        ok = check(client, results)
        print()
        print("| size | chunk | workers | blobs | clpix s | dask-image s | ratio | target |")
        print("|---|---|---|---|---|---|---|---|")
        ours = statistics.median(times["clpix"])
        blobs = len(results["clpix"][1])
        workers = f"{args.workers} × {args.threads} thread{'s' if args.threads > 1 else ''}"
        row = f"| {args.size}² | {args.chunk}² | {workers} | {blobs} | {ours:.2f} |"
        notes = []
        if args.skip_peer:
            print(f"{row} — | — | ≥ 5 |")
        elif "dask-image" in timed_out and not times["dask-image"]:
            print(f"{row} > {args.peer_timeout:.0f} (no result) | > {args.peer_timeout / ours:.0f} | ≥ 5 |")
        else:
            t_label = statistics.median(s[1][0] for s in times["dask-image"])
            t_com = statistics.median(s[1][1] for s in times["dask-image"])
            _, _, n, m, _, _ = results["dask-image"]
            if m == n:
                total = statistics.median(s[0] for s in times["dask-image"])
                print(f"{row} {total:.2f} | {total / ours:.1f} | ≥ 5 |")
            else:
                total = t_label + t_com * n / m
                measured = t_label + t_com
                print(f"{row} {total:.0f} (est.) | {total / ours:.0f} (est.; ≥ {measured / ours:.1f} measured) | ≥ 5 |")
                notes.append(
                    f"dask-image: label {t_label:.2f} s, center_of_mass of labels 1..{m} {t_com:.2f} s "
                    f"(of {n}; the estimate scales it by {n}/{m}: {t_com * n / m:.0f} s)"
                )
            runs = len(times["dask-image"])
            notes.append(f"medians of {args.runs} rounds (dask-image: {runs}) after an untimed one")
        for note in notes:
            print(note)
        return 0 if ok else 1
    finally:
        client.close()
        cluster.close()


def check(client, results) -> bool:
    """The blob counts agree, the label images have the same foreground, and the centroids
    dask-image computed are clpix's (dask-image numbers its labels otherwise: matched by the
    nearest centroid)."""
    labels, stats = results["clpix"]
    ok = True
    if "dask-image" not in results:
        print(f"clpix: {len(stats)} blobs (dask-image not run: nothing to compare)")
        return ok
    _, _, n, m, com, peer_labels = results["dask-image"]
    same_count = n == len(stats)
    same_fg = not bool(((labels > 0) != (peer_labels > 0)).any().compute())
    ours = np.stack([stats["centroid_y"], stats["centroid_x"]], axis=-1)
    worst = 0.0
    for c in com:
        worst = max(worst, float(np.min(np.abs(ours - c).max(axis=1))) if len(ours) else np.inf)
    same_com = worst <= 1e-6
    print(
        f"blobs: clpix {len(stats)}, dask-image {n} ({'agree' if same_count else 'DIFFER'}); "
        f"foreground {'the same' if same_fg else 'DIFFERS'}; dask-image's {m} centroids "
        f"{'are' if same_com else 'are NOT'} clpix's (largest difference {worst:.2g} px)"
    )
    ok = same_count and same_fg and same_com
    return ok


if __name__ == "__main__":
    raise SystemExit(main())
