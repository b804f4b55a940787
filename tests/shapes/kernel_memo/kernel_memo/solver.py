"""A toy batched constraint solver: smooth or warm-started accelerations, contact projection, integration."""

import numpy as np
import warp as wp

from .memo import memo_kernel

DEVICE = "cpu"
WARM_AFTER = 10


@memo_kernel
def init_accel(warm: bool, sparse: bool):
    @wp.kernel(module="unique", enable_backward=False)
    def init_qacc(
        qpos: wp.array2d(dtype=float),
        qvel: wp.array2d(dtype=float),
        qacc_warm: wp.array2d(dtype=float),
        stiffness: wp.array(dtype=float),
        qacc: wp.array2d(dtype=float),
    ):
        w, i = wp.tid()
        smooth = -stiffness[i] * qpos[w, i] - 0.3 * qvel[w, i]
        if wp.static(warm):
            qacc[w, i] = 0.5 * (smooth + qacc_warm[w, i])
        else:
            qacc[w, i] = smooth
        if wp.static(sparse):
            qacc[w, i] = qacc[w, i] * 0.98

    return init_qacc


@memo_kernel
def project_contacts(sparse: bool):
    @wp.kernel(module="unique", enable_backward=False)
    def project(
        qpos: wp.array2d(dtype=float),
        qvel: wp.array2d(dtype=float),
        qacc: wp.array2d(dtype=float),
        floor: float,
        pushes: wp.array(dtype=int),
    ):
        w, i = wp.tid()
        if qpos[w, i] < floor and qvel[w, i] < 0.0:
            qacc[w, i] = qacc[w, i] + 40.0 * (floor - qpos[w, i])
            if wp.static(not sparse):
                wp.atomic_add(pushes, 0, 1)

    return project


@wp.kernel
def integrate(
    qpos: wp.array2d(dtype=float),
    qvel: wp.array2d(dtype=float),
    qacc: wp.array2d(dtype=float),
    qacc_warm: wp.array2d(dtype=float),
    dt: float,
):
    w, i = wp.tid()
    v = qvel[w, i] + dt * qacc[w, i]
    qvel[w, i] = v
    qpos[w, i] = qpos[w, i] + dt * v
    qacc_warm[w, i] = qacc[w, i]


def step(model: dict, data: dict, index: int) -> None:
    warm = index >= WARM_AFTER
    dims = data["qpos"].shape
    wp.launch(
        init_accel(warm, model["sparse"]),
        dim=dims,
        inputs=[data["qpos"], data["qvel"], data["qacc_warm"], model["stiffness"]],
        outputs=[data["qacc"]],
        device=DEVICE,
    )
    wp.launch(
        project_contacts(model["sparse"]),
        dim=dims,
        inputs=[data["qpos"], data["qvel"], data["qacc"], -0.6, data["pushes"]],
        device=DEVICE,
    )
    wp.launch(
        integrate,
        dim=dims,
        inputs=[data["qpos"], data["qvel"], data["qacc"], data["qacc_warm"], model["dt"]],
        device=DEVICE,
    )


def simulate(worlds: int, steps: int, seed: int) -> dict:
    rng = np.random.default_rng(seed)
    nv = 8
    model = {
        "sparse": False,
        "dt": 0.02,
        "stiffness": wp.array(rng.uniform(2.0, 8.0, size=nv).astype(np.float32), dtype=float, device=DEVICE),
    }
    as_wp = lambda a: wp.array(a.astype(np.float32), dtype=float, device=DEVICE)  # noqa: E731
    data = {
        "qpos": as_wp(rng.uniform(-1.0, 1.0, size=(worlds, nv))),
        "qvel": as_wp(rng.normal(scale=0.5, size=(worlds, nv))),
        "qacc": wp.zeros((worlds, nv), dtype=float, device=DEVICE),
        "qacc_warm": wp.zeros((worlds, nv), dtype=float, device=DEVICE),
        "pushes": wp.zeros(1, dtype=int, device=DEVICE),
    }
    for index in range(steps):
        step(model, data, index)
    return {
        "qpos": float(np.abs(data["qpos"].numpy().astype(np.float64)).mean()),
        "qvel": float(np.abs(data["qvel"].numpy().astype(np.float64)).mean()),
        "pushes": int(data["pushes"].numpy()[0]),
        "warm_steps": max(0, steps - WARM_AFTER),
    }
