"""The tile_matmul kernel of tile_forward.py with backward code left on (Warp's default), never differentiated."""

import numpy as np
import warp as wp

TILE = 8


@wp.kernel
def matmul(a: wp.array2d(dtype=float), b: wp.array2d(dtype=float), c: wp.array2d(dtype=float)):
    ta = wp.tile_load(a, shape=(TILE, TILE))
    tb = wp.tile_load(b, shape=(TILE, TILE))
    tc = wp.tile_zeros(shape=(TILE, TILE), dtype=float)
    wp.tile_matmul(ta, tb, tc)
    wp.tile_store(c, tc)


a = wp.array(np.eye(TILE, dtype=np.float32), device="cpu")
b = wp.array(np.full((TILE, TILE), 2.0, dtype=np.float32), device="cpu")
c = wp.zeros((TILE, TILE), dtype=float, device="cpu")
wp.launch_tiled(matmul, dim=[1], inputs=[a, b, c], block_dim=32, device="cpu")
print(float(c.numpy()[0, 0]))
