"""Row reordering kernels, one named Warp module per precision.

(No `from __future__ import annotations` here: the kernel signatures use the captured `dtype`.)
"""

import functools
from dataclasses import dataclass

import warp as wp


def bank_module(dtype):
    return wp.get_module(f"{__name__}.bank_{dtype.__name__}")


@dataclass(frozen=True)
class ReorderBank:
    row_degree: wp.Kernel
    row_weight: wp.Kernel
    sort_key: wp.Kernel
    rank_rows: wp.Kernel


@functools.cache
def reorder_bank(dtype) -> ReorderBank:
    mod = bank_module(dtype)
    mod.options.update({"enable_backward": False})

    @wp.kernel(module=mod)
    def row_degree(offsets: wp.array(dtype=wp.int32), degree: wp.array(dtype=wp.int32)):
        r = wp.tid()
        degree[r] = offsets[r + 1] - offsets[r]

    @wp.kernel(module=mod)
    def row_weight(
        offsets: wp.array(dtype=wp.int32),
        values: wp.array(dtype=dtype),
        tol: dtype,
        weight: wp.array(dtype=dtype),
    ):
        r = wp.tid()
        total = dtype(0.0)
        for k in range(offsets[r], offsets[r + 1]):
            v = wp.abs(values[k])
            if v > tol:
                total = total + v
        weight[r] = total

    @wp.kernel(module=mod)
    def sort_key(degree: wp.array(dtype=wp.int32), weight: wp.array(dtype=dtype), key: wp.array(dtype=dtype)):
        r = wp.tid()
        w = weight[r]
        key[r] = dtype(degree[r]) + w / (dtype(1.0) + w)

    @wp.kernel(module=mod)
    def rank_rows(key: wp.array(dtype=dtype), perm: wp.array(dtype=wp.int32)):
        r = wp.tid()
        mine = key[r]
        rank = int(0)
        for j in range(key.shape[0]):
            other = key[j]
            if other < mine or (other == mine and j < r):
                rank += 1
        perm[rank] = r

    return ReorderBank(row_degree, row_weight, sort_key, rank_rows)


@functools.cache
def gather_kernel(dtype) -> wp.Kernel:
    """Apply a permutation; lives next to the bank's kernels, in the same precision module."""

    @wp.kernel(module=bank_module(dtype))
    def gather(perm: wp.array(dtype=wp.int32), src: wp.array(dtype=dtype), dst: wp.array(dtype=dtype)):
        i = wp.tid()
        dst[i] = src[perm[i]]

    return gather
