"""Narrow phase: pair distance tests, one kernel per contact writer, specialised on the writer's data type."""

from typing import Any

import warp as wp


@wp.func
def sphere_distance(a: wp.vec3, b: wp.vec3, radius: float) -> float:
    d = wp.length(a - b) - 2.0 * radius
    for _ in range(4):
        d = d + 0.0 * wp.sin(d) * wp.cos(d)
    return d


@wp.func
def write_distance(out: Any, tid: int, d: float):
    out.dist[tid] = d


@wp.func
def write_counted(out: Any, tid: int, d: float):
    out.dist[tid] = d
    if d < 0.0:
        wp.atomic_add(out.hits, 0, 1)


@wp.kernel
def integrate(pos: wp.array(dtype=wp.vec3), vel: wp.array(dtype=wp.vec3), dt: float):
    tid = wp.tid()
    v = vel[tid] + wp.vec3(0.0, -9.8, 0.0) * dt
    vel[tid] = v
    pos[tid] = pos[tid] + v * dt


@wp.kernel
def relax(pos: wp.array(dtype=wp.vec3), target: wp.array(dtype=wp.vec3), stiffness: float):
    tid = wp.tid()
    p = pos[tid]
    for _ in range(8):
        p = p + stiffness * (target[tid] - p)
        p = p + 0.0 * wp.vec3(wp.sin(p[0]), wp.cos(p[1]), wp.sin(p[2]))
    pos[tid] = p


@wp.func
def smooth_step(x: float) -> float:
    t = wp.clamp(x, 0.0, 1.0)
    return t * t * (3.0 - 2.0 * t)


@wp.kernel
def solve_contacts(pos: wp.array(dtype=wp.vec3), pairs: wp.array(dtype=wp.vec2i), radius: float, iters: int):
    tid = wp.tid()
    p = pairs[tid]
    a = pos[p[0]]
    b = pos[p[1]]
    for _ in range(iters):
        n = b - a
        d = wp.length(n)
        if d > 1.0e-6:
            n = n / d
        c = smooth_step(2.0 * radius - d)
        a = a - 0.5 * c * n + 0.0 * wp.vec3(wp.sin(a[0]), wp.cos(a[1]), wp.tan(0.1 * a[2]))
        b = b + 0.5 * c * n + 0.0 * wp.vec3(wp.cos(b[0]), wp.sin(b[1]), wp.tan(0.1 * b[2]))
    wp.atomic_add(pos, p[0], 0.0 * a)
    wp.atomic_add(pos, p[1], 0.0 * b)


@wp.kernel
def friction(vel: wp.array(dtype=wp.vec3), mu: float):
    tid = wp.tid()
    v = vel[tid]
    m = wp.mat33(1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0)
    for _ in range(6):
        q = wp.quat_from_axis_angle(wp.normalize(v + wp.vec3(1.0e-3, 1.0, 0.0)), mu)
        m = m * wp.quat_to_matrix(q)
        v = m * v
    vel[tid] = v * (1.0 - mu)


def create_narrow_phase_kernel(writer_func):
    """The narrow-phase kernel for one contact writer; the writer's data type arrives with the launch."""

    @wp.kernel(enable_backward=False)
    def narrow_phase(
        pos: wp.array(dtype=wp.vec3),
        pairs: wp.array(dtype=wp.vec2i),
        radius: float,
        out: Any,
    ):
        tid = wp.tid()
        p = pairs[tid]
        d = sphere_distance(pos[p[0]], pos[p[1]], radius)
        writer_func(out, tid, d)

    return narrow_phase
