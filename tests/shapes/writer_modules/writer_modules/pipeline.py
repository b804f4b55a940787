"""Collision pipelines: each owns a contact kernel chosen by its writer and its speculative flag."""

from __future__ import annotations

import numpy as np
import warp as wp

from .contacts import make_contact_kernel
from .writers import write_midpoint, write_normal

DEVICE = "cpu"


class CollisionPipeline:
    def __init__(self, writer, speculative: bool, capacity: int):
        self.kernel = make_contact_kernel(writer, speculative=speculative)
        self.capacity = capacity

    def collide(self, pairs, centers, radii, margin: float):
        count = wp.zeros(1, dtype=int, device=DEVICE)
        points = wp.zeros(self.capacity, dtype=wp.vec3, device=DEVICE)
        values = wp.zeros(self.capacity, dtype=float, device=DEVICE)
        wp.launch(
            self.kernel,
            dim=pairs.shape[0],
            inputs=[pairs, centers, radii, margin],
            outputs=[count, points, values],
            device=DEVICE,
        )
        n = min(int(count.numpy()[0]), self.capacity)
        measure = float(
            values.numpy()[:n].astype(np.float64).sum() + np.abs(points.numpy()[:n].astype(np.float64)).sum() * 1e-3
        )
        return n, measure


def _scene(spheres: int, rng):
    centers = rng.uniform(0.0, 6.0, size=(spheres, 3))
    radii = rng.uniform(0.1, 0.35, size=spheres)
    diff = centers[:, None, :] - centers[None, :, :]
    dist = np.sqrt((diff * diff).sum(-1))
    i, j = np.nonzero(np.triu(dist < 1.0, k=1))
    pairs = np.stack([i, j], axis=1).astype(np.int32)
    return (
        wp.array(pairs, dtype=wp.vec2i, device=DEVICE),
        wp.array(centers.astype(np.float32), dtype=wp.vec3, device=DEVICE),
        wp.array(radii.astype(np.float32), dtype=float, device=DEVICE),
    )


def run(spheres: int, seed: int):
    rng = np.random.default_rng(seed)
    pairs, centers, radii = _scene(spheres, rng)
    capacity = pairs.shape[0]
    pipelines = {
        (name, flag): CollisionPipeline(writer, flag, capacity)
        for name, writer in (("midpoint", write_midpoint), ("normal", write_normal))
        for flag in (False, True)
    }
    rows = []
    for name in ("midpoint", "normal"):
        exact, measure = pipelines[(name, False)].collide(pairs, centers, radii, 0.05)
        speculative, _ = pipelines[(name, True)].collide(pairs, centers, radii, 0.05)
        rows.append((name, exact, speculative, measure))
    return rows
