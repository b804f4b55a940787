"""Generic write kernels, specialised on the integer type of their index arrays."""

from __future__ import annotations

from typing import Any

import warp as wp


@wp.kernel
def write_env_values(values: wp.array(dtype=float), env_ids: wp.array(dtype=Any), data: wp.array(dtype=float)):
    t = wp.tid()
    data[env_ids[t]] = values[t]


@wp.kernel
def write_env_joint_values(
    values: wp.array2d(dtype=float),
    env_ids: wp.array(dtype=Any),
    joint_ids: wp.array(dtype=Any),
    data: wp.array2d(dtype=float),
):
    i, j = wp.tid()
    data[env_ids[i], joint_ids[j]] = values[i, j]


@wp.kernel
def add_env_joint_offsets(
    offsets: wp.array(dtype=float),
    env_ids: wp.array(dtype=Any),
    joint_ids: wp.array(dtype=Any),
    data: wp.array2d(dtype=float),
):
    i, j = wp.tid()
    data[env_ids[i], joint_ids[j]] = data[env_ids[i], joint_ids[j]] + offsets[j]
