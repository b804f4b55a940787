"""Three materials. Each class body asks the base class for its kernels, as soon as it is imported."""

from __future__ import annotations

import warp as wp

from .potential import ElasticPotential


@wp.func
def small_strain(F: wp.mat33):
    return 0.5 * (F + wp.transpose(F)) - wp.identity(n=3, dtype=wp.float32)


@wp.func
def hooke_density(F: wp.mat33, mu: wp.float32, lam: wp.float32):
    e = small_strain(F)
    tr = wp.trace(e)
    return mu * wp.ddot(e, e) + 0.5 * lam * tr * tr


@wp.func
def hooke_stress(F: wp.mat33, mu: wp.float32, lam: wp.float32):
    e = small_strain(F)
    return 2.0 * mu * e + lam * wp.trace(e) * wp.identity(n=3, dtype=wp.float32)


@wp.func
def green_strain(F: wp.mat33):
    return 0.5 * (wp.transpose(F) * F - wp.identity(n=3, dtype=wp.float32))


@wp.func
def stvk_density(F: wp.mat33, mu: wp.float32, lam: wp.float32):
    E = green_strain(F)
    tr = wp.trace(E)
    return mu * wp.ddot(E, E) + 0.5 * lam * tr * tr


@wp.func
def stvk_stress(F: wp.mat33, mu: wp.float32, lam: wp.float32):
    E = green_strain(F)
    return F * (2.0 * mu * E + lam * wp.trace(E) * wp.identity(n=3, dtype=wp.float32))


@wp.func
def volume_gradient(F: wp.mat33):
    c0 = wp.vec3(F[0, 0], F[1, 0], F[2, 0])
    c1 = wp.vec3(F[0, 1], F[1, 1], F[2, 1])
    c2 = wp.vec3(F[0, 2], F[1, 2], F[2, 2])
    return wp.matrix_from_cols(wp.cross(c1, c2), wp.cross(c2, c0), wp.cross(c0, c1))


@wp.func
def soft_neo_density(F: wp.mat33, mu: wp.float32, lam: wp.float32):
    alpha = 1.0 + mu / lam
    j = wp.determinant(F) - alpha
    return 0.5 * mu * (wp.ddot(F, F) - 3.0) + 0.5 * lam * j * j


@wp.func
def soft_neo_stress(F: wp.mat33, mu: wp.float32, lam: wp.float32):
    alpha = 1.0 + mu / lam
    return mu * F + lam * (wp.determinant(F) - alpha) * volume_gradient(F)


class Hooke(ElasticPotential):
    name = "hooke"
    energy_kernel = ElasticPotential.make_energy_kernel(hooke_density)
    gradient_kernel = ElasticPotential.make_gradient_kernel(hooke_stress)


class StVenant(ElasticPotential):
    name = "stvk"
    energy_kernel = ElasticPotential.make_energy_kernel(stvk_density)
    gradient_kernel = ElasticPotential.make_gradient_kernel(stvk_stress)


class SoftNeo(ElasticPotential):
    name = "softneo"
    energy_kernel = ElasticPotential.make_energy_kernel(soft_neo_density)
    gradient_kernel = ElasticPotential.make_gradient_kernel(soft_neo_stress)
