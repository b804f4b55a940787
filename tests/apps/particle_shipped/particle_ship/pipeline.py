# Copyright (c) 2026 The particle_ship authors.
# SPDX-License-Identifier: Apache-2.0
"""Load a particle cloud, center it, settle it with a few damped steps, export its energy."""

from __future__ import annotations

import numpy as np
import warp as wp

from . import stages
from .plugins import load_plugins

DEVICE = "cpu"
PLUGINS = "kinetic:0.5,potential:1.5,spread:0.25"


def _load_cloud(count: int, seed: int):
    rng = np.random.default_rng(seed)
    pos = rng.normal(loc=(0.5, 2.0, -0.25), scale=0.8, size=(count, 3)).astype(np.float32)
    vel = rng.normal(scale=0.3, size=(count, 3)).astype(np.float32)
    return pos, vel


def run(count: int, seed: int) -> dict:
    pos_np, vel_np = _load_cloud(count, seed)
    pos = wp.array(pos_np, dtype=wp.vec3, device=DEVICE)
    vel = wp.array(vel_np, dtype=wp.vec3, device=DEVICE)

    center = stages.make_center_kernel()
    wp.launch(center, dim=count, inputs=[pos, wp.vec3(*pos_np.mean(axis=0).tolist())], device=DEVICE)

    stages.configure(substeps=4)
    dt = 1.0 / 120.0
    for _ in range(stages.profile()["substeps"]):
        drag = stages.make_drag_kernel()
        wp.launch(drag, dim=count, inputs=[vel, dt], device=DEVICE)
        integrate = stages.make_integrate_kernel()
        wp.launch(integrate, dim=count, inputs=[pos, vel, dt], device=DEVICE)

    totals = wp.zeros(2, dtype=float, device=DEVICE)
    stats = stages.make_stats_kernel()
    wp.launch(stats, dim=count, inputs=[pos, vel, totals], device=DEVICE)
    radius, speed = totals.numpy().tolist()

    speeds = wp.array(np.linalg.norm(vel.numpy(), axis=1).astype(np.float32), dtype=float, device=DEVICE)
    out = wp.zeros(count, dtype=float, device=DEVICE)
    for plugin in load_plugins(PLUGINS):
        plugin.run(speeds, out)
    return {"mean_radius": radius / count, "max_speed": speed, "energy": float(out.numpy().sum())}
