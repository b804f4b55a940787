"""A dense TSDF mapper fed by a synthetic depth camera."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import warp as wp

from . import helpers
from .builder import build_integrators

DEVICE = "cpu"


@wp.kernel
def render_depth(centers: wp.array(dtype=wp.vec4), focal: float, depth: wp.array2d(dtype=float)):
    v, u = wp.tid()
    h = depth.shape[0]
    w = depth.shape[1]
    d = wp.normalize(wp.vec3((float(u) - float(w) * 0.5) / focal, (float(v) - float(h) * 0.5) / focal, 1.0))
    best = 2.5 / d[2]  # back wall at z = 2.5
    for s in range(centers.shape[0]):
        c = wp.vec3(centers[s][0], centers[s][1], centers[s][2])
        b = wp.dot(c, d)
        disc = b * b - (wp.dot(c, c) - centers[s][3] * centers[s][3])
        if disc > 0.0:
            best = wp.min(best, b - wp.sqrt(disc))
    depth[v, u] = best * d[2]


@dataclass(frozen=True)
class MapperConfig:
    grid: int
    voxel: float
    origin: tuple
    trunc: float
    height: int = 48
    width: int = 64
    focal: float = 50.0


def integrate_frames(cfg: MapperConfig, frames: list) -> tuple[float, int]:
    kernels = build_integrators(
        height=cfg.height,
        width=cfg.width,
        grid=cfg.grid,
        origin=cfg.origin,
        voxel=cfg.voxel,
        trunc=cfg.trunc,
        focal=cfg.focal,
        unproject_fn=helpers.unproject,
        key_fn=helpers.voxel_key,
    )
    n = cfg.grid**3
    tsdf = wp.zeros(n, dtype=float, device=DEVICE)
    weight = wp.zeros(n, dtype=float, device=DEVICE)
    hits = wp.zeros(n, dtype=int, device=DEVICE)
    for spheres in frames:
        depth = wp.zeros((cfg.height, cfg.width), dtype=float, device=DEVICE)
        centers = wp.array(spheres.astype(np.float32), dtype=wp.vec4, device=DEVICE)
        wp.launch(render_depth, dim=depth.shape, inputs=[centers, cfg.focal, depth], device=DEVICE)
        wp.launch(kernels["mark_surface"], dim=depth.shape, inputs=[depth, hits], device=DEVICE)
        wp.launch(kernels["integrate"], dim=(cfg.grid, cfg.grid, cfg.grid), inputs=[depth, tsdf, weight], device=DEVICE)
    return float(tsdf.numpy().astype(np.float64).sum()), int((hits.numpy() > 0).sum())
