"""Set up a shear-wave flow and run it with a given storage precision."""

from __future__ import annotations

from typing import Any

import numpy as np
import warp as wp

from .lattice import CX, CY, equilibrium_numpy
from .stepper import NSEStepper

DEVICE = "cpu"


@wp.kernel
def add_density_bump(f: wp.array3d(dtype=Any), cx: int, cy: int, amplitude: float):
    i, j = wp.tid()
    r2 = float((i - cx) * (i - cx) + (j - cy) * (j - cy))
    scale = 1.0 + amplitude * wp.exp(-r2 / 20.0)
    for k in range(9):
        f[k, i, j] = f.dtype(float(f[k, i, j]) * scale)


def run_phase(stepper: NSEStepper, n: int, steps: int, store, seed: int):
    rng = np.random.default_rng(seed)
    y = np.arange(n)[None, :] * np.ones((n, 1))
    ux = 0.05 * np.sin(2.0 * np.pi * y / n)
    uy = 0.01 * rng.standard_normal((n, n))
    f_np = equilibrium_numpy(np.ones((n, n)), ux, uy)
    np_store = np.float64 if store is wp.float64 else np.float32
    a = wp.array(f_np.astype(np_store), dtype=store, device=DEVICE)
    b = wp.zeros_like(a)
    wp.launch(add_density_bump, dim=(n, n), inputs=[a, n // 2, n // 3, 0.05], device=DEVICE)
    for _ in range(steps):
        stepper.step(a, b, DEVICE)
        a, b = b, a
    f = a.numpy().astype(np.float64)
    rho = f.sum(axis=0)
    mx = sum(f[k] * c for k, c in enumerate(CX))
    my = sum(f[k] * c for k, c in enumerate(CY))
    energy = 0.5 * ((mx * mx + my * my) / rho).sum()
    return float(rho.sum()), float(energy)
