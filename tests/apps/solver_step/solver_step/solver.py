"""The solver: every step defines its two kernels, importing the helpers it needs when it runs."""

from __future__ import annotations

import warp as wp


class Solver:
    def __init__(self, count: int, rate: float) -> None:
        self.values = wp.array([float(i) for i in range(count)], dtype=float, device="cpu")
        self.rate = rate

    def step(self, target: float) -> None:
        from .physics import damp, pull

        @wp.kernel(module="unique")
        def relax(values: wp.array(dtype=float), target: float, rate: float):
            i = wp.tid()
            values[i] = pull(values[i], target, rate)

        @wp.kernel(module="unique")
        def settle(values: wp.array(dtype=float), rate: float):
            i = wp.tid()
            values[i] = damp(values[i], rate)

        n = self.values.shape[0]
        wp.launch(relax, dim=n, inputs=[self.values, target, self.rate], device="cpu")
        wp.launch(settle, dim=n, inputs=[self.values, self.rate], device="cpu")
