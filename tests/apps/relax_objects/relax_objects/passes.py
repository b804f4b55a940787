"""A smoothing pass builds its kernel in __init__; the kernel closes over the pass's sweep count."""

from __future__ import annotations

import warp as wp


@wp.kernel
def seed(values: wp.array(dtype=float)):
    i = wp.tid()
    values[i] = float(i % 5) - 2.0


class Smooth:
    def __init__(self, sweeps: int) -> None:
        self.sweeps = sweeps
        self.kernel = self._construct_kernel()

    def _construct_kernel(self):
        sweeps = self.sweeps

        @wp.kernel
        def smooth(values: wp.array(dtype=float)):
            i = wp.tid()
            v = values[i]
            for _ in range(wp.static(sweeps)):
                v = 0.5 * v + 0.25
            values[i] = v

        return smooth

    def __call__(self, values) -> None:
        wp.launch(self.kernel, dim=values.shape[0], inputs=[values], device="cpu")


_passes: dict[int, Smooth] = {}


def smoothing(sweeps: int) -> Smooth:
    """The pass for `sweeps`, built the first time it is asked for."""
    if sweeps not in _passes:
        _passes[sweeps] = Smooth(sweeps)
    return _passes[sweeps]
