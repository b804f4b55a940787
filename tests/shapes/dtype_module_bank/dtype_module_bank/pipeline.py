"""Reorder a random sparse matrix's rows in float32, then in float64, and gather a vector with the order."""

from __future__ import annotations

import numpy as np
import warp as wp

from .reorder import gather_kernel, reorder_bank

DEVICE = "cpu"


def _random_csr(rows: int, rng):
    counts = rng.integers(2, 10, size=rows)
    offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.int32)
    values = rng.normal(scale=2.0, size=int(offsets[-1]))
    return offsets, values


def reorder(offsets: wp.array, values: wp.array, dtype) -> wp.array:
    bank = reorder_bank(dtype)
    rows = offsets.shape[0] - 1
    degree = wp.zeros(rows, dtype=wp.int32, device=DEVICE)
    weight = wp.zeros(rows, dtype=dtype, device=DEVICE)
    key = wp.zeros(rows, dtype=dtype, device=DEVICE)
    perm = wp.zeros(rows, dtype=wp.int32, device=DEVICE)
    wp.launch(bank.row_degree, dim=rows, inputs=[offsets], outputs=[degree], device=DEVICE)
    wp.launch(bank.row_weight, dim=rows, inputs=[offsets, values, dtype(0.25)], outputs=[weight], device=DEVICE)
    wp.launch(bank.sort_key, dim=rows, inputs=[degree, weight], outputs=[key], device=DEVICE)
    wp.launch(bank.rank_rows, dim=rows, inputs=[key], outputs=[perm], device=DEVICE)
    return perm


def run(rows: int, seed: int):
    rng = np.random.default_rng(seed)
    offsets_np, values_np = _random_csr(rows, rng)
    signal_np = rng.uniform(0.0, 4.0, size=rows)
    ramp = np.linspace(0.0, 1.0, rows)
    out = []
    for dtype, np_dtype in ((wp.float32, np.float32), (wp.float64, np.float64)):
        offsets = wp.array(offsets_np, dtype=wp.int32, device=DEVICE)
        values = wp.array(values_np.astype(np_dtype), dtype=dtype, device=DEVICE)
        perm = reorder(offsets, values, dtype)

        signal = wp.array(signal_np.astype(np_dtype), dtype=dtype, device=DEVICE)
        gathered = wp.zeros(rows, dtype=dtype, device=DEVICE)
        wp.launch(gather_kernel(dtype), dim=rows, inputs=[perm, signal], outputs=[gathered], device=DEVICE)

        p = perm.numpy().astype(np.int64)
        checksum = int((p[:64] * np.arange(64)).sum())
        weighted = float((gathered.numpy().astype(np.float64) * ramp).sum() / rows)
        out.append((dtype.__name__, checksum, weighted))
    return out
