"""Module-level solver kernels: per-vertex system blocks and vector updates."""

from __future__ import annotations

import warp as wp


@wp.kernel
def assemble_blocks(
    mass: wp.array(dtype=float),
    stiffness: wp.array(dtype=float),
    normal: wp.array(dtype=wp.vec3),
    dt: float,
    blocks: wp.array(dtype=wp.mat33),
):
    i = wp.tid()
    n = normal[i]
    h2 = dt * dt
    blocks[i] = wp.identity(n=3, dtype=float) * (mass[i] + h2 * stiffness[i]) + wp.outer(n, n) * (
        4.0 * h2 * stiffness[i]
    )


@wp.kernel
def axpy(x: wp.array(dtype=wp.vec3), a: float, y: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    y[i] = y[i] + a * x[i]


@wp.kernel
def xpby(x: wp.array(dtype=wp.vec3), b: float, y: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    y[i] = x[i] + b * y[i]


@wp.kernel
def advance(pos: wp.array(dtype=wp.vec3), vel: wp.array(dtype=wp.vec3), dv: wp.array(dtype=wp.vec3), dt: float):
    i = wp.tid()
    v = vel[i] + dv[i]
    vel[i] = v
    pos[i] = pos[i] + dt * v
