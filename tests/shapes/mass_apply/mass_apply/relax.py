"""Two toy models (dense block levels, sparse triplets) relaxed toward M x = b for a few steps."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import warp as wp

from .support import apply_mass, relax_step

DEVICE = "cpu"


def _spd_block(size: int, rng) -> np.ndarray:
    a = rng.normal(scale=0.3, size=(size, size))
    return a @ a.T + np.eye(size) * 1.5


def dense_model(rng, blocks_per_level: int = 64):
    levels, chunks, full = [], [], []
    madr = vadr = 0
    for size in (2, 3):
        blocks = [_spd_block(size, rng) for _ in range(blocks_per_level)]
        chunks.extend(b.ravel() for b in blocks)
        full.extend(blocks)
        levels.append((madr, vadr, blocks_per_level, size))
        madr += blocks_per_level * size * size
        vadr += blocks_per_level * size
    dense = np.zeros((vadr, vadr))
    pos = 0
    for b in full:
        dense[pos : pos + b.shape[0], pos : pos + b.shape[0]] = b
        pos += b.shape[0]
    mass = wp.array(np.concatenate(chunks).astype(np.float32), dtype=float, device=DEVICE)
    return SimpleNamespace(sparse=False, device=DEVICE, levels=levels, mass=mass, n=vadr), dense


def sparse_model(rng, n: int = 320, nnz: int = 640):
    diag = rng.uniform(2.0, 3.0, size=n)
    rows = rng.integers(0, n, size=nnz)
    cols = (rows + rng.integers(1, n, size=nnz)) % n
    vals = rng.normal(scale=0.05, size=nnz)
    dense = np.diag(diag)
    np.add.at(dense, (rows, cols), vals)
    np.add.at(dense, (cols, rows), vals)
    as_f = lambda a: wp.array(a.astype(np.float32), dtype=float, device=DEVICE)  # noqa: E731
    as_i = lambda a: wp.array(a.astype(np.int32), dtype=int, device=DEVICE)  # noqa: E731
    model = SimpleNamespace(
        sparse=True, device=DEVICE, diag=as_f(diag), rows=as_i(rows), cols=as_i(cols), vals=as_f(vals), n=n
    )
    return model, dense


def relax(model, dense: np.ndarray, steps: int, rng) -> tuple[float, float]:
    b_np = rng.uniform(-1.0, 1.0, size=model.n)
    x = wp.zeros(model.n, dtype=float, device=DEVICE)
    b = wp.array(b_np.astype(np.float32), dtype=float, device=DEVICE)
    mx = wp.zeros(model.n, dtype=float, device=DEVICE)
    for _ in range(steps):
        mx.zero_()
        apply_mass(model, x, mx)
        wp.launch(relax_step, dim=model.n, inputs=[x, mx, b, 0.2], device=DEVICE)
    x_np = x.numpy().astype(np.float64)
    return float(np.linalg.norm(x_np)), float(np.linalg.norm(dense @ x_np - b_np))


def run(steps: int, seed: int):
    rng = np.random.default_rng(seed)
    dense_m, dense_full = dense_model(rng)
    sparse_m, sparse_full = sparse_model(rng)
    return relax(dense_m, dense_full, steps, rng), relax(sparse_m, sparse_full, steps, rng)
