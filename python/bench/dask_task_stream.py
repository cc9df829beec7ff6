"""Where the time of a clpix.dask call goes, from Dask's task stream: on a LocalCluster of one
GPU worker and of one worker per GPU (--threads each), a size² RGBA8 image (random, persisted)
in chunk² chunks is blurred (w = 8, persisted), blurred then histogrammed, and histogrammed;
for each call (the second of two, on a fresh copy under new keys) it prints the wall time,
when the first task started and the last ended, and per task name: how many ran, their summed
and mean seconds, when the first started and the last ended, and how many ran on each worker;
then each worker's busy thread-seconds and the transfers between workers.

    python bench/dask_task_stream.py --threads 4
    python bench/dask_task_stream.py --size 4096 --chunk 1024 --threads 2   # a laptop
"""

from __future__ import annotations

import argparse
import collections
import statistics
import time

import numpy as np


def summary(name, t0, t1, stream):
    """Prints the call's table from ``stream`` (``client.get_task_stream``'s records)."""
    compute, other = [], []
    for task in stream:
        for ss in task["startstops"]:
            rec = (task.get("key"), task["worker"], ss["action"], ss["start"], ss["stop"])
            (compute if ss["action"] == "compute" else other).append(rec)
    if not compute:
        print(f"\n## {name}: no tasks")
        return
    first = min(r[3] for r in compute)
    last = max(r[4] for r in compute)
    print(
        f"\n## {name}: wall {t1 - t0:.3f} s; first task at +{first - t0:.3f}, "
        f"last ends at +{last - t0:.3f}; {len(compute)} tasks"
    )
    by_name = collections.defaultdict(list)
    for r in compute:
        key = r[0][0] if isinstance(r[0], tuple) else r[0]
        by_name[str(key).rsplit("-", 1)[0][:40]].append(r)
    for prefix, rs in sorted(by_name.items(), key=lambda kv: -sum(r[4] - r[3] for r in kv[1])):
        d = [r[4] - r[3] for r in rs]
        per_worker = sorted(collections.Counter(r[1] for r in rs).values())
        print(
            f"  {prefix:40s} n={len(rs):4d} sum={sum(d):7.3f} s mean={1e3 * statistics.mean(d):7.2f} ms "
            f"span=[{min(r[3] for r in rs) - t0:.3f}, {max(r[4] for r in rs) - t0:.3f}] per worker {per_worker}"
        )
    busy = collections.defaultdict(float)
    for r in compute:
        busy[r[1]] += r[4] - r[3]
    print("  busy thread-seconds per worker:", {w.rsplit(":", 1)[-1]: round(v, 3) for w, v in busy.items()})
    moved = collections.defaultdict(lambda: [0, 0.0])
    for r in other:
        moved[r[2]][0] += 1
        moved[r[2]][1] += r[4] - r[3]
    if moved:
        print("  other actions (count, seconds):", {a: (n, round(s, 3)) for a, (n, s) in moved.items()})


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size", type=int, default=32768)
    ap.add_argument("--chunk", type=int, default=4096)
    ap.add_argument("--threads", type=int, default=4)
    args = ap.parse_args()

    import dask.array as da
    from distributed import Client, LocalCluster, wait

    import clpix
    import clpix.dask as cd

    gpus = [d.index for d in clpix.devices() if d.device_type in ("GPU", "accelerator")]
    if not gpus:
        print("no OpenCL GPU: the workers use clpix's default engine")
    for k in sorted({1, max(1, len(gpus))}):
        cluster = LocalCluster(
            processes=True, n_workers=k, threads_per_worker=args.threads, dashboard_address=None, memory_limit=0
        )
        client = Client(cluster)
        try:
            if gpus:
                client.register_plugin(cd.one_device_per_worker(gpus[:k]))
            shape, chunks = (args.size, args.size, 4), (args.chunk, args.chunk, 4)
            img = client.persist(da.random.default_rng(1).integers(0, 256, size=shape, dtype=np.uint8, chunks=chunks))
            wait(img)
            held = collections.Counter(v[0] for v in client.who_has(img).values() if v)
            print(f"\n# {k} worker(s) × {args.threads} threads: chunks on each worker {sorted(held.values())}")
            serial = iter(range(1 << 30))

            def fresh():
                x = client.persist(img.map_blocks(np.copy, dtype=np.uint8, name=f"input-{k}-{next(serial)}"))
                wait(x)
                return x

            def blur(x):
                # The persisted blur is returned and kept until its records are read.
                out = client.persist(cd.gaussian_blur(x, 8, 2.0, "clamp"))
                wait(out)
                return out

            calls = {
                "blur, persisted": blur,
                "blur + histogram": lambda x: cd.histogram_rgba(cd.gaussian_blur(x, 8, 2.0, "clamp")),
                "histogram": cd.histogram_rgba,
            }
            blur(fresh())  # warm: programs built on every worker
            client.get_task_stream()  # starts the scheduler's recording (its first call does)
            for name, call in calls.items():
                for rep in range(2):
                    x = fresh()
                    t0 = time.time()
                    out = call(x)
                    t1 = time.time()
                    time.sleep(0.3)  # the workers' last records reach the scheduler
                    if rep == 1:
                        summary(f"{name} ({k} worker(s))", t0, t1, client.get_task_stream(start=t0 - 0.001))
                    del out
        finally:
            client.close()
            cluster.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
