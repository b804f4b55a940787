"""Run the checks for every dtype, optionally registering all kernels before the first launch."""

from __future__ import annotations

import numpy as np

from . import checks

DTYPES = (np.int32, np.float32, np.float64)


def register_all() -> None:
    empty = np.zeros(0)
    for dtype in DTYPES:
        checks.check_unary(dtype, empty, register_only=True)
        checks.check_binary(dtype, empty, empty, register_only=True)


def run_all(count: int, seed: int) -> list[tuple[str, float, float]]:
    rng = np.random.default_rng(seed)
    x = rng.uniform(-50.0, 50.0, count)
    y = rng.uniform(-50.0, 50.0, count)
    rows = []
    for dtype in DTYPES:
        if np.issubdtype(dtype, np.integer):
            xs, ys = np.round(x), np.round(y)
        else:
            xs, ys = x, y
        u = checks.check_unary(dtype, xs)
        b = checks.check_binary(dtype, xs, ys)
        rows.append((np.dtype(dtype).name, float(u.astype(np.float64).mean()), float(b.astype(np.float64).max())))
    return rows
