"""A jittered grid mesh: points, edges, triangles and their rest measures."""

from __future__ import annotations

import numpy as np
import warp as wp

DEVICE = "cpu"


@wp.kernel
def deform(points: wp.array2d(dtype=float), amount: float):
    i = wp.tid()
    x = points[i, 0]
    points[i, 0] = x * (1.0 + amount)
    points[i, 1] = points[i, 1] + amount * wp.sin(3.0 * x)


def grid_mesh(n: int, seed: int):
    rng = np.random.default_rng(seed)
    ij = np.stack(np.meshgrid(np.arange(n), np.arange(n), indexing="ij"), axis=-1).reshape(-1, 2)
    pts = ij.astype(np.float64) / (n - 1) + rng.normal(scale=0.01, size=ij.shape)
    idx = np.arange(n * n).reshape(n, n)
    edges = np.concatenate(
        [np.stack([idx[:-1, :].ravel(), idx[1:, :].ravel()], 1), np.stack([idx[:, :-1].ravel(), idx[:, 1:].ravel()], 1)]
    )
    a, b, c, d = idx[:-1, :-1].ravel(), idx[1:, :-1].ravel(), idx[:-1, 1:].ravel(), idx[1:, 1:].ravel()
    tris = np.concatenate([np.stack([a, b, d], 1), np.stack([a, d, c], 1)])
    return pts, edges.astype(np.int32), tris.astype(np.int32)


def deformed(points: np.ndarray, amount: float) -> np.ndarray:
    """Deform the float32 copy of the points on the device (a fixed, module-level kernel)."""
    arr = wp.array(points.astype(np.float32), dtype=float, device=DEVICE)
    wp.launch(deform, dim=points.shape[0], inputs=[arr, amount], device=DEVICE)
    return arr.numpy()


def measures(points: np.ndarray, simplices: np.ndarray) -> np.ndarray:
    p = points[simplices]
    if simplices.shape[1] == 2:
        return np.linalg.norm(p[:, 1] - p[:, 0], axis=1)
    u, v = p[:, 1] - p[:, 0], p[:, 2] - p[:, 0]
    gram = (u * u).sum(1) * (v * v).sum(1) - (u * v).sum(1) ** 2
    return 0.5 * np.sqrt(np.maximum(gram, 0.0))
