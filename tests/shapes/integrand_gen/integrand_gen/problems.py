"""User integrands and the fields they read."""

from __future__ import annotations

import numpy as np
import warp as wp

from .integrand import integrand

DEVICE = "cpu"


@integrand
def dirichlet_energy(x, y, u, v):
    return 0.5 * (u * u + v * v) + 0.25 * x * y


@integrand
def weighted_mass(x, y, u):
    return u * (1.0 + 2.0 * x) - 0.5 * y


@wp.kernel
def sample_field(coef: wp.array(dtype=float), u: wp.array2d(dtype=float), v: wp.array2d(dtype=float)):
    i, j = wp.tid()
    n = u.shape[0]
    x = (float(i) + 0.5) / float(n)
    y = (float(j) + 0.5) / float(n)
    u[i, j] = coef[0] * wp.sin(3.0 * x) + coef[1] * y * y
    v[i, j] = coef[2] * wp.cos(2.0 * y) - coef[3] * x


def make_fields(n: int, seed: int) -> dict:
    rng = np.random.default_rng(seed)
    coef = wp.array(rng.uniform(0.5, 2.0, 4).astype(np.float32), dtype=float, device=DEVICE)
    u = wp.zeros((n, n), dtype=float, device=DEVICE)
    v = wp.zeros((n, n), dtype=float, device=DEVICE)
    wp.launch(sample_field, dim=(n, n), inputs=[coef, u, v], device=DEVICE)
    return {"u": u.numpy(), "v": v.numpy()}
