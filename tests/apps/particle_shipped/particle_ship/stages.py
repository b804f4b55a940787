# Copyright (c) 2026 The particle_ship authors.
# SPDX-License-Identifier: Apache-2.0
"""Per-particle stages. Each stage kernel comes from a factory, so a caller can pick its module."""

from __future__ import annotations

import warp as wp

GRAVITY_Y = -9.81
FLOOR_Y = -1.0
DRAG = 0.08

_profile = {"substeps": 2}


def make_center_kernel(*, module: str | None = "unique"):
    @wp.kernel(module=module)
    def center_positions(pos: wp.array(dtype=wp.vec3), origin: wp.vec3):
        i = wp.tid()
        pos[i] = pos[i] - origin

    return center_positions


def make_drag_kernel(*, module: str | None = "unique"):
    @wp.kernel(module=module)
    def apply_drag(vel: wp.array(dtype=wp.vec3), dt: float):
        i = wp.tid()
        v = vel[i]
        vel[i] = v * (1.0 - wp.min(DRAG * wp.length(v) * dt, 0.5))

    return apply_drag


def make_integrate_kernel(*, module: str | None = "unique"):
    @wp.kernel(module=module)
    def integrate(pos: wp.array(dtype=wp.vec3), vel: wp.array(dtype=wp.vec3), dt: float):
        i = wp.tid()
        v = vel[i] + wp.vec3(0.0, GRAVITY_Y, 0.0) * dt
        p = pos[i] + v * dt
        if p[1] < FLOOR_Y:
            p = wp.vec3(p[0], FLOOR_Y, p[2])
            v = wp.vec3(v[0], -0.5 * v[1], v[2])
        vel[i] = v
        pos[i] = p

    return integrate


def make_stats_kernel(*, module: str | None = "unique"):
    @wp.kernel(module=module)
    def accumulate_stats(pos: wp.array(dtype=wp.vec3), vel: wp.array(dtype=wp.vec3), totals: wp.array(dtype=float)):
        i = wp.tid()
        wp.atomic_add(totals, 0, wp.length(pos[i]))
        wp.atomic_max(totals, 1, wp.length(vel[i]))

    return accumulate_stats


def configure(substeps: int) -> None:
    """Switch the stages to the bulk profile used after centering."""
    _profile["substeps"] = substeps
    wp.set_module_options({"fast_math": True})


def profile() -> dict:
    return dict(_profile)
