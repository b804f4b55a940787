"""Module-level step kernel: semi-implicit Euler for springs pulling towards the origin."""

from __future__ import annotations

import warp as wp

DEVICE = "cpu"


@wp.kernel
def step_kernel(
    stiffness: wp.array(dtype=float),
    qpos: wp.array2d(dtype=float),
    qvel: wp.array2d(dtype=float),
    force: wp.array2d(dtype=float),
    time: wp.array(dtype=float),
    nstep: wp.array(dtype=int),
    dt: float,
):
    w, b = wp.tid()
    f = force[w, b] - stiffness[b] * qpos[w, b] - 0.1 * qvel[w, b]
    v = qvel[w, b] + dt * f
    qvel[w, b] = v
    qpos[w, b] = qpos[w, b] + dt * v
    force[w, b] = 0.5 * f
    if b == 0:
        time[w] = time[w] + dt
        nstep[w] = nstep[w] + 1


def step(model, data, dt: float) -> None:
    wp.launch(
        step_kernel,
        dim=(model.nworld, model.nbody),
        inputs=[model.stiffness, data.qpos, data.qvel, data.force, data.time, data.nstep, dt],
        device=DEVICE,
    )
