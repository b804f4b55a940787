"""Joint helpers. They read the solver's joint limit, so the solver imports this module late."""

import warp as wp

from .solver import JOINT_LIMIT


@wp.func
def integrate_joint(q: float, dq: float) -> float:
    return wp.clamp(q + dq, -JOINT_LIMIT, JOINT_LIMIT)


@wp.func
def link_point(q: wp.array2d(dtype=float), lengths: wp.array(dtype=float), b: int, last: int, ndof: int) -> wp.vec2:
    theta = float(0.0)
    p = wp.vec2(0.0, 0.0)
    for m in range(ndof):
        theta += q[b, m]
        if m <= last:
            p += lengths[m] * wp.vec2(wp.cos(theta), wp.sin(theta))
    return p
