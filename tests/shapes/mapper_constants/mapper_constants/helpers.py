"""Camera and voxel-hash helper funcs handed to the kernel builder."""

from __future__ import annotations

import warp as wp


@wp.func
def unproject(u: float, v: float, depth: float, focal: float, cx: float, cy: float) -> wp.vec3:
    return wp.vec3((u - cx) * depth / focal, (v - cy) * depth / focal, depth)


@wp.func
def voxel_key(ix: int, iy: int, iz: int, dim: int) -> int:
    if ix < 0 or iy < 0 or iz < 0 or ix >= dim or iy >= dim or iz >= dim:
        return -1
    return (iz * dim + iy) * dim + ix
