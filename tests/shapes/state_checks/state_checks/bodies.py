"""Module-level body integration: move and spin bodies by their velocities."""

from __future__ import annotations

import numpy as np
import warp as wp

DEVICE = "cpu"


@wp.kernel
def integrate_bodies(q: wp.array(dtype=wp.transform), qd: wp.array(dtype=wp.spatial_vector), dt: float):
    i = wp.tid()
    v = wp.spatial_top(qd[i])
    w = wp.spatial_bottom(qd[i])
    p = wp.transform_get_translation(q[i]) + dt * v
    r = wp.transform_get_rotation(q[i])
    r = wp.normalize(r + 0.5 * dt * wp.quat(w[0], w[1], w[2], 0.0) * r)
    v = v + dt * wp.vec3(0.0, -9.8, 0.0)
    if p[1] < 0.0:
        p = wp.vec3(p[0], 0.0, p[2])
        v = wp.vec3(v[0], -0.5 * v[1], v[2])
    q[i] = wp.transform(p, r)
    qd[i] = wp.spatial_vector(v, w)


def make_bodies(count: int, seed: int):
    rng = np.random.default_rng(seed)
    pos = rng.uniform((-1.5, 0.2, -1.5), (1.5, 2.0, 1.5), (count, 3))
    rot = rng.normal(size=(count, 4))
    rot /= np.linalg.norm(rot, axis=1, keepdims=True)
    q = np.concatenate([pos, rot], axis=1).astype(np.float32)
    qd = np.concatenate([rng.normal(scale=1.5, size=(count, 3)), rng.normal(scale=0.5, size=(count, 3))], 1)
    return (
        wp.array(q, dtype=wp.transform, device=DEVICE),
        wp.array(qd.astype(np.float32), dtype=wp.spatial_vector, device=DEVICE),
    )
