"""NumPy references for every operation, written from clpix's specification (docs/SPEC.md),
independently of clpix: the tests compare clpix's results to these with ==."""

from __future__ import annotations

import math

import numpy as np

HIT_FIELDS = ("x", "y", "luminance", "rgba")


def luminance(img: np.ndarray) -> np.ndarray:
    """L = (1023 (21 r + 72 g + 7 b)) / 25500, integer division; alpha ignored."""
    p = img.astype(np.int64)
    return ((1023 * (21 * p[..., 0] + 72 * p[..., 1] + 7 * p[..., 2])) // 25500).astype(np.uint16)


def hit(img: np.ndarray, index: int) -> tuple:
    w = img.shape[1]
    y, x = divmod(int(index), w)
    return (x, y, int(luminance(img[y : y + 1, x : x + 1])[0, 0]), tuple(int(v) for v in img[y, x]))


def brightest(img: np.ndarray) -> tuple:
    # np.argmax returns the first maximum in scan order: the smallest scan index.
    return hit(img, np.argmax(luminance(img).ravel()))


def darkest(img: np.ndarray) -> tuple:
    return hit(img, np.argmin(luminance(img).ravel()))


def luminance_stats(img: np.ndarray) -> tuple:
    lum = luminance(img).astype(np.uint64)
    total, count = int(lum.sum()), lum.size
    return (total, count, float(np.float64(total) / np.float64(count)), int(lum.min()), int(lum.max()))


def histogram_rgba(img: np.ndarray) -> np.ndarray:
    flat = img.reshape(-1, 4)
    return np.stack([np.bincount(flat[:, c], minlength=256) for c in range(4)]).astype(np.uint32)


def histogram_luminance(img: np.ndarray) -> np.ndarray:
    return np.bincount(luminance(img).ravel(), minlength=1024).astype(np.uint32)


def records(img: np.ndarray, indices: np.ndarray) -> list:
    """Pixel records (x, y, L, rgba) of the given scan indices, in that order."""
    return [hit(img, i) for i in indices]


def as_tuples(arr: np.ndarray) -> list:
    """clpix's structured records as (x, y, L, rgba) tuples."""
    return [
        (int(r["x"]), int(r["y"]), int(r["luminance"]), tuple(int(v) for v in r["rgba"]))
        for r in arr
    ]


def compact_indices(img: np.ndarray, threshold: int, sort: bool) -> np.ndarray:
    lum = luminance(img).ravel().astype(np.int64)
    kept = np.flatnonzero(lum > threshold)
    if sort:
        kept = kept[np.argsort(-lum[kept], kind="stable")]
    return kept


def compacted_image(img: np.ndarray, threshold: int, sort: bool) -> np.ndarray:
    kept = compact_indices(img, threshold, sort)
    out = np.zeros(img.shape, np.uint8).reshape(-1, 4)
    out[: len(kept)] = img.reshape(-1, 4)[kept]
    return out.reshape(img.shape)


def select_k(img: np.ndarray, k: int, min_distance: float, darkest: bool) -> list:
    """The greedy selection: candidates by L (descending, or ascending for the darkest), ties
    in scan order; taken when dx² + dy² ≥ d² (f64; d is the f32 distance) to all taken."""
    lum = luminance(img).ravel().astype(np.int64)
    order = np.lexsort((np.arange(lum.size), lum if darkest else -lum))
    d = float(np.float32(min_distance))
    min_sq = d * d
    w = img.shape[1]
    taken: list = []
    for i in order:
        if len(taken) >= k:
            break
        y, x = divmod(int(i), w)
        ok = True
        for tx, ty in taken:
            dx, dy = float(abs(tx - x)), float(abs(ty - y))
            if dx * dx + dy * dy < min_sq:
                ok = False
                break
        if ok:
            taken.append((x, y))
    return [hit(img, y * w + x) for x, y in taken]


def exclusive_scan(values: np.ndarray) -> np.ndarray:
    out = np.zeros(len(values), np.uint64)
    if len(values) > 1:
        out[1:] = np.cumsum(values[:-1].astype(np.uint64)) & np.uint64(0xFFFFFFFF)
    return out.astype(np.uint32)


# --- blur ---------------------------------------------------------------------------------


def weights_f64(radius: int, sigma: float) -> list:
    """n_i = g_i / Σg, g_i = exp(-0.5 (i / s)²), summed in order (as the specification's
    host code: i from -w to w), with the C library's exp."""
    g = []
    for i in range(-radius, radius + 1):
        r = i / sigma
        g.append(math.exp(-0.5 * (r * r)))
    total = 0.0
    for v in g:
        total += v
    return [v / total for v in g]


def weights_fixed(radius: int, sigma: float) -> list:
    n = weights_f64(radius, sigma)
    f = [v * 65536.0 for v in n]
    q = [int(math.floor(v)) for v in f]
    rem = 65536 - sum(q)
    if rem % 2:
        q[radius] += 1
        rem -= 1
    pairs = sorted(range(1, radius + 1), key=lambda d: (-(f[radius + d] - math.floor(f[radius + d])), d))
    for d in pairs:
        if rem < 2:
            break
        q[radius - d] += 1
        q[radius + d] += 1
        rem -= 2
    return q


def border_index(n: int, radius: int, border: str):
    """For every output position and tap i in -w..=w: the source index, and whether it is a
    zero pixel (Zero border)."""
    p = np.arange(n)[:, None] + np.arange(-radius, radius + 1)[None, :]
    inside = (p >= 0) & (p < n)
    if border == "clamp":
        src = np.clip(p, 0, n - 1)
    elif border == "wrap":
        src = np.mod(p, n)
    elif border == "reflect":
        if n == 1:
            src = np.zeros_like(p)
        else:
            period = 2 * (n - 1)
            m = np.mod(p, period)
            src = np.where(m >= n, period - m, m)
    elif border == "zero":
        src = np.clip(p, 0, n - 1)
    else:
        raise ValueError(border)
    zero = ~inside if border == "zero" else np.zeros_like(inside)
    return src, zero


def _pass_u8(src: np.ndarray, q: list, radius: int, border: str, axis: int) -> np.ndarray:
    """Σ q_i p(pos + i) along an axis, as uint64."""
    n = src.shape[axis]
    idx, zero = border_index(n, radius, border)
    acc = np.zeros(src.shape, np.uint64)
    for t in range(2 * radius + 1):
        vals = np.take(src, idx[:, t], axis=axis).astype(np.uint64)
        z = zero[:, t]
        if z.any():
            shape = [1, 1, 1]
            shape[axis] = n
            vals = np.where(z.reshape(shape), np.uint64(0), vals)
        acc += np.uint64(q[t]) * vals
    return acc


def blur_u8(img: np.ndarray, radius: int, sigma=None, border: str = "clamp") -> np.ndarray:
    """The RGBA8 fixed-point blur: horizontal h → t = (h + 128) >> 8, then vertical
    v → (v + 2^23) >> 24."""
    if img.size == 0:
        return img.copy()
    if sigma is None:
        sigma = radius / 2.0
    if radius == 0 and sigma == 0:
        return img.copy()
    q = weights_fixed(radius, sigma)
    h = _pass_u8(img, q, radius, border, axis=1)
    t = (h + np.uint64(128)) >> np.uint64(8)
    v = _pass_u8(t, q, radius, border, axis=0)
    return ((v + np.uint64(1 << 23)) >> np.uint64(24)).astype(np.uint8)


def fma_f32(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """round_f32(a · b + c) with one rounding, for float32 arrays: the product is exact in
    float64, TwoSum gives the exact sum as s + err, and err decides where s is a tie between
    two float32 values."""
    p = a.astype(np.float64) * b.astype(np.float64)
    c64 = c.astype(np.float64)
    s = p + c64
    bb = s - p
    err = (p - (s - bb)) + (c64 - bb)
    r = s.astype(np.float32)
    back = r.astype(np.float64)
    toward = np.where(s > back, np.float32(np.inf), np.float32(-np.inf)).astype(np.float32)
    other = np.nextafter(r, toward)
    mid = (back + other.astype(np.float64)) / 2.0
    tie = (s != back) & (s == mid) & (err != 0)
    if tie.any():
        hi = np.maximum(r, other)
        lo = np.minimum(r, other)
        r = np.where(tie, np.where(err > 0, hi, lo), r)
    # s exactly a float32 tie with err = 0: ties to even, as the conversion did.
    return r


def _pass_f32(src: np.ndarray, wt: np.ndarray, radius: int, border: str, axis: int) -> np.ndarray:
    n = src.shape[axis]
    idx, zero = border_index(n, radius, border)
    acc = np.zeros(src.shape, np.float32)
    for t in range(2 * radius + 1):
        vals = np.take(src, idx[:, t], axis=axis)
        z = zero[:, t]
        if z.any():
            shape = [1, 1, 1]
            shape[axis] = n
            vals = np.where(z.reshape(shape), np.float32(0), vals).astype(np.float32)
        acc = fma_f32(np.full(src.shape, wt[t], np.float32), vals, acc)
    return acc


def blur_f32(img: np.ndarray, radius: int, sigma=None, border: str = "clamp") -> np.ndarray:
    """The f32 blur: acc = fma(wt[i + w], src(pos + i), acc) for i in -w..=w, in order;
    horizontal, then vertical; wt = n_i rounded once to f32."""
    if img.size == 0:
        return img.copy()
    if sigma is None:
        sigma = radius / 2.0
    if radius == 0 and sigma == 0:
        return img.copy()
    wt = np.array(weights_f64(radius, sigma), np.float64).astype(np.float32)
    h = _pass_f32(img, wt, radius, border, axis=1)
    return _pass_f32(h, wt, radius, border, axis=0)
