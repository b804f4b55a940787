"""Batched dot products by blocks of a fixed size; generic over the array dtype."""

import functools
from typing import Any

import warp as wp


@wp.kernel(module="unique")
def reduce_parts(parts: wp.array2d(dtype=Any), count: int, out: wp.array(dtype=Any)):
    col = wp.tid()
    s = parts[col, 0]
    for k in range(1, count):
        s += parts[col, k]
    out[col] = s


@functools.cache
def dot_kernels(tile: int):
    def block_dot(a: wp.array2d(dtype=Any), b: wp.array2d(dtype=Any), parts: wp.array2d(dtype=Any)):
        col, blk = wp.tid()
        start = blk * tile
        s = a[col, start] * b[col, start]
        for k in range(1, wp.static(tile)):
            s += a[col, start + k] * b[col, start + k]
        parts[col, blk] = s

    # A generic unique kernel is named before any instance exists: put the tile size in its name, or two
    # tile sizes share one unique module (Warp 1.10, NVIDIA/warp issue #1231).
    block_dot.__name__ = block_dot.__qualname__ = f"block_dot_{tile}"
    return wp.kernel(module="unique")(block_dot)
