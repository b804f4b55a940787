"""A small periodic D2Q9 lattice: tag boundary cells, set up the boundaries one by one, then step."""

from __future__ import annotations

import numpy as np
import warp as wp

from .boundary import count_tagged, equilibrium, lattice_dir
from .zouhe import ZouHeLike

DEVICE = "cpu"
BOUNDARIES = (("inflow", "velocity", 1, 0.05), ("outflow", "pressure", 2, 1.02), ("lid", "velocity", 3, 0.08))


@wp.kernel
def stream_collide(size: int, omega: float, f_in: wp.array2d(dtype=float), f_out: wp.array2d(dtype=float)):
    cell = wp.tid()
    x = cell % size
    y = cell // size
    rho = float(0.0)
    mom = wp.vec2(0.0, 0.0)
    pulled = wp.vector(dtype=float, length=9)
    for q in range(9):
        c = lattice_dir(q)
        sx = (x - int(c[0]) + size) % size
        sy = (y - int(c[1]) + size) % size
        fq = f_in[q, sy * size + sx]
        pulled[q] = fq
        rho += fq
        mom += fq * c
    u = mom / rho
    for q in range(9):
        f_out[q, cell] = pulled[q] + omega * (equilibrium(q, rho, u) - pulled[q])


def run(size: int, steps: int, seed: int):
    rng = np.random.default_rng(seed)
    n = size * size
    mask_np = np.zeros((size, size), dtype=np.uint8)
    mask_np[:, 0] = 1
    mask_np[:, -1] = 2
    mask_np[-1, 1:-1] = 3
    mask = wp.array(mask_np.ravel(), dtype=wp.uint8, device=DEVICE)
    counts = wp.zeros(4, dtype=int, device=DEVICE)
    wp.launch(count_tagged, dim=n, inputs=[mask, counts], device=DEVICE)
    counts_np = counts.numpy()

    rho0 = 1.0 + 0.01 * rng.standard_normal(n)
    weights = np.array([4 / 9] + [1 / 9] * 4 + [1 / 36] * 4)
    f = wp.array((weights[:, None] * rho0[None, :]).astype(np.float32), dtype=float, device=DEVICE)
    g = wp.zeros_like(f)

    boundaries = []
    for _name, kind, tag, value in BOUNDARIES:
        bc = ZouHeLike(kind, tag, value)  # built while the lattice is being set up
        bc.apply(mask, f)
        boundaries.append(bc)

    for _ in range(steps):
        wp.launch(stream_collide, dim=n, inputs=[size, 1.2, f, g], device=DEVICE)
        f, g = g, f
        for bc in boundaries:
            bc.apply(mask, f)

    rho = f.numpy().astype(np.float64).sum(axis=0)
    flat_mask = mask_np.ravel()
    per_tag = [(name, float(rho[flat_mask == tag].sum() / counts_np[tag])) for name, _k, tag, _v in BOUNDARIES]
    return float(rho.sum() / n), per_tag
