"""Run the same segmented workload in float32, then in float64."""

from __future__ import annotations

import numpy as np
import warp as wp

from .blas import BlockType, block_matvec, segment_dot, segment_sizes, zero_segments

DEVICE = "cpu"


def run_phase(dtype, np_dtype, offsets_np, a_np, b_np, mask_np, block_data):
    segments = offsets_np.shape[0] - 1
    offsets = wp.array(offsets_np, dtype=wp.int32, device=DEVICE)
    a = wp.array(a_np.astype(np_dtype), dtype=dtype, device=DEVICE)
    b = wp.array(b_np.astype(np_dtype), dtype=dtype, device=DEVICE)
    sizes = wp.zeros(segments, dtype=wp.int32, device=DEVICE)
    dots = wp.zeros(segments, dtype=dtype, device=DEVICE)
    wp.launch(segment_sizes, dim=segments, inputs=[offsets], outputs=[sizes], device=DEVICE)
    wp.launch(segment_dot, dim=segments, inputs=[offsets, a, b], outputs=[dots], device=DEVICE)

    mask = wp.array(mask_np, dtype=wp.int32, device=DEVICE)
    wp.launch(kernel=zero_segments(a.dtype), dim=segments, inputs=[offsets, mask, a], device=DEVICE)
    zeroed = wp.zeros(segments, dtype=dtype, device=DEVICE)
    wp.launch(segment_dot, dim=segments, inputs=[offsets, a, b], outputs=[zeroed], device=DEVICE)

    rows_np, cols_np, blocks_np, x_np, nrows = block_data
    btype = BlockType(3, 2, dtype)
    y = wp.zeros(nrows, dtype=btype.vector_out, device=DEVICE)
    wp.launch(
        kernel=block_matvec(btype),
        dim=rows_np.shape[0],
        inputs=[
            wp.array(rows_np, dtype=wp.int32, device=DEVICE),
            wp.array(cols_np, dtype=wp.int32, device=DEVICE),
            wp.array(blocks_np.astype(np_dtype), dtype=btype.warp_type, device=DEVICE),
            wp.array(x_np.astype(np_dtype), dtype=btype.vector_in, device=DEVICE),
        ],
        outputs=[y],
        device=DEVICE,
    )
    total = lambda arr: float(arr.numpy().astype(np.float64).sum())  # noqa: E731
    return total(dots), total(zeroed), float(np.abs(y.numpy().astype(np.float64)).sum())


def run(segments: int, seed: int):
    rng = np.random.default_rng(seed)
    sizes = rng.integers(4, 17, size=segments)
    offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int32)
    a = rng.uniform(-1.0, 1.0, size=int(offsets[-1]))
    b = rng.uniform(0.0, 2.0, size=int(offsets[-1]))
    mask = (rng.uniform(size=segments) < 0.4).astype(np.int32)
    nnz, nrows, ncols = 256, 64, 48
    block_data = (
        rng.integers(0, nrows, size=nnz).astype(np.int32),
        rng.integers(0, ncols, size=nnz).astype(np.int32),
        rng.normal(size=(nnz, 3, 2)),
        rng.normal(size=(ncols, 2)),
        nrows,
    )
    out = []
    for name, dtype, np_dtype in (("float32", wp.float32, np.float32), ("float64", wp.float64, np.float64)):
        out.append((name, *run_phase(dtype, np_dtype, offsets, a, b, mask, block_data)))
    return out
