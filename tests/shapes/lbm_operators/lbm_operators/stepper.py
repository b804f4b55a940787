"""The BGK stepper: stream, moments, equilibrium and relaxation in one kernel."""

from typing import Any

import warp as wp

from .lattice import Q
from .operators import Equilibrium, Macroscopic, Stream


class NSEStepper:
    def __init__(self, omega: float, compute=wp.float32):
        self.omega = omega
        self.compute = compute
        self.stream = Stream(compute)
        self.macroscopic = Macroscopic(compute)
        self.equilibrium = Equilibrium(compute)
        self.kernel = self._construct_warp()

    def _construct_warp(self):
        compute = self.compute
        omega = self.omega

        @wp.kernel
        def collide_stream(f0: wp.array3d(dtype=Any), f1: wp.array3d(dtype=Any)):
            i, j = wp.tid()
            f = self.stream.warp_functional(f0, i, j)
            m = self.macroscopic.warp_functional(f)
            feq = self.equilibrium.warp_functional(m)
            post = f + compute(omega) * (feq - f)
            for k in range(Q):
                f1[k, i, j] = f1.dtype(post[k])

        return collide_stream

    def step(self, f0, f1, device: str) -> None:
        wp.launch(self.kernel, dim=(f0.shape[1], f0.shape[2]), inputs=[f0, f1], device=device)
