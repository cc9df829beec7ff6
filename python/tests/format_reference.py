"""NumPy (and exact rational) references for the operations that take every pixel format,
written from docs/SPEC.md ("Pixel formats", "Histograms of every format", "Gaussian blur") and
the blur's rules for every format (clpix::Engine::gaussian_blur), independently of clpix: uint8, uint16 and float32 images shaped (H, W), (H, W, 3)
(uint8) or (H, W, 4)."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from reference import border_index, weights_f64
from reference import fma_f32 as fma_f32_arrays

# The float32 weights of the RGBA f32 key.
W_R, W_G, W_B = np.float32(0.21), np.float32(0.72), np.float32(0.07)


def format_of(img: np.ndarray) -> str:
    """The format name clpix gives an array."""
    mono = img.ndim == 2
    if img.dtype == np.uint8:
        return "mono8" if mono else ("rgb8" if img.shape[2] == 3 else "rgba8")
    if img.dtype == np.uint16:
        return "mono16" if mono else "rgba16"
    return "mono-f32" if mono else "rgba-f32"


def round_f32(q: Fraction) -> float:
    """The float32 nearest to the rational q (ties to even; overflow to ±inf), as a float."""
    if q == 0:
        return 0.0
    sign = -1.0 if q < 0 else 1.0
    q = abs(q)
    e = q.numerator.bit_length() - q.denominator.bit_length()
    if Fraction(2) ** e > q:
        e -= 1
    # 2**e <= q < 2**(e + 1); 24 significant bits, no fewer than the denormals' 2**-149.
    quantum = Fraction(2) ** max(e - 23, -149)
    m = q / quantum
    n = math.floor(m)
    rest = m - n
    if rest > Fraction(1, 2) or (rest == Fraction(1, 2) and n % 2 == 1):
        n += 1
    value = n * quantum
    if value >= Fraction(2) ** 128:
        return sign * math.inf
    return sign * float(value)


def fma_f32(a: np.float32, b: np.float32, c: np.float32) -> np.float32:
    """fma in float32: a × b + c rounded once."""
    a, b, c = float(a), float(b), float(c)
    if not (math.isfinite(a) and math.isfinite(b) and math.isfinite(c)):
        # Infinities and NaN: float64 arithmetic gives the same inf / NaN.
        return np.float32(a * b + c)
    return np.float32(round_f32(Fraction(a) * Fraction(b) + Fraction(c)))


def mul_f32(a: np.float32, b: np.float32) -> np.float32:
    a, b = float(a), float(b)
    if not (math.isfinite(a) and math.isfinite(b)):
        return np.float32(a * b)
    return np.float32(round_f32(Fraction(a) * Fraction(b)))


def rgba_f32_key(r, g, b) -> np.float32:
    """fma(0.07, b, fma(0.72, g, 0.21 × r)), each step rounded to float32 once."""
    return fma_f32(W_B, b, fma_f32(W_G, g, mul_f32(W_R, r)))


_rgba_f32_keys: dict = {}


def keys(img: np.ndarray) -> np.ndarray:
    """The key of every pixel, (H, W): int64 for integer formats, float32 for float32."""
    if img.ndim == 2:
        return img.astype(np.int64) if img.dtype != np.float32 else img.copy()
    if img.dtype == np.uint8:
        p = img.astype(np.int64)
        return (1023 * (21 * p[..., 0] + 72 * p[..., 1] + 7 * p[..., 2])) // 25500
    if img.dtype == np.uint16:
        p = img.astype(np.int64)
        return (21 * p[..., 0] + 72 * p[..., 1] + 7 * p[..., 2]) // 100
    # RGBA f32, pixel by pixel in rationals (slow): remembered by content.
    memo = (img.shape, img.tobytes())
    if memo not in _rgba_f32_keys:
        h, w = img.shape[:2]
        out = np.empty((h, w), np.float32)
        for y in range(h):
            for x in range(w):
                r, g, b = img[y, x, :3]
                out[y, x] = rgba_f32_key(r, g, b)
        _rgba_f32_keys[memo] = out
    return _rgba_f32_keys[memo].copy()


def _channels(img: np.ndarray) -> tuple:
    px = np.atleast_1d(img)
    if img.dtype == np.float32:
        return tuple(float(v) for v in px)
    return tuple(int(v) for v in px)


def _key(k) -> object:
    # -0 is +0 as a key.
    return float(k) + 0.0 if isinstance(k, (float, np.floating)) else int(k)


def extreme(img: np.ndarray, darkest: bool) -> tuple:
    """(format, x, y, key, value) of the brightest (darkest) pixel: the largest (smallest) key
    that is not NaN, the smallest scan index among ties; None when there is none."""
    k = keys(img).ravel()
    index = np.arange(k.size)
    if k.dtype == np.float32:
        ok = ~np.isnan(k)
        k, index = k[ok], index[ok]
    if k.size == 0:
        return None
    # argmax / argmin: the first of equal values (-0 == +0).
    i = int(index[np.argmin(k) if darkest else np.argmax(k)])
    y, x = divmod(i, img.shape[1])
    return (format_of(img), x, y, _key(keys(img[y : y + 1, x : x + 1])[0, 0]), _channels(img[y, x]))


def stats(img: np.ndarray) -> tuple:
    """(sum, count, mean, min, max) of the keys; None when there are none (all NaN, or no
    pixels). float32: NaN left out, the sum exact rounded once (fsum), inf rules."""
    k = keys(img).ravel()
    if k.dtype != np.float32:
        if k.size == 0:
            return None
        total = int(k.sum())
        return (total, k.size, total / k.size, int(k.min()), int(k.max()))
    k = k[~np.isnan(k)].astype(np.float64)
    if k.size == 0:
        return None
    pos, neg = bool(np.any(k == math.inf)), bool(np.any(k == -math.inf))
    if pos and neg:
        total = math.nan
    elif pos or neg:
        total = math.inf if pos else -math.inf
    else:
        total = math.fsum(k)  # the correctly rounded exact sum
    return (total, k.size, total / k.size, float(k.min()) + 0.0, float(k.max()) + 0.0)


def int_histogram(values: np.ndarray, bins: int, lo: int, hi: int) -> np.ndarray:
    """bin = (v - lo) * bins // (hi - lo + 1) for lo <= v <= hi."""
    v = values.ravel().astype(np.int64)
    v = v[(v >= lo) & (v <= hi)]
    b = (v - lo) * bins // (hi - lo + 1)
    return np.bincount(b, minlength=bins).astype(np.uint32)


