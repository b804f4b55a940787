import numpy as np
import warp as wp

from fieldlib.kernels import advect, relax, smooth


def step(n: int = 64):
    rng = np.random.default_rng(3)
    src = wp.array(rng.standard_normal((n, 3)), dtype=wp.vec3, device="cpu")
    vel = wp.array(rng.standard_normal((n, 3)), dtype=wp.vec3, device="cpu")
    dst = wp.zeros(n, dtype=wp.vec3, device="cpu")
    energy = wp.zeros(1, dtype=float, device="cpu", requires_grad=True)
    wp.launch(advect, dim=n, inputs=[src, vel, 0.1, dst], device="cpu")
    wp.launch(relax, dim=n, inputs=[dst, 0.5, energy], device="cpu")
    wp.launch(smooth, dim=n, inputs=[src, vel], device="cpu")
    return dst, energy
