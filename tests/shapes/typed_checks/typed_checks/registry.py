"""Turn nested check functions into kernels with explicit keys, one per (function, suffix)."""

from __future__ import annotations

import warp as wp

_KERNELS: dict[str, wp.Kernel] = {}


def get_kernel(fn, suffix: str, enable_backward: bool = False) -> wp.Kernel:
    key = f"{fn.__name__}_{suffix}"
    if key not in _KERNELS:
        _KERNELS[key] = wp.Kernel(func=fn, key=key, options={"enable_backward": enable_backward})
    return _KERNELS[key]
