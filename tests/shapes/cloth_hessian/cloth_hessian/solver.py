"""Implicit steps solved with a few conjugate-gradient iterations on the contact Hessian."""

from __future__ import annotations

import numpy as np
import warp as wp

from . import kernels
from .contacts import ClothContacts

DEVICE = "cpu"


def _dot(a, b) -> float:
    return float((a.numpy().astype(np.float64) * b.numpy().astype(np.float64)).sum())


def cg(contacts: ClothContacts, rhs, iterations: int):
    x = wp.zeros_like(rhs)
    r = wp.clone(rhs)
    p = wp.clone(rhs)
    rr = _dot(r, r)
    for _ in range(iterations):
        ap = contacts.hessian_times(p)
        alpha = rr / _dot(p, ap)
        wp.launch(kernels.axpy, dim=x.shape[0], inputs=[p, alpha, x], device=DEVICE)
        wp.launch(kernels.axpy, dim=x.shape[0], inputs=[ap, -alpha, r], device=DEVICE)
        rr_new = _dot(r, r)
        wp.launch(kernels.xpby, dim=x.shape[0], inputs=[r, rr_new / rr, p], device=DEVICE)
        rr = rr_new
    return x, float(np.sqrt(rr))


def simulate(count: int, steps: int, iterations: int, seed: int):
    rng = np.random.default_rng(seed)
    dt = 1.0 / 60.0
    mass = wp.array(rng.uniform(0.5, 1.5, count).astype(np.float32), dtype=float, device=DEVICE)
    stiffness = wp.array(rng.uniform(200.0, 800.0, count).astype(np.float32), dtype=float, device=DEVICE)
    nrm = rng.normal(size=(count, 3))
    nrm /= np.linalg.norm(nrm, axis=1, keepdims=True)
    normal = wp.array(nrm.astype(np.float32), dtype=wp.vec3, device=DEVICE)
    pos = wp.array(rng.uniform(-1.0, 1.0, (count, 3)).astype(np.float32), dtype=wp.vec3, device=DEVICE)
    vel = wp.zeros(count, dtype=wp.vec3, device=DEVICE)
    contacts = ClothContacts(mass, stiffness, normal, dt)
    residual = 0.0
    for _ in range(steps):
        force = rng.normal(scale=2.0, size=(count, 3)) + np.array([0.0, -9.8, 0.0])
        rhs = wp.array((force * dt).astype(np.float32), dtype=wp.vec3, device=DEVICE)
        dv, residual = cg(contacts, rhs, iterations)
        wp.launch(kernels.advance, dim=count, inputs=[pos, vel, dv, dt], device=DEVICE)
    p = pos.numpy().astype(np.float64)
    return residual, float(np.abs(vel.numpy().astype(np.float64)).sum()), float(p[:, 1].mean())
