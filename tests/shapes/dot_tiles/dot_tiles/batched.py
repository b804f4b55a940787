"""Batched dots in float32 and then float64, with two block sizes each."""

from __future__ import annotations

import numpy as np
import warp as wp

from .kernels import dot_kernels, reduce_parts

DEVICE = "cpu"
TILES = (16, 32)


def batched_dot(a: wp.array, b: wp.array, tile: int) -> wp.array:
    batch, length = a.shape
    blocks = length // tile
    parts = wp.zeros((batch, blocks), dtype=a.dtype, device=DEVICE)
    out = wp.zeros(batch, dtype=a.dtype, device=DEVICE)
    wp.launch(dot_kernels(tile), dim=(batch, blocks), inputs=[a, b], outputs=[parts], device=DEVICE)
    wp.launch(reduce_parts, dim=batch, inputs=[parts, blocks], outputs=[out], device=DEVICE)
    return out


def run(length: int, batch: int, seed: int):
    rng = np.random.default_rng(seed)
    a_np = rng.uniform(0.0, 1.0, size=(batch, length))
    b_np = rng.uniform(0.0, 1.0, size=(batch, length))
    rows = []
    for name, dtype, np_dtype in (("float32", wp.float32, np.float32), ("float64", wp.float64, np.float64)):
        a = wp.array(a_np.astype(np_dtype), dtype=dtype, device=DEVICE)
        b = wp.array(b_np.astype(np_dtype), dtype=dtype, device=DEVICE)
        by_tile = []
        for tile in TILES:
            dots = batched_dot(a, b, tile).numpy().astype(np.float64)
            by_tile.append((tile, float(dots.mean())))
        rows.append((name, by_tile))
    return rows
