"""Helpers the solver's kernels call."""

import warp as wp


@wp.func
def damp(v: float, rate: float):
    return v * (1.0 - rate)


@wp.func
def pull(v: float, target: float, rate: float):
    return v + (target - v) * rate
