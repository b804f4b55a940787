"""A tiny D1Q3 lattice run whose operators are made the first time a policy is used."""

from __future__ import annotations

import numpy as np
import warp as wp

from .cast import CastRelax
from .policy import POLICIES, Q
from .stream import Stream

DEVICE = "cpu"


@wp.kernel
def perturb(rho: wp.array(dtype=float), amplitude: float, phase: float):
    i = wp.tid()
    x = float(i) / float(rho.shape[0])
    rho[i] = rho[i] * (1.0 + amplitude * wp.sin(6.2831853 * x + phase))


class Simulation:
    def __init__(self, n: int, omega: float):
        self.n = n
        self.omega = omega
        self._ops = {}

    def operators(self, name: str):
        if name not in self._ops:
            policy = POLICIES[name]
            self._ops[name] = (CastRelax(policy, self.omega), Stream(policy))
        return self._ops[name]

    def run(self, name: str, rho0: np.ndarray, steps: int) -> float:
        policy = POLICIES[name]
        relax, stream = self.operators(name)
        rho = wp.array(rho0.astype(np.float32), dtype=float, device=DEVICE)
        wp.launch(perturb, dim=self.n, inputs=[rho, 0.05, 0.3], device=DEVICE)
        r = rho.numpy().astype(np.float64)
        f0 = np.stack([r * 4.0 / 6.0, r / 6.0 * 1.02, r / 6.0 * 0.98], axis=1).astype(policy.store_numpy)
        vec = wp.types.vector(length=Q, dtype=policy.store)
        a = wp.array(f0, dtype=vec, device=DEVICE)
        b = wp.zeros_like(a)
        for _ in range(steps):
            wp.launch(relax.kernel, dim=self.n, inputs=[a, b], device=DEVICE)
            wp.launch(stream.kernel, dim=self.n, inputs=[b, a], device=DEVICE)
        f = a.numpy().astype(np.float64)
        return float(f.sum()), float(f[:, 1].max())
