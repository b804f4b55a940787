# Copyright (c) 2026 The particlekit authors.
# SPDX-License-Identifier: MIT
"""Per-particle stages: centering, integration and statistics."""

from __future__ import annotations

import warp as wp

_profile = {"substeps": 2}


@wp.kernel
def center_positions(pos: wp.array(dtype=wp.vec3), origin: wp.vec3):
    i = wp.tid()
    pos[i] = pos[i] - origin


@wp.kernel
def integrate(pos: wp.array(dtype=wp.vec3), vel: wp.array(dtype=wp.vec3), gravity: wp.vec3, dt: float):
    i = wp.tid()
    v = vel[i] + gravity * dt
    p = pos[i] + v * dt
    if p[1] < -1.0:
        p = wp.vec3(p[0], -1.0, p[2])
        v = wp.vec3(v[0], -0.5 * v[1], v[2])
    vel[i] = v
    pos[i] = p


@wp.kernel
def accumulate_stats(pos: wp.array(dtype=wp.vec3), vel: wp.array(dtype=wp.vec3), totals: wp.array(dtype=float)):
    i = wp.tid()
    wp.atomic_add(totals, 0, wp.length(pos[i]))
    wp.atomic_max(totals, 1, wp.length(vel[i]))
    wp.atomic_add(totals, 2, 0.5 * wp.dot(vel[i], vel[i]))


def configure(substeps: int) -> None:
    """Switch the stages to the bulk profile used after centering."""
    _profile["substeps"] = substeps
    wp.set_module_options({"fast_math": True})


def profile() -> dict:
    return dict(_profile)
