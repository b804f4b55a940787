"""A Zou/He-style boundary: a prescribed velocity or a prescribed density, chosen by kind."""

import warp as wp

from .boundary import BoundaryCondition


class ZouHeLike(BoundaryCondition):
    def __init__(self, kind: str, tag: int, value: float):
        self.kind = kind
        self.value = value
        super().__init__(tag)

    def _construct_warp(self):
        u_wall = wp.vec2(self.value, 0.0)
        rho_wall = float(self.value)

        @wp.func
        def velocity_rule(rho: float, u: wp.vec2) -> wp.vec3:
            return wp.vec3(rho, u_wall[0], u_wall[1])

        @wp.func
        def pressure_rule(rho: float, u: wp.vec2) -> wp.vec3:
            return wp.vec3(rho_wall, u[0], u[1])

        if self.kind == "velocity":
            chosen = velocity_rule
        elif self.kind == "pressure":
            chosen = pressure_rule
        else:
            raise ValueError(f"unknown boundary kind {self.kind!r}")
        return chosen, self._build_kernel(chosen)
