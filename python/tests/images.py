"""Test images: random, few-valued (many ties), and real-looking scenes."""

from __future__ import annotations

import numpy as np


def random_image(h: int, w: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 256, (h, w, 4), dtype=np.uint8)


def few_values(h: int, w: int, seed: int) -> np.ndarray:
    """Pixels from a handful of colours: luminance ties everywhere (the scan-index rule)."""
    rng = np.random.default_rng(seed)
    palette = np.array(
        [[0, 0, 0, 255], [255, 255, 255, 255], [255, 255, 255, 0], [10, 200, 30, 255], [90, 90, 90, 9]],
        np.uint8,
    )
    return palette[rng.integers(0, len(palette), (h, w))]


def scene(h: int, w: int, seed: int) -> np.ndarray:
    """A dark, noisy sky with a colour gradient, soft bright markers (some saturated and
    touching) and a bright bar: what star finding and marker tracking see."""
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:h, 0:w].astype(np.float64)
    base = np.stack(
        [
            12 + 30 * x / max(w - 1, 1),
            8 + 20 * y / max(h - 1, 1),
            20 + 10 * np.sin(x / 7.0) * np.cos(y / 5.0),
        ],
        axis=-1,
    )
    base += rng.normal(0, 4, base.shape)
    for _ in range(max(3, h * w // 400)):
        cx, cy = rng.uniform(0, w), rng.uniform(0, h)
        s = rng.uniform(0.6, 3.0)
        peak = rng.uniform(80, 400)
        colour = rng.uniform(0.6, 1.0, 3)
        # Each blob drawn in its own window of ±5 sigma.
        x0, x1 = max(int(cx - 5 * s), 0), min(int(cx + 5 * s) + 1, w)
        y0, y1 = max(int(cy - 5 * s), 0), min(int(cy + 5 * s) + 1, h)
        if x0 >= x1 or y0 >= y1:
            continue
        wy, wx = y[y0:y1, x0:x1], x[y0:y1, x0:x1]
        blob = peak * np.exp(-((wx - cx) ** 2 + (wy - cy) ** 2) / (2 * s * s))
        base[y0:y1, x0:x1] += blob[..., None] * colour
    if h > 4 and w > 4:
        base[h // 3 : h // 3 + 2, w // 4 : w // 2] = 255
    rgb = np.clip(np.rint(base), 0, 255).astype(np.uint8)
    alpha = np.full((h, w, 1), 255, np.uint8)
    return np.concatenate([rgb, alpha], axis=-1)


def images(seeds=(1, 2)):
    """(name, image) pairs covering odd sizes, thin images and ties."""
    out = [("1x1", random_image(1, 1, 7)), ("1x17", random_image(1, 17, 8)), ("13x1", random_image(13, 1, 9))]
    for s in seeds:
        out.append((f"random-{s}", random_image(23 + s, 37 + 2 * s, s)))
        out.append((f"ties-{s}", few_values(19, 31 + s, s)))
        out.append((f"scene-{s}", scene(41, 57 + s, s)))
    return out
