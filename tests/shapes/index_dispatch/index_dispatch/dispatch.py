"""Pick the instance of a generic kernel that matches the dtypes of its index arrays."""

from __future__ import annotations

import itertools

import numpy as np
import warp as wp

INDEX_TYPES = (wp.int32, wp.int64)


class IndexDispatch:
    def __init__(self, kernel, selectors: tuple[str, ...], fixed: dict | None = None):
        self.kernel = kernel
        self.selectors = selectors
        self._instances = {}
        for combo in itertools.product(INDEX_TYPES, repeat=len(selectors)):
            signature = dict(fixed or {})
            signature.update({name: wp.array(dtype=t) for name, t in zip(selectors, combo, strict=True)})
            self._instances[combo] = wp.overload(kernel, signature)

    def select(self, *index_arrays):
        return self._instances[tuple(a.dtype for a in index_arrays)]


def as_indices(ids, device: str):
    ids = np.asarray(ids)
    dtype = wp.int64 if ids.dtype == np.int64 else wp.int32
    return wp.array(ids, dtype=dtype, device=device)
