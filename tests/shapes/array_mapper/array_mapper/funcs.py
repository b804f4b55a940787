"""Element-wise functions handed to `wp.map`."""

from __future__ import annotations

import warp as wp


@wp.func
def soften(x: wp.float32) -> wp.float32:
    return x / (1.0 + wp.abs(x))


@wp.func
def soften(x: wp.vec3) -> wp.vec3:  # noqa: F811 (overload)
    return x / (1.0 + wp.length(x))


@wp.func
def soften(x: wp.float64) -> wp.float64:  # noqa: F811 (overload)
    return x / (wp.float64(1.0) + wp.abs(x))
