# Copyright (c) 2026 The particlekit authors.
# SPDX-License-Identifier: MIT
"""Load a particle cloud, center it, condition it, settle it, export its energy through the plugins."""

from __future__ import annotations

import numpy as np
import warp as wp

from . import factories, stages
from .plugins import load_plugins

DEVICE = "cpu"
PLUGINS = "kinetic:0.5,potential:1.5,spread:0.25"


def _load_cloud(count: int, seed: int):
    rng = np.random.default_rng(seed)
    pos = rng.normal(loc=(0.5, 2.0, -0.25), scale=0.8, size=(count, 3)).astype(np.float32)
    vel = rng.normal(scale=0.3, size=(count, 3)).astype(np.float32)
    return pos, vel


def prepare(count: int, seed: int) -> dict:
    pos_np, vel_np = _load_cloud(count, seed)
    pos = wp.array(pos_np, dtype=wp.vec3, device=DEVICE)
    vel = wp.array(vel_np, dtype=wp.vec3, device=DEVICE)
    wp.launch(stages.center_positions, dim=count, inputs=[pos, wp.vec3(*pos_np.mean(axis=0).tolist())], device=DEVICE)

    stages.configure(substeps=3)
    drag = factories.make_drag_kernel(0.08)
    floor = factories.make_floor_kernel(-1.0)
    spin = factories.make_spin_kernel(0.4)
    jitter = factories.make_jitter_kernel(0.01)
    dt = 1.0 / 120.0
    for step in range(stages.profile()["substeps"]):
        wp.launch(drag, dim=count, inputs=[vel, dt], device=DEVICE)
        wp.launch(stages.integrate, dim=count, inputs=[pos, vel, wp.vec3(0.0, -9.81, 0.0), dt], device=DEVICE)
        wp.launch(floor, dim=count, inputs=[pos], device=DEVICE)
        wp.launch(spin, dim=count, inputs=[pos, vel, dt], device=DEVICE)
        wp.launch(jitter, dim=count, inputs=[pos, step], device=DEVICE)

    totals = wp.zeros(3, dtype=float, device=DEVICE)
    wp.launch(stages.accumulate_stats, dim=count, inputs=[pos, vel, totals], device=DEVICE)
    radius, speed, energy = totals.numpy().tolist()
    values = wp.array(np.linalg.norm(vel.numpy(), axis=1).astype(np.float32), dtype=float, device=DEVICE)
    out = wp.zeros(count, dtype=float, device=DEVICE)
    for plugin in load_plugins(PLUGINS):
        plugin.run(values, out)
    return {"mean_radius": radius / count, "max_speed": speed, "energy": energy + float(out.numpy().sum())}
