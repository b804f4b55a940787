"""Body property writers."""

from __future__ import annotations

import warp as wp

from . import kernels
from .dispatch import IndexDispatch, as_indices

DEVICE = "cpu"

WRITE_BODY_MASS = IndexDispatch(
    kernels.write_env_values,
    ("env_ids",),
    {"values": wp.array(dtype=float), "data": wp.array(dtype=float)},
)


def write_masses(data, values, env_ids) -> None:
    ids = as_indices(env_ids, DEVICE)
    vals = wp.array(values, dtype=float, device=DEVICE)
    wp.launch(WRITE_BODY_MASS.select(ids), dim=ids.shape[0], inputs=[vals, ids, data], device=DEVICE)
