"""Two phases of element-wise processing: a float32/vec3 pass, then a float64 refinement."""

from __future__ import annotations

import numpy as np
import warp as wp

from .funcs import soften

DEVICE = "cpu"


def coarse_phase(values: np.ndarray, offsets: np.ndarray, points: np.ndarray, rounds: int):
    a = wp.array(values.astype(np.float32), dtype=wp.float32, device=DEVICE)
    b = wp.array(offsets.astype(np.float32), dtype=wp.float32, device=DEVICE)
    p = wp.array(points.astype(np.float32), dtype=wp.vec3, device=DEVICE)
    for _ in range(rounds):
        a = wp.map(soften, a, device=DEVICE)
        a = wp.map(lambda x, y: x * 2.0 + y, a, b, device=DEVICE)
        p = wp.map(soften, p, device=DEVICE)
    lengths = wp.map(lambda v: wp.length(v), p, device=DEVICE)
    return a.numpy().astype(np.float64), lengths.numpy().astype(np.float64)


def refine_phase(values: np.ndarray, rounds: int) -> np.ndarray:
    x = wp.array(values.astype(np.float64), dtype=wp.float64, device=DEVICE)
    for _ in range(rounds):
        x = wp.map(soften, x, device=DEVICE)
    return x.numpy()
