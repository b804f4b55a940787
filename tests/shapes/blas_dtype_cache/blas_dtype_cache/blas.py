"""Segmented BLAS helpers: module-level generic kernels plus per-dtype and per-block-type factories.

(No `from __future__ import annotations`: kernel signatures use captured types.)
"""

import functools
from dataclasses import dataclass
from typing import Any

import warp as wp


@dataclass(frozen=True)
class BlockType:
    rows: int
    cols: int
    dtype: type

    @property
    def warp_type(self):
        return wp.types.matrix(shape=(self.rows, self.cols), dtype=self.dtype)

    @property
    def vector_in(self):
        return wp.types.vector(length=self.cols, dtype=self.dtype)

    @property
    def vector_out(self):
        return wp.types.vector(length=self.rows, dtype=self.dtype)


@wp.kernel
def segment_sizes(offsets: wp.array(dtype=wp.int32), sizes: wp.array(dtype=wp.int32)):
    s = wp.tid()
    sizes[s] = offsets[s + 1] - offsets[s]


@wp.kernel
def segment_dot(
    offsets: wp.array(dtype=wp.int32), a: wp.array(dtype=Any), b: wp.array(dtype=Any), out: wp.array(dtype=Any)
):
    s = wp.tid()
    acc = out[s] - out[s]
    for k in range(offsets[s], offsets[s + 1]):
        acc += a[k] * b[k]
    out[s] = acc


@functools.cache
def zero_segments(dtype):
    @wp.kernel
    def masked_zero(offsets: wp.array(dtype=wp.int32), mask: wp.array(dtype=wp.int32), x: wp.array(dtype=dtype)):
        s = wp.tid()
        if mask[s] == 0:
            return
        for k in range(offsets[s], offsets[s + 1]):
            x[k] = dtype(0.0)

    return masked_zero


@functools.cache
def block_matvec(block_type: BlockType):
    @wp.kernel
    def block_mv(
        rows: wp.array(dtype=wp.int32),
        cols: wp.array(dtype=wp.int32),
        blocks: wp.array(dtype=block_type.warp_type),
        x: wp.array(dtype=block_type.vector_in),
        y: wp.array(dtype=block_type.vector_out),
    ):
        k = wp.tid()
        wp.atomic_add(y, rows[k], blocks[k] * x[cols[k]])

    return block_mv
