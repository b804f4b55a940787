"""Evaluate edge and triangle stretch energies of a deformed mesh in a chosen precision."""

from __future__ import annotations

import numpy as np
import warp as wp

from . import energies, mesh

DEVICE = "cpu"


def total_energy(rest_points: np.ndarray, points: np.ndarray, edges, tris, stiffness: float, np_dtype) -> float:
    kernels = energies.kernels_for(np_dtype)
    wdt = wp.float32 if np.dtype(np_dtype) == np.float32 else wp.float64
    coord_dim = points.shape[1]
    total = 0.0
    for simplices in (edges, tris):
        simplex_dim = simplices.shape[1] - 1
        rest = mesh.measures(rest_points, simplices).astype(np_dtype)
        p = wp.array(points.astype(np_dtype), dtype=wdt, device=DEVICE)
        s = wp.array(simplices, dtype=wp.int32, device=DEVICE)
        r = wp.array(rest, dtype=wdt, device=DEVICE)
        out = wp.zeros(simplices.shape[0], dtype=wdt, device=DEVICE)
        wp.launch(
            kernels[(coord_dim, simplex_dim)],
            dim=simplices.shape[0],
            inputs=[p, s, r, wdt(stiffness), out],
            device=DEVICE,
        )
        total += float(out.numpy().astype(np.float64).sum())
    return total
