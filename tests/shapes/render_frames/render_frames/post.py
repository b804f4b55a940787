"""Module-level post-processing of rendered frames."""

from __future__ import annotations

import warp as wp


@wp.kernel
def tonemap(image: wp.array2d(dtype=float), exposure: float):
    y, x = wp.tid()
    c = image[y, x] * exposure
    image[y, x] = c / (1.0 + c)
