"""Generic kernels used to expand a one-world model to many worlds."""

from __future__ import annotations

from typing import Any

import warp as wp


@wp.kernel(module="unique", enable_backward=False)
def repeat_rows(src: wp.array(dtype=Any), per_world: int, dst: wp.array(dtype=Any)):
    t = wp.tid()
    dst[t] = src[t % per_world]
