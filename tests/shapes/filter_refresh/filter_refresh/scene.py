"""A box of moving and static boxes, swept for overlapping pairs every step."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import warp as wp

from .broadphase import SKIP_SAME_GROUP, SKIP_STATIC, broadphase, move_boxes

DEVICE = "cpu"


def run(boxes: int, steps: int, fixed: bool, seed: int):
    rng = np.random.default_rng(seed)
    extent = 6.0
    static = (rng.uniform(size=boxes) < 0.3).astype(np.int32)
    vel = rng.normal(scale=1.0, size=(boxes, 3)) * (1 - static)[:, None]
    model = SimpleNamespace(
        device=DEVICE,
        filter_mode=SKIP_SAME_GROUP,
        group=wp.array(rng.integers(0, 4, size=boxes).astype(np.int32), dtype=int, device=DEVICE),
        is_static=wp.array(static, dtype=int, device=DEVICE),
    )
    as_vec = lambda a: wp.array(a.astype(np.float32), dtype=wp.vec3, device=DEVICE)  # noqa: E731
    center = as_vec(rng.uniform(0.0, extent, size=(boxes, 3)))
    velocity = as_vec(vel)
    half = as_vec(rng.uniform(0.1, 0.4, size=(boxes, 3)))
    data = SimpleNamespace(
        lower=wp.zeros(boxes, dtype=wp.vec3, device=DEVICE), upper=wp.zeros(boxes, dtype=wp.vec3, device=DEVICE)
    )

    counts = []
    for index in range(steps):
        if index == 8:
            model.filter_mode = SKIP_SAME_GROUP | SKIP_STATIC  # the scenario turns static-static filtering on
        wp.launch(
            move_boxes,
            dim=boxes,
            inputs=[center, velocity, half, 0.05, extent],
            outputs=[data.lower, data.upper],
            device=DEVICE,
        )
        counts.append(broadphase(model, data, fixed))
    return counts
