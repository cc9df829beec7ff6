"""clpix.dask with one worker process per GPU: a size² RGBA8 image (random, persisted on the
workers) in chunk² chunks, blurred (w = radius, σ = sigma, the result persisted on the workers),
blurred then histogrammed (clpix.dask.histogram_rgba of the lazy blur) and blurred then its
brightest pixel found (clpix.dask.extreme), and blurred then its 100 brightest pixels 16 apart
(clpix.dask.extremes; again with the blur read back first), on a LocalCluster of
1 worker on one GPU and of one worker per GPU (clpix.dask.one_device_per_worker), each worker
with --threads threads; then dask-image's gaussian_filter with the same taps on a LocalCluster
of the host's cores (--peer-workers × --peer-threads). Prints a table of seconds (median of
--reps) and checks that every configuration gives the same histogram, brightest pixel and
100 apart.

    python bench/multi_gpu.py                       # 32768² in 4096² chunks
    python bench/multi_gpu.py --size 8192 --chunk 2048 --skip-peer
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import numpy as np


def timed(reps: int, call, fresh=None):
    """The median seconds of ``call(x)`` over ``reps`` runs, each on ``x = fresh(rep)`` (made
    outside the timing: new keys, so that the cluster reuses no result of an earlier run), and
    the last result."""
    ts, out = [], None
    for rep in range(reps):
        x = fresh(rep) if fresh else None
        t = time.perf_counter()
        out = call(x)
        ts.append(time.perf_counter() - t)
        del x
    return statistics.median(ts), out


def gpu_rows(args, gpus):
    import dask.array as da
    from distributed import Client, LocalCluster, wait

    import clpix.dask as cd

    rows, hists = [], []
    configs = [(k, t) for t in args.threads for k in sorted({1, len(gpus)})]
    for k, threads in configs:
        cluster = LocalCluster(
            processes=True,
            n_workers=k,
            threads_per_worker=threads,
            dashboard_address=None,
            memory_limit=0,
        )
        client = Client(cluster)
        try:
            client.register_plugin(cd.one_device_per_worker(gpus[:k]))
            devices = client.run(lambda dask_worker: (dask_worker.name, str(cd.engine().device.name), cd.engine().device.index))
            base = da.random.default_rng(1).integers(
                0, 256, size=(args.size, args.size, 4), dtype=np.uint8, chunks=(args.chunk, args.chunk, 4)
            )
            img = client.persist(base)
            wait(img)
            serial = iter(range(1 << 30))

            def fresh(_rep):
                # A copy of the image under new keys, persisted before the timing starts.
                x = client.persist(img.map_blocks(np.copy, dtype=np.uint8, name=f"input-{k}-{threads}-{next(serial)}"))
                wait(x)
                return x

            def blur(x):
                out = client.persist(cd.gaussian_blur(x, args.radius, args.sigma, "clamp"))
                wait(out)
                del out

            def blur_hist(x):
                return cd.histogram_rgba(cd.gaussian_blur(x, args.radius, args.sigma, "clamp"))

            def hist(x):
                return cd.histogram_rgba(x)

            def blur_brightest(x):
                return cd.extreme(cd.gaussian_blur(x, args.radius, args.sigma, "clamp"), "brightest")

            def blur_apart(x):
                # The 100 brightest pixels 16 apart of the lazy blur: candidates found on the
                # blurred chunks the devices hold.
                return cd.extremes(cd.gaussian_blur(x, args.radius, args.sigma, "clamp"), "brightest", 100, 16.0)

            def blur_apart_read_back(x):
                # The same with each blurred chunk read back first (what the fusion avoids: any
                # array derived from the blur is reduced from its pixels).
                lazy = cd.gaussian_blur(x, args.radius, args.sigma, "clamp")
                return cd.extremes(lazy.map_blocks(np.asarray, dtype=np.uint8), "brightest", 100, 16.0)

            def no_halo(x):
                # Each chunk blurred alone (wrong at the seams): what the blur costs without
                # map_overlap's halo tasks.
                block = cd._dask_blur._blur_block
                out = client.persist(x.map_blocks(block, args.radius, args.sigma, "clamp", None, dtype=np.uint8))
                wait(out)
                del out

            blur(fresh(0))  # warm: programs built on every worker
            t_blur, _ = timed(args.reps, blur, fresh)
            t_bh, h = timed(args.reps, blur_hist, fresh)
            t_h, _ = timed(args.reps, hist, fresh)
            t_bb, hit = timed(args.reps, blur_brightest, fresh)
            t_nh, _ = timed(args.reps, no_halo, fresh)
            t_ba, apart = timed(args.reps, blur_apart, fresh)
            t_br, apart_back = timed(args.reps, blur_apart_read_back, fresh)
            assert apart.tobytes() == apart_back.tobytes(), "the fused extremes differ"
            hists.append((h.tobytes(), repr(hit), apart.tobytes()))
            label = f"{k} GPU worker{'s' if k > 1 else ''} × {threads} threads"
            rows.append((label, t_blur, t_bh, t_h, t_nh, sorted(devices.values()), t_bb, t_ba, t_br))
            img = None  # the persisted image let go (the closures above read `img`)
        finally:
            client.close()
            cluster.close()
    same = all(h == hists[0] for h in hists)
    return rows, same


def peer_row(args):
    import dask.array as da
    from dask_image.ndfilters import gaussian_filter
    from distributed import Client, LocalCluster, wait

    cluster = LocalCluster(
        processes=True,
        n_workers=args.peer_workers,
        threads_per_worker=args.peer_threads,
        dashboard_address=None,
        memory_limit=0,
    )
    client = Client(cluster)
    try:
        base = da.random.default_rng(1).integers(
            0, 256, size=(args.size, args.size, 4), dtype=np.uint8, chunks=(args.chunk, args.chunk, 4)
        )
        img = client.persist(base)
        wait(img)
        truncate = args.radius / args.sigma

        def blur(_x):
            out = client.persist(
                gaussian_filter(img, sigma=(args.sigma, args.sigma, 0), mode="nearest", truncate=truncate)
            )
            wait(out)
            del out

        t, _ = timed(args.peer_reps, blur)
        return t
    finally:
        client.close()
        cluster.close()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size", type=int, default=32768)
    ap.add_argument("--chunk", type=int, default=4096)
    ap.add_argument("--radius", type=int, default=8)
    ap.add_argument("--sigma", type=float, default=2.0)
    ap.add_argument(
        "--threads", type=lambda v: [int(x) for x in v.split(",")], default=[4], help="threads of each GPU worker (a list: 2,4,8)"
    )
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--peer-workers", type=int, default=8)
    ap.add_argument("--peer-threads", type=int, default=max(1, (os.cpu_count() or 8) // 8))
    ap.add_argument("--peer-reps", type=int, default=1)
    ap.add_argument("--skip-peer", action="store_true")
    ap.add_argument(
        "--rayon-threads", type=int, default=0, help="RAYON_NUM_THREADS of the GPU workers (0: rayon's default, every core)"
    )
    ap.add_argument("--devices", default="", help="device indices to use (default: every GPU), e.g. 0,0")
    args = ap.parse_args()

    import clpix

    gpus = [d.index for d in clpix.devices() if d.device_type in ("GPU", "accelerator")]
    if args.devices:
        gpus = [int(x) for x in args.devices.split(",")]
    if not gpus:
        print("no OpenCL GPU: nothing to measure")
        return 1
    print(f"{args.size}² RGBA8 in {args.chunk}² chunks, blur w={args.radius} σ={args.sigma:g}; GPUs {gpus}")
    if args.rayon_threads:
        # Inherited by the worker processes LocalCluster starts.
        os.environ["RAYON_NUM_THREADS"] = str(args.rayon_threads)
    rows, same = gpu_rows(args, gpus)
    os.environ.pop("RAYON_NUM_THREADS", None)
    print(
        "\n| workers | blur, persisted (s) | blur + histogram (s) | blur + brightest (s) "
        "| blur + 100 brightest 16 apart (s) | the same, blur read back (s) | histogram (s) "
        "| blur per chunk, no halo (s) | devices |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for label, b, bh, h, nh, devs, bb, ba, br in rows:
        print(f"| {label} | {b:.2f} | {bh:.2f} | {bb:.2f} | {ba:.2f} | {br:.2f} | {h:.2f} | {nh:.2f} | {devs} |")
    for i in range(0, len(rows) - 1, 2):
        one, two = rows[i], rows[i + 1]
        print(
            f"{two[0]} against {one[0]}: blur {one[1] / two[1]:.2f}×, "
            f"blur + histogram {one[2] / two[2]:.2f}×, blur + brightest {one[6] / two[6]:.2f}×, "
            f"histogram {one[3] / two[3]:.2f}×, no halo {one[4] / two[4]:.2f}×"
        )
    print(f"same histogram, brightest pixel and 100 apart in every configuration: {'yes' if same else 'NO'}")
    if not args.skip_peer:
        t = peer_row(args)
        best = min(r[1] for r in rows)
        print(
            f"\ndask-image gaussian_filter, {args.peer_workers} workers × {args.peer_threads} threads: "
            f"{t:.2f} s; clpix.dask's best blur: {best:.2f} s ({t / best:.1f}×)"
        )
    return 0 if same else 1


if __name__ == "__main__":
    raise SystemExit(main())
