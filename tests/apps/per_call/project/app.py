"""A small particle system whose step asks two factories for its kernels: each call makes a new Kernel object.

The factories' arguments are the same at every step, so every kernel made after the first step is one Warp already
has: constructing it again (parse, hash, module lookup) is paid at every step. WC-1's positive case."""

import sys

import numpy as np
import warp as wp

STEPS = int(sys.argv[1]) if len(sys.argv) > 1 else 24
N = 256


def make_integrate(damping: float):
    @wp.kernel(module="unique")
    def integrate(x: wp.array(dtype=wp.vec3), v: wp.array(dtype=wp.vec3), g: wp.vec3, dt: float):
        i = wp.tid()
        vel = v[i] * damping + g * dt
        speed = wp.length(vel)
        if speed > 10.0:
            vel = vel * (10.0 / speed)
        v[i] = vel
        x[i] = x[i] + vel * dt

    return integrate


def make_bounce(floor: float, restitution: float):
    @wp.kernel(module="unique")
    def bounce(x: wp.array(dtype=wp.vec3), v: wp.array(dtype=wp.vec3)):
        i = wp.tid()
        p = x[i]
        if p[1] < floor:
            x[i] = wp.vec3(p[0], floor, p[2])
            q = v[i]
            v[i] = wp.vec3(q[0] * 0.9, -q[1] * restitution, q[2] * 0.9)

    return bounce


def step(x: wp.array, v: wp.array, dt: float) -> None:
    wp.launch(make_integrate(0.995), dim=N, inputs=[x, v, wp.vec3(0.0, -9.8, 0.0), dt], device="cpu")
    wp.launch(make_bounce(0.0, 0.5), dim=N, inputs=[x, v], device="cpu")


def main() -> None:
    rng = np.random.default_rng(7)
    x = wp.array(rng.uniform(0.0, 2.0, (N, 3)).astype(np.float32), dtype=wp.vec3, device="cpu")
    v = wp.zeros(N, dtype=wp.vec3, device="cpu")
    for _ in range(STEPS):
        step(x, v, 1.0 / 60.0)
    print("height %.4f" % float(x.numpy()[:, 1].mean()))


if __name__ == "__main__":
    main()
