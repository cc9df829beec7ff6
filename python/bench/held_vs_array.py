"""A frame as a NumPy array against the same frame held by the engine (clpix.DeviceImage), per
call, median of 15 (ms): 8192² mono16, mono f32 and RGBA8 on the first NVIDIA device (else the
default engine). docs/python.md, "Held images from Python".

    python bench/held_vs_array.py
"""
import statistics, time, sys
import numpy as np
import clpix

dev = [d for d in clpix.devices() if "NVIDIA" in d.platform or "H200" in d.name]
e = clpix.Engine("opencl", dev[0].index) if dev else clpix.Engine()
print("engine:", e.backend)
rng = np.random.default_rng(1)
rows = []
for name, img, t in [
    ("mono16", rng.integers(0, 65536, (8192, 8192), dtype=np.uint16), 60000),
    ("mono f32", rng.random((8192, 8192), dtype=np.float32), 0.9999),
    ("rgba8", rng.integers(0, 256, (8192, 8192, 4), dtype=np.uint8), 1000),
]:
    t0 = time.perf_counter(); held = e.upload(img); up = (time.perf_counter() - t0) * 1e3
    calls = {
        "extreme brightest": lambda x: e.extreme(x, "brightest"),
        "histogram 256 bins": lambda x: e.histogram(x, 256, (0, 65535) if img.dtype == np.uint16 else ((0, 255) if img.dtype == np.uint8 else (0.0, 1.0))),
        "blobs stats only": lambda x: e.blobs(x, t, labels=False),
        "blur w=8 (array back)": lambda x: e.gaussian_blur(x, 8),
    }
    for call, f in calls.items():
        out = {}
        for kind, x in (("array", img), ("held", held)):
            f(x)
            ts = []
            for _ in range(15):
                t0 = time.perf_counter(); f(x); ts.append((time.perf_counter() - t0) * 1e3)
            out[kind] = statistics.median(ts)
        rows.append((name, call, out["array"], out["held"]))
    ts = []
    for _ in range(15):
        t0 = time.perf_counter(); k = e.gaussian_blur_device(held, 8); ts.append((time.perf_counter() - t0) * 1e3)
    rows.append((name, "blur w=8 kept (gaussian_blur_device)", float("nan"), statistics.median(ts)))
    print(f"{name}: upload {up:.1f} ms (first)")
print("| format | call | array ms | held ms |")
print("|---|---|---|---|")
for r in rows:
    print(f"| {r[0]} | {r[1]} | {r[2]:.3f} | {r[3]:.3f} |")
