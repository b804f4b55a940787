"""A ring ball query over point shards held by simulated ranks."""

from __future__ import annotations

import numpy as np
import warp as wp

from .merge import merge_lists
from .neighbors import MAX_NEIGHBORS, radius_search

DEVICE = "cpu"
CAPACITY = 48


@wp.kernel
def shift_queries(queries: wp.array(dtype=wp.vec3), shift: wp.vec3):
    i = wp.tid()
    queries[i] = queries[i] + shift


def ring_query(points: np.ndarray, queries: np.ndarray, ranks: int, radius: float):
    q = wp.array(queries.astype(np.float32), dtype=wp.vec3, device=DEVICE)
    wp.launch(shift_queries, dim=q.shape[0], inputs=[q, wp.vec3(0.01, -0.02, 0.0)], device=DEVICE)
    index = wp.zeros((q.shape[0], CAPACITY), dtype=int, device=DEVICE)
    count = wp.zeros(q.shape[0], dtype=int, device=DEVICE)
    shards = np.array_split(points.astype(np.float32), ranks)
    offset = 0
    for shard in shards:  # each rank's shard arrives in turn around the ring
        pts = wp.array(shard, dtype=wp.vec3, device=DEVICE)
        part_index = wp.zeros((q.shape[0], MAX_NEIGHBORS), dtype=int, device=DEVICE)
        part_count = wp.zeros(q.shape[0], dtype=int, device=DEVICE)
        wp.launch(radius_search, dim=q.shape[0], inputs=[pts, q, radius, part_index, part_count], device=DEVICE)
        index, count = merge_lists(index, count, part_index, part_count, offset, CAPACITY)
        offset += shard.shape[0]
    return index.numpy(), count.numpy()
