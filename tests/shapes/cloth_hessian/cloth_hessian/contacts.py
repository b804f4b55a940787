"""Cloth contact handling: holds the per-vertex Hessian blocks and multiplies vectors by them."""

from __future__ import annotations

import warp as wp

from . import kernels

DEVICE = "cpu"


class ClothContacts:
    def __init__(self, mass, stiffness, normal, dt: float):
        self.n = mass.shape[0]
        self.blocks = wp.zeros(self.n, dtype=wp.mat33, device=DEVICE)
        self.out = wp.zeros(self.n, dtype=wp.vec3, device=DEVICE)
        wp.launch(kernels.assemble_blocks, dim=self.n, inputs=[mass, stiffness, normal, dt, self.blocks], device=DEVICE)

    def hessian_times(self, x):
        @wp.kernel
        def block_diag_times(
            blocks: wp.array(dtype=wp.mat33), x: wp.array(dtype=wp.vec3), out: wp.array(dtype=wp.vec3)
        ):
            i = wp.tid()
            out[i] = blocks[i] * x[i]

        wp.launch(block_diag_times, dim=self.n, inputs=[self.blocks, x], outputs=[self.out], device=DEVICE)
        return self.out
