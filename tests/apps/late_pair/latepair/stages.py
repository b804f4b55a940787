"""Per-particle stages: module options set at import, then one more switched on after the first launch (CS-3)."""

import warp as wp

wp.set_module_options({"enable_backward": False})


@wp.func
def swirl(p: wp.vec3, q: wp.vec3, s: float):
    r = p
    for k in range(3):
        r = r + wp.cross(q, r) * (s / float(k + 1)) + wp.vec3(wp.sin(r[0] * s), wp.cos(r[1] + s), wp.tanh(r[2]))
        r = wp.normalize(r + q * 0.01) * wp.length(p + q)
    return r


@wp.kernel
def center(pos: wp.array(dtype=wp.vec3), origin: wp.vec3):
    i = wp.tid()
    pos[i] = pos[i] - origin


@wp.kernel
def advect(pos: wp.array(dtype=wp.vec3), vel: wp.array(dtype=wp.vec3), s: float):
    i = wp.tid()
    p = pos[i]
    q = vel[i]
    for j in range(3):
        p = swirl(p, q, s + float(j))
        q = swirl(q, p, s - float(j))
    pos[i] = p * 0.001
    vel[i] = q * 0.001


def configure() -> None:
    """Switch the stages to the fast profile used after centering."""
    wp.set_module_options({"fast_math": True})
