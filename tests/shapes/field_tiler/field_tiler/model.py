"""A per-body model description and its per-world perturbation."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import warp as wp

DEVICE = "cpu"


@dataclass
class Model:
    body_mass: wp.array  # float32
    body_com: wp.array  # vec3
    body_quat: wp.array  # quat
    body_inertia: wp.array  # mat33
    body_group: wp.array  # int32
    gravity: wp.vec3


@wp.kernel
def scale_masses(mass: wp.array(dtype=float), per_world: int, step: float):
    t = wp.tid()
    mass[t] = mass[t] * (1.0 + step * float(t / per_world))


def make_model(nbody: int, seed: int) -> Model:
    rng = np.random.default_rng(seed)
    quat = rng.normal(size=(nbody, 4))
    quat /= np.linalg.norm(quat, axis=1, keepdims=True)
    diag = rng.uniform(0.1, 1.0, (nbody, 3))
    inertia = np.zeros((nbody, 3, 3))
    inertia[:, [0, 1, 2], [0, 1, 2]] = diag
    return Model(
        body_mass=wp.array(rng.uniform(0.5, 3.0, nbody).astype(np.float32), dtype=float, device=DEVICE),
        body_com=wp.array(rng.normal(scale=0.1, size=(nbody, 3)).astype(np.float32), dtype=wp.vec3, device=DEVICE),
        body_quat=wp.array(quat.astype(np.float32), dtype=wp.quat, device=DEVICE),
        body_inertia=wp.array(inertia.astype(np.float32), dtype=wp.mat33, device=DEVICE),
        body_group=wp.array(rng.integers(0, 4, nbody).astype(np.int32), dtype=wp.int32, device=DEVICE),
        gravity=wp.vec3(0.0, -9.81, 0.0),
    )
