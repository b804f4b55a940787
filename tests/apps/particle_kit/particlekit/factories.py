# Copyright (c) 2026 The particlekit authors.
# SPDX-License-Identifier: MIT
"""Conditioning kernels, each specialised on its constant by a factory."""

from __future__ import annotations

import warp as wp


def make_drag_kernel(coef: float):
    @wp.kernel(module="unique")
    def drag(vel: wp.array(dtype=wp.vec3), dt: float):
        i = wp.tid()
        v = vel[i]
        vel[i] = v * (1.0 - wp.min(coef * wp.length(v) * dt, 0.5))

    return drag


def make_floor_kernel(floor: float):
    @wp.kernel(module="unique")
    def clamp_floor(pos: wp.array(dtype=wp.vec3)):
        i = wp.tid()
        p = pos[i]
        pos[i] = wp.vec3(p[0], wp.max(p[1], floor), p[2])

    return clamp_floor


def make_spin_kernel(rate: float):
    @wp.kernel(module="unique")
    def spin(pos: wp.array(dtype=wp.vec3), vel: wp.array(dtype=wp.vec3), dt: float):
        i = wp.tid()
        q = wp.quat_from_axis_angle(wp.vec3(0.0, 1.0, 0.0), rate * dt)
        pos[i] = wp.quat_rotate(q, pos[i])
        vel[i] = wp.quat_rotate(q, vel[i])

    return spin


def make_jitter_kernel(scale: float):
    @wp.kernel(module="unique")
    def jitter(pos: wp.array(dtype=wp.vec3), seed: int):
        i = wp.tid()
        state = wp.rand_init(seed, i)
        pos[i] = pos[i] + scale * wp.vec3(wp.randf(state) - 0.5, wp.randf(state) - 0.5, wp.randf(state) - 0.5)

    return jitter
