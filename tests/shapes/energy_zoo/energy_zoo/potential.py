"""The base class of every material: kernel factories the subclasses call in their class bodies."""

from __future__ import annotations

import warp as wp


@wp.func
def deformation(points: wp.array(dtype=wp.vec3), tet: wp.vec4i, rest_inv: wp.mat33):
    x0 = points[tet[0]]
    ds = wp.matrix_from_cols(points[tet[1]] - x0, points[tet[2]] - x0, points[tet[3]] - x0)
    return ds * rest_inv


class ElasticPotential:
    """A hyperelastic material: an energy density and its first Piola stress."""

    name = "base"

    @classmethod
    def make_energy_kernel(cls, density_fn, module: str | None = "unique"):
        @wp.kernel(module=module)
        def cell_energy(
            points: wp.array(dtype=wp.vec3),
            tets: wp.array(dtype=wp.vec4i),
            rest_inv: wp.array(dtype=wp.mat33),
            volume: wp.array(dtype=wp.float32),
            mu: wp.float32,
            lam: wp.float32,
            out: wp.array(dtype=wp.float32),
        ):
            c = wp.tid()
            F = deformation(points, tets[c], rest_inv[c])
            out[c] = volume[c] * density_fn(F, mu, lam)

        return cell_energy

    @classmethod
    def make_gradient_kernel(cls, stress_fn, module: str | None = "unique"):
        @wp.kernel(module=module)
        def cell_gradient(
            points: wp.array(dtype=wp.vec3),
            tets: wp.array(dtype=wp.vec4i),
            rest_inv: wp.array(dtype=wp.mat33),
            volume: wp.array(dtype=wp.float32),
            mu: wp.float32,
            lam: wp.float32,
            grad: wp.array(dtype=wp.vec3),
        ):
            c = wp.tid()
            tet = tets[c]
            F = deformation(points, tet, rest_inv[c])
            H = volume[c] * stress_fn(F, mu, lam) * wp.transpose(rest_inv[c])
            Ht = wp.transpose(H)
            wp.atomic_add(grad, tet[1], Ht[0])
            wp.atomic_add(grad, tet[2], Ht[1])
            wp.atomic_add(grad, tet[3], Ht[2])
            wp.atomic_sub(grad, tet[0], Ht[0] + Ht[1] + Ht[2])

        return cell_gradient

    def __init__(self, mu: float, lam: float):
        self.mu = mu
        self.lam = lam

    def evaluate(self, mesh, device: str) -> tuple[float, float]:
        n_cells = mesh.tets.shape[0]
        energy = wp.zeros(n_cells, dtype=wp.float32, device=device)
        grad = wp.zeros(mesh.points.shape[0], dtype=wp.vec3, device=device)
        mu, lam = wp.float32(self.mu), wp.float32(self.lam)
        common = [mesh.points, mesh.tets, mesh.rest_inv]
        wp.launch(
            self.energy_kernel, dim=n_cells, inputs=[*common, mesh.volume, mu, lam], outputs=[energy], device=device
        )
        wp.launch(
            self.gradient_kernel, dim=n_cells, inputs=[*common, mesh.volume, mu, lam], outputs=[grad], device=device
        )
        g = grad.numpy().astype("float64")
        return float(energy.numpy().astype("float64").sum()), float((g * g).sum() ** 0.5)
