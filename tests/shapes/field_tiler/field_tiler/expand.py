"""Expand the per-body fields of a model to `nworld` copies."""

from __future__ import annotations

import dataclasses

import warp as wp

from .kernels import repeat_rows

DEVICE = "cpu"


def expand_fields(model, nworld: int, names: set[str]) -> None:
    for f in dataclasses.fields(model):
        if f.name not in names:
            continue
        arr = getattr(model, f.name)
        dst = wp.empty(nworld * arr.shape[0], dtype=arr.dtype, device=DEVICE)
        wp.launch(repeat_rows, dim=dst.shape[0], inputs=[arr, arr.shape[0]], outputs=[dst], device=DEVICE)
        setattr(model, f.name, dst)
