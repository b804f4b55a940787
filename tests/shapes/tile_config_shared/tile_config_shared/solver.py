"""A batched damped Gauss-Newton fit whose block kernels are chosen when the solver is finalized."""

from __future__ import annotations

import numpy as np
import warp as wp

from .blocks import block_kernels

DEVICE = "cpu"


@wp.kernel
def apply_step(x: wp.array2d(dtype=float), dx: wp.array2d(dtype=float), scale: float):
    b, j = wp.tid()
    x[b, j] = x[b, j] + scale * dx[b, j]


class BlockSolver:
    def __init__(self, name: str, rows: int, cols: int, batch: int):
        self.name, self.rows, self.cols, self.batch = name, rows, cols, batch
        self.kernels = None

    def finalize(self) -> None:
        self.kernels = block_kernels(self.rows, self.cols)
        shape = (self.batch, self.rows)
        self.res = wp.zeros(shape, dtype=float, device=DEVICE)
        self.jac = wp.zeros((*shape, self.cols), dtype=float, device=DEVICE)
        self.lhs = wp.zeros((self.batch, self.cols, self.cols), dtype=float, device=DEVICE)
        self.rhs = wp.zeros((self.batch, self.cols), dtype=float, device=DEVICE)

    def residual(self, x, t, y) -> float:
        residual_jacobian, _, _ = self.kernels
        wp.launch(
            residual_jacobian,
            dim=(self.batch, self.rows),
            inputs=[x, t, y],
            outputs=[self.res, self.jac],
            device=DEVICE,
        )
        r = self.res.numpy().astype(np.float64)
        return float(np.sqrt((r * r).sum(axis=1)).mean())

    def solve(self, x, t, y, iterations: int = 3):
        residual_jacobian, gram, rhs = self.kernels
        start = self.residual(x, t, y)
        for _ in range(iterations):
            wp.launch(
                residual_jacobian,
                dim=(self.batch, self.rows),
                inputs=[x, t, y],
                outputs=[self.res, self.jac],
                device=DEVICE,
            )
            wp.launch(gram, dim=(self.batch, self.cols), inputs=[self.jac, 0.5], outputs=[self.lhs], device=DEVICE)
            wp.launch(rhs, dim=(self.batch, self.cols), inputs=[self.jac, self.res], outputs=[self.rhs], device=DEVICE)
            dx = np.linalg.solve(self.lhs.numpy().astype(np.float64), self.rhs.numpy().astype(np.float64)[..., None])[
                ..., 0
            ]
            step = wp.array(dx.astype(np.float32), dtype=float, device=DEVICE)
            wp.launch(apply_step, dim=(self.batch, self.cols), inputs=[x, step, 1.0], device=DEVICE)
        return start, self.residual(x, t, y)


def _problem(rows: int, cols: int, batch: int, rng):
    t = np.linspace(-1.0, 1.0, rows)
    truth = rng.normal(scale=1.0, size=(batch, cols))
    basis = np.stack([t**j for j in range(cols)], axis=0)
    y = truth @ basis + 0.2 * np.sin(truth[:, :1] * t) + rng.normal(scale=0.05, size=(batch, rows))
    x0 = truth + rng.normal(scale=0.5, size=truth.shape)
    as_wp = lambda a: wp.array(a.astype(np.float32), dtype=float, device=DEVICE)  # noqa: E731
    return as_wp(x0), as_wp(t), as_wp(y)


def run_both(batch: int, seed: int):
    rng = np.random.default_rng(seed)
    out = []
    solver_a = BlockSolver("A 4x4", rows=4, cols=4, batch=batch)
    solver_a.finalize()
    out.append((solver_a.name, *solver_a.solve(*_problem(4, 4, batch, rng))))

    solver_b = BlockSolver("B 8x4", rows=8, cols=4, batch=batch)
    solver_b.finalize()  # after solver A's kernels loaded: the shared block module is built again
    out.append((solver_b.name, *solver_b.solve(*_problem(8, 4, batch, rng))))
    return out