def f32_histogram(values: np.ndarray, bins: int, lo: float, hi: float) -> np.ndarray:
    """numpy.histogram of the values as float64 (float64 edges); NaN not counted."""
    v = values.ravel().astype(np.float64)
    v = v[~np.isnan(v)]
    return np.histogram(v, bins=bins, range=(lo, hi))[0].astype(np.uint32)


def _histogram(values: np.ndarray, bins: int, lo, hi) -> np.ndarray:
    if values.dtype.kind == "f":
        return f32_histogram(values, bins, lo, hi)
    return int_histogram(values, bins, int(lo), int(hi))


def histogram(img: np.ndarray, bins: int, lo, hi) -> np.ndarray:
    """(channels, bins) uint32: each channel's histogram."""
    chans = img[..., None] if img.ndim == 2 else img
    return np.stack([_histogram(chans[..., c], bins, lo, hi) for c in range(chans.shape[2])])


def histogram_keys(img: np.ndarray, bins: int, lo, hi) -> np.ndarray:
    return _histogram(keys(img), bins, lo, hi)


# --- the blur of every format ------------------------------------------------------------
# As clpix::Engine::gaussian_blur states them: each channel blurred alone, horizontal pass then
# vertical; 8-bit channels with 16-bit weights q (Σq = 2^16): t = (Σ q p + 2^7) >> 8, out =
# (Σ q t + 2^23) >> 24; 16-bit channels with 24-bit weights (Σq = 2^24): t = (Σ q p + 2^15) >>
# 16, out = (Σ q t + 2^31) >> 32; float32: acc = fma(wt_i, x(pos + i), acc) tap by tap.


def blur_weights_fixed(radius: int, sigma: float, bits: int) -> list:
    """Symmetric integer weights summing to 2^bits: n_i · 2^bits floored, the remainder
    handed out in pairs (-d, +d) by largest fractional part (ties to the smaller d), an odd
    unit to the centre (src/ops/blur/rules.rs)."""
    one = 1 << bits
    f = [v * float(one) for v in weights_f64(radius, sigma)]
    q = [max(int(math.floor(v)), 0) for v in f]
    rem = one - sum(q)
    if rem % 2:
        q[radius] += 1
        rem -= 1
    for d in sorted(range(1, radius + 1), key=lambda d: (-(f[radius + d] - math.floor(f[radius + d])), d)):
        if rem < 2:
            break
        q[radius - d] += 1
        q[radius + d] += 1
        rem -= 2
    q[radius] += rem
    return q


def _blur_pass(src: np.ndarray, weights, radius: int, border: str, axis: int, step) -> np.ndarray:
    """acc = step(weight, value, acc) for every tap in order along ``axis`` of an (H, W, C)
    array (0 for the Zero border's pixels outside)."""
    n = src.shape[axis]
    idx, zero = border_index(n, radius, border)
    acc = np.zeros(src.shape, src.dtype)
    for t in range(2 * radius + 1):
        vals = np.take(src, idx[:, t], axis=axis)
        if zero[:, t].any():
            shape = [1, 1, 1]
            shape[axis] = n
            vals = np.where(zero[:, t].reshape(shape), src.dtype.type(0), vals).astype(src.dtype)
        acc = step(weights[t], vals, acc)
    return acc


def blur(img: np.ndarray, radius: int, sigma=None, border: str = "clamp") -> np.ndarray:
    """The blur of an image of any format, channel by channel, of its shape and dtype."""
    if sigma is None:
        sigma = radius / 2.0
    if img.size == 0 or (radius == 0 and sigma == 0):
        return img.copy()
    x = img[..., None] if img.ndim == 2 else img
    if img.dtype == np.float32:
        wt = np.array(weights_f64(radius, sigma), np.float64).astype(np.float32)

        def fma(w, v, acc):
            with np.errstate(invalid="ignore", over="ignore"):  # NaN and infinities
                return fma_f32_arrays(np.full(v.shape, w, np.float32), v, acc)

        out = _blur_pass(_blur_pass(x, wt, radius, border, 1, fma), wt, radius, border, 0, fma)
        return out.reshape(img.shape)
    bits, h_shift, v_shift = (16, 8, 24) if img.dtype == np.uint8 else (24, 16, 32)
    q = [np.uint64(v) for v in blur_weights_fixed(radius, sigma, bits)]

    def mad(w, v, acc):
        return acc + w * v

    h = _blur_pass(x.astype(np.uint64), q, radius, border, 1, mad)
    t = (h + np.uint64(1 << (h_shift - 1))) >> np.uint64(h_shift)
    v = _blur_pass(t, q, radius, border, 0, mad)
    out = (v + np.uint64(1 << (v_shift - 1))) >> np.uint64(v_shift)
    return out.astype(img.dtype).reshape(img.shape)
