"""Drop a set of bodies for a while, then run the state checks of the example."""

from __future__ import annotations

import warp as wp

from . import bodies
from .checks import check_bodies

DEVICE = "cpu"


@wp.func
def above_floor(q: wp.transform, qd: wp.spatial_vector) -> bool:
    return wp.transform_get_translation(q)[1] > 0.05


def upright(q, qd):
    return wp.quat_rotate(wp.transform_get_rotation(q), wp.vec3(0.0, 1.0, 0.0))[1] > 0.0


def run(count: int, steps: int, seed: int):
    q, qd = bodies.make_bodies(count, seed)
    for _ in range(steps):
        wp.launch(bodies.integrate_bodies, dim=count, inputs=[q, qd, 0.01], device=DEVICE)
    slow = lambda q, qd: wp.length(wp.spatial_top(qd)) < 3.0  # noqa: E731
    inside = lambda q, qd: wp.abs(wp.transform_get_translation(q)[0]) < 2.0  # noqa: E731
    return [
        check_bodies(q, qd, "above floor", above_floor),
        check_bodies(q, qd, "slow", slow),
        check_bodies(q, qd, "inside", inside, indices=list(range(0, count, 2))),
        check_bodies(q, qd, "upright", upright),
    ]
