"""Module-level radius search: up to MAX_NEIGHBORS points within a radius of each query."""

from __future__ import annotations

import warp as wp

MAX_NEIGHBORS = 24


@wp.kernel
def radius_search(
    points: wp.array(dtype=wp.vec3),
    queries: wp.array(dtype=wp.vec3),
    radius: float,
    index: wp.array2d(dtype=int),
    count: wp.array(dtype=int),
):
    q = wp.tid()
    c = int(0)  # noqa: UP018 (a mutable warp variable)
    r2 = radius * radius
    for p in range(points.shape[0]):
        d = points[p] - queries[q]
        if wp.dot(d, d) <= r2 and c < MAX_NEIGHBORS:
            index[q, c] = p
            c += 1
    count[q] = c
