"""Joint state writers (an articulation's part of the scene)."""

from __future__ import annotations

import warp as wp

from . import kernels
from .dispatch import IndexDispatch, as_indices

DEVICE = "cpu"

_GRID = {"values": wp.array2d(dtype=float), "data": wp.array2d(dtype=float)}

WRITE_JOINT_POS = IndexDispatch(kernels.write_env_joint_values, ("env_ids", "joint_ids"), _GRID)
ADD_JOINT_OFFSET = IndexDispatch(
    kernels.add_env_joint_offsets,
    ("env_ids", "joint_ids"),
    {"offsets": wp.array(dtype=float), "data": wp.array2d(dtype=float)},
)


def write_positions(data, values, env_ids, joint_ids) -> None:
    e = as_indices(env_ids, DEVICE)
    j = as_indices(joint_ids, DEVICE)
    vals = wp.array(values, dtype=float, device=DEVICE)
    wp.launch(WRITE_JOINT_POS.select(e, j), dim=(e.shape[0], j.shape[0]), inputs=[vals, e, j, data], device=DEVICE)


def add_offsets(data, offsets, env_ids, joint_ids) -> None:
    e = as_indices(env_ids, DEVICE)
    j = as_indices(joint_ids, DEVICE)
    off = wp.array(offsets, dtype=float, device=DEVICE)
    wp.launch(ADD_JOINT_OFFSET.select(e, j), dim=(e.shape[0], j.shape[0]), inputs=[off, e, j, data], device=DEVICE)
