"""Operators: each one builds its warp functional over the lattice vector type of its compute dtype."""

from typing import Any

import warp as wp

from .lattice import CX, CY, WEIGHTS, Q


class Operator:
    def __init__(self, compute=wp.float32):
        self.compute = compute
        self.V = wp.types.vector(length=Q, dtype=compute)
        self.warp_functional = self._construct_warp()


class Stream(Operator):
    def _construct_warp(self):
        V = self.V
        compute = self.compute
        cx = wp.types.vector(length=Q, dtype=wp.int32)(*CX)
        cy = wp.types.vector(length=Q, dtype=wp.int32)(*CY)

        @wp.func
        def pull(f: wp.array3d(dtype=Any), i: int, j: int) -> V:
            nx = f.shape[1]
            ny = f.shape[2]
            out = V()
            for k in range(Q):
                out[k] = compute(f[k, (i - cx[k] + nx) % nx, (j - cy[k] + ny) % ny])
            return out

        return pull


class Macroscopic(Operator):
    def _construct_warp(self):
        V = self.V
        compute = self.compute
        M = wp.types.vector(length=3, dtype=compute)
        cx = wp.types.vector(length=Q, dtype=compute)(*[float(c) for c in CX])
        cy = wp.types.vector(length=Q, dtype=compute)(*[float(c) for c in CY])

        @wp.func
        def moments(f: V) -> M:
            rho = compute(0.0)
            for k in range(Q):
                rho += f[k]
            return M(rho, wp.dot(cx, f) / rho, wp.dot(cy, f) / rho)

        return moments


class Equilibrium(Operator):
    def _construct_warp(self):
        V = self.V
        compute = self.compute
        M = wp.types.vector(length=3, dtype=compute)
        cx = wp.types.vector(length=Q, dtype=compute)(*[float(c) for c in CX])
        cy = wp.types.vector(length=Q, dtype=compute)(*[float(c) for c in CY])
        w = wp.types.vector(length=Q, dtype=compute)(*WEIGHTS)

        @wp.func
        def equilibrium(m: M) -> V:
            usq = m[1] * m[1] + m[2] * m[2]
            out = V()
            for k in range(Q):
                cu = cx[k] * m[1] + cy[k] * m[2]
                out[k] = w[k] * m[0] * (compute(1.0) + compute(3.0) * cu + compute(4.5) * cu * cu - compute(1.5) * usq)
            return out

        return equilibrium
