"""Operators and the boundary-condition base class, whose kernels are nested here."""

import warp as wp


@wp.func
def lattice_dir(q: int) -> wp.vec2:
    x = float(0.0)
    y = float(0.0)
    if q == 1 or q == 5 or q == 8:
        x = 1.0
    if q == 3 or q == 6 or q == 7:
        x = -1.0
    if q == 2 or q == 5 or q == 6:
        y = 1.0
    if q == 4 or q == 7 or q == 8:
        y = -1.0
    return wp.vec2(x, y)


@wp.func
def lattice_weight(q: int) -> float:
    if q == 0:
        return 4.0 / 9.0
    if q < 5:
        return 1.0 / 9.0
    return 1.0 / 36.0


@wp.func
def equilibrium(q: int, rho: float, u: wp.vec2) -> float:
    cu = wp.dot(lattice_dir(q), u)
    return lattice_weight(q) * rho * (1.0 + 3.0 * cu + 4.5 * cu * cu - 1.5 * wp.dot(u, u))


@wp.kernel
def count_tagged(mask: wp.array(dtype=wp.uint8), counts: wp.array(dtype=int)):
    cell = wp.tid()
    wp.atomic_add(counts, int(mask[cell]), 1)


class Operator:
    """Every operator builds its Warp function and kernel when it is constructed."""

    store_dtype = wp.float32

    def __init__(self):
        self.rule, self.kernel = self._construct_warp()

    def _construct_warp(self):
        raise NotImplementedError


class BoundaryCondition(Operator):
    def __init__(self, tag: int):
        self.tag = tag
        super().__init__()

    def _build_kernel(self, rule_fn):
        tag = wp.uint8(self.tag)

        @wp.kernel
        def apply_rule(mask: wp.array(dtype=wp.uint8), f: wp.array2d(dtype=self.store_dtype)):
            cell = wp.tid()
            if mask[cell] != tag:
                return
            rho = float(0.0)
            mom = wp.vec2(0.0, 0.0)
            for q in range(9):
                fq = float(f[q, cell])
                rho += fq
                mom += fq * lattice_dir(q)
            target = rule_fn(rho, mom / rho)
            u = wp.vec2(target[1], target[2])
            for q in range(9):
                f[q, cell] = self.store_dtype(equilibrium(q, target[0], u))

        return apply_rule

    def apply(self, mask, f) -> None:
        wp.launch(self.kernel, dim=mask.shape[0], inputs=[mask, f], device=f.device)
