"""Precision policies: the dtype used to compute and the dtype used to store populations."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import warp as wp


@dataclass(frozen=True)
class Policy:
    name: str
    compute: type
    store: type

    @property
    def store_numpy(self):
        return np.float64 if self.store is wp.float64 else np.float32


POLICIES = {
    "fp32/fp32": Policy("fp32/fp32", wp.float32, wp.float32),
    "fp64/fp32": Policy("fp64/fp32", wp.float64, wp.float32),
    "fp64/fp64": Policy("fp64/fp64", wp.float64, wp.float64),
}

# D1Q3 lattice on a ring: rest, right, left
Q = 3
SHIFTS = (0, 1, -1)
