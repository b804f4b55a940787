"""The particle system of ../project with its kernels made once: the factories run at import, the step looks the
kernels up. Nothing is constructed after the first launch, so WC-1 must not be found."""

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


INTEGRATE = make_integrate(0.995)
BOUNCE = make_bounce(0.0, 0.5)


def step(x: wp.array, v: wp.array, dt: float) -> None:
    wp.launch(INTEGRATE, dim=N, inputs=[x, v, wp.vec3(0.0, -9.8, 0.0), dt], device="cpu")
    wp.launch(BOUNCE, dim=N, inputs=[x, v], device="cpu")


def main() -> None:
    rng = np.random.default_rng(7)
    x = wp.array(rng.uniform(0.0, 2.0, (N, 3)).astype(np.float32), dtype=wp.vec3, device="cpu")
    v = wp.zeros(N, dtype=wp.vec3, device="cpu")
    for _ in range(STEPS):
        step(x, v, 1.0 / 60.0)
    print("height %.4f" % float(x.numpy()[:, 1].mean()))


if __name__ == "__main__":
    main()
