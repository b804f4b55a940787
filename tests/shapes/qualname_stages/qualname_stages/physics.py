"""A particle cloud stepped by three step functions, each defining its kernels when it runs."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import warp as wp

from .staging import stage_kernel

DEVICE = "cpu"


@dataclass
class Model:
    gravity: float = -9.81
    drag: float = 0.4
    dt: float = 1.0 / 60.0
    shells: tuple = ((0.6, 1.0), (2.5, -1.0))  # (radius, +1 keep outside / -1 keep inside)


@dataclass
class State:
    pos: wp.array
    vel: wp.array


@wp.kernel
def summarize(pos: wp.array(dtype=wp.vec3), vel: wp.array(dtype=wp.vec3), totals: wp.array(dtype=float)):
    i = wp.tid()
    wp.atomic_add(totals, 0, wp.length(pos[i]))
    wp.atomic_add(totals, 1, 0.5 * wp.dot(vel[i], vel[i]))
    wp.atomic_add(totals, 2, pos[i][1])


def apply_forces(model: Model, state: State) -> None:
    g = model.gravity
    c = model.drag

    @stage_kernel
    def add_gravity(vel: wp.array(dtype=wp.vec3), dt: float):
        i = wp.tid()
        vel[i] = vel[i] + wp.vec3(0.0, g, 0.0) * dt

    @stage_kernel
    def add_drag(vel: wp.array(dtype=wp.vec3), dt: float):
        i = wp.tid()
        vel[i] = vel[i] * (1.0 - wp.min(c * dt, 0.5))

    n = state.vel.shape[0]
    wp.launch(add_gravity, dim=n, inputs=[state.vel, model.dt], device=DEVICE)
    wp.launch(add_drag, dim=n, inputs=[state.vel, model.dt], device=DEVICE)


def keep_in_shells(model: Model, state: State) -> None:
    for radius, side in model.shells:

        @stage_kernel
        def project_shell(pos: wp.array(dtype=wp.vec3), vel: wp.array(dtype=wp.vec3)):
            i = wp.tid()
            p = pos[i]
            r = wp.length(p)
            if side * (r - radius) < 0.0 and r > 1.0e-6:
                n = p / r
                pos[i] = n * radius
                vn = wp.dot(vel[i], n)
                if side * vn < 0.0:
                    vel[i] = vel[i] - 1.5 * vn * n

        wp.launch(project_shell, dim=state.pos.shape[0], inputs=[state.pos, state.vel], device=DEVICE)


def integrate(model: Model, state: State) -> None:
    @stage_kernel
    def advance(pos: wp.array(dtype=wp.vec3), vel: wp.array(dtype=wp.vec3), dt: float):
        i = wp.tid()
        pos[i] = pos[i] + vel[i] * dt

    wp.launch(advance, dim=state.pos.shape[0], inputs=[state.pos, state.vel, model.dt], device=DEVICE)


def step(model: Model, state: State) -> None:
    apply_forces(model, state)
    integrate(model, state)
    keep_in_shells(model, state)


def simulate(count: int, steps: int, seed: int) -> dict:
    rng = np.random.default_rng(seed)
    directions = rng.normal(size=(count, 3))
    directions /= np.linalg.norm(directions, axis=1, keepdims=True)
    radii = rng.uniform(0.7, 2.3, size=(count, 1))
    state = State(
        pos=wp.array((directions * radii).astype(np.float32), dtype=wp.vec3, device=DEVICE),
        vel=wp.array(rng.normal(scale=0.8, size=(count, 3)).astype(np.float32), dtype=wp.vec3, device=DEVICE),
    )
    model = Model()
    for _ in range(steps):
        step(model, state)
    totals = wp.zeros(3, dtype=float, device=DEVICE)
    wp.launch(summarize, dim=count, inputs=[state.pos, state.vel, totals], device=DEVICE)
    radius, kinetic, height = totals.numpy().tolist()
    return {"steps": steps, "mean_radius": radius / count, "kinetic": kinetic / count, "height": height / count}
