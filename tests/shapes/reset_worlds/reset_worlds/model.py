"""A toy batch of worlds: each world holds a few point masses on springs."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import warp as wp

DEVICE = "cpu"


@dataclass
class Model:
    nworld: int
    nbody: int
    qpos0: wp.array2d
    stiffness: wp.array


@dataclass
class Data:
    qpos: wp.array2d
    qvel: wp.array2d
    force: wp.array2d
    time: wp.array
    nstep: wp.array


def make(nworld: int, nbody: int, seed: int):
    rng = np.random.default_rng(seed)
    q0 = rng.uniform(-1.0, 1.0, (nworld, nbody)).astype(np.float32)
    k = rng.uniform(1.0, 4.0, nbody).astype(np.float32)
    model = Model(nworld, nbody, wp.array(q0, dtype=float, device=DEVICE), wp.array(k, dtype=float, device=DEVICE))
    data = Data(
        qpos=wp.array(q0, dtype=float, device=DEVICE),
        qvel=wp.zeros((nworld, nbody), dtype=float, device=DEVICE),
        force=wp.zeros((nworld, nbody), dtype=float, device=DEVICE),
        time=wp.zeros(nworld, dtype=float, device=DEVICE),
        nstep=wp.zeros(nworld, dtype=int, device=DEVICE),
    )
    return model, data
