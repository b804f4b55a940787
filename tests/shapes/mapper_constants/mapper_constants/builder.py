"""Build the camera-integration kernels for one mapper configuration."""

import warp as wp

from .naming import constant_suffix, named_kernel


def build_integrators(*, height, width, grid, origin, voxel, trunc, focal, unproject_fn, key_fn):
    H = wp.constant(height)
    W = wp.constant(width)
    GRID = wp.constant(grid)
    VOX = wp.constant(float(voxel))
    TRUNC = wp.constant(float(trunc))
    FOCAL = wp.constant(float(focal))
    OX = wp.constant(float(origin[0]))
    OY = wp.constant(float(origin[1]))
    OZ = wp.constant(float(origin[2]))
    tag = "cfg" + constant_suffix(height, width, grid, tuple(origin), voxel, trunc, focal)

    @named_kernel(f"mark_surface_{tag}", enable_backward=False)
    def mark_surface(depth: wp.array2d(dtype=float), hits: wp.array(dtype=int)):
        v, u = wp.tid()
        d = depth[v, u]
        if d <= 0.0:
            return
        p = unproject_fn(float(u), float(v), d, FOCAL, float(W) * 0.5, float(H) * 0.5)
        k = key_fn(
            int(wp.floor((p[0] - OX) / VOX)), int(wp.floor((p[1] - OY) / VOX)), int(wp.floor((p[2] - OZ) / VOX)), GRID
        )
        if k >= 0:
            wp.atomic_add(hits, k, 1)

    @named_kernel(f"integrate_{tag}", enable_backward=False)
    def integrate(depth: wp.array2d(dtype=float), tsdf: wp.array(dtype=float), weight: wp.array(dtype=float)):
        ix, iy, iz = wp.tid()
        c = wp.vec3(OX + (float(ix) + 0.5) * VOX, OY + (float(iy) + 0.5) * VOX, OZ + (float(iz) + 0.5) * VOX)
        if c[2] <= 0.0:
            return
        u = int(c[0] * FOCAL / c[2] + float(W) * 0.5)
        v = int(c[1] * FOCAL / c[2] + float(H) * 0.5)
        if u < 0 or v < 0 or u >= W or v >= H:
            return
        d = depth[v, u]
        if d <= 0.0:
            return
        sdf = d - c[2]
        if sdf < -TRUNC:
            return
        k = key_fn(ix, iy, iz, GRID)
        s = wp.min(sdf, TRUNC) / TRUNC
        w = weight[k]
        tsdf[k] = (tsdf[k] * w + s) / (w + 1.0)
        weight[k] = w + 1.0

    return {"mark_surface": mark_surface, "integrate": integrate, "grid": grid}
