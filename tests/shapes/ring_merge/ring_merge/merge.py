"""Merge a rank's partial neighbour lists into the running lists (ragged concatenation)."""

from __future__ import annotations

import warp as wp

DEVICE = "cpu"


def merge_lists(cur_index, cur_count, inc_index, inc_count, offset: int, capacity: int):
    @wp.kernel
    def ragged_concat(
        cur_index: wp.array2d(dtype=int),
        cur_count: wp.array(dtype=int),
        inc_index: wp.array2d(dtype=int),
        inc_count: wp.array(dtype=int),
        offset: int,
        capacity: int,
        out_index: wp.array2d(dtype=int),
        out_count: wp.array(dtype=int),
    ):
        q = wp.tid()
        n = cur_count[q]
        for k in range(n):
            out_index[q, k] = cur_index[q, k]
        for k in range(inc_count[q]):
            if n < capacity:
                out_index[q, n] = inc_index[q, k] + offset
                n += 1
        out_count[q] = n

    out_index = wp.zeros_like(cur_index)
    out_count = wp.zeros_like(cur_count)
    wp.launch(
        ragged_concat,
        dim=cur_count.shape[0],
        inputs=[cur_index, cur_count, inc_index, inc_count, offset, capacity],
        outputs=[out_index, out_count],
        device=DEVICE,
    )
    return out_index, out_count
