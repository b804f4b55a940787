"""Contact writers: each stores one found contact in its own way."""

from __future__ import annotations

import warp as wp


@wp.func
def write_midpoint(
    slot: int, a: wp.vec3, b: wp.vec3, depth: float, points: wp.array(dtype=wp.vec3), values: wp.array(dtype=float)
):
    points[slot] = 0.5 * (a + b)
    values[slot] = depth


@wp.func
def write_normal(
    slot: int, a: wp.vec3, b: wp.vec3, depth: float, points: wp.array(dtype=wp.vec3), values: wp.array(dtype=float)
):
    points[slot] = wp.normalize(b - a)
    values[slot] = wp.max(depth, 0.0) * wp.max(depth, 0.0)
