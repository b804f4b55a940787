"""Build a small deformed tetrahedral block and evaluate every material on it."""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np
import warp as wp

from .materials import Hooke, SoftNeo, StVenant

DEVICE = "cpu"


@dataclass
class TetMesh:
    points: wp.array
    tets: wp.array
    rest_inv: wp.array
    volume: wp.array


def _block(n: int, spacing: float):
    grid = np.stack(np.meshgrid(*(np.arange(n + 1),) * 3, indexing="ij"), axis=-1).reshape(-1, 3)
    index = lambda i, j, k: (i * (n + 1) + j) * (n + 1) + k  # noqa: E731
    tets = []
    for i, j, k in itertools.product(range(n), repeat=3):
        corner = np.array([i, j, k])
        for order in itertools.permutations(range(3)):
            path = [corner.copy()]
            for axis in order:
                step = path[-1].copy()
                step[axis] += 1
                path.append(step)
            tets.append([index(*p) for p in path])
    return grid.astype(np.float64) * spacing, np.array(tets, dtype=np.int32)


def build_mesh(cells_per_axis: int, seed: int) -> TetMesh:
    rng = np.random.default_rng(seed)
    rest, tets = _block(cells_per_axis, spacing=0.5)
    ds = np.stack([rest[tets[:, a]] - rest[tets[:, 0]] for a in (1, 2, 3)], axis=-1)
    rest_inv = np.linalg.inv(ds)
    volume = np.abs(np.linalg.det(ds)) / 6.0
    stretch = np.diag([1.15, 0.95, 1.05])
    deformed = rest @ stretch.T + rng.normal(scale=0.03, size=rest.shape)
    return TetMesh(
        points=wp.array(deformed.astype(np.float32), dtype=wp.vec3, device=DEVICE),
        tets=wp.array(tets, dtype=wp.vec4i, device=DEVICE),
        rest_inv=wp.array(rest_inv.astype(np.float32), dtype=wp.mat33, device=DEVICE),
        volume=wp.array(volume.astype(np.float32), dtype=wp.float32, device=DEVICE),
    )


def evaluate_all(cells_per_axis: int, seed: int):
    mesh = build_mesh(cells_per_axis, seed)
    rows = []
    for material in (Hooke(mu=40.0, lam=120.0), StVenant(mu=40.0, lam=120.0), SoftNeo(mu=40.0, lam=120.0)):
        energy, grad_norm = material.evaluate(mesh, DEVICE)
        rows.append((material.name, energy, grad_norm))
    return rows
