"""Block kernels of the least-squares solver, specialised on the block size.

(No `from __future__ import annotations`: the kernels read the captured sizes.)
"""

from functools import cache

import warp as wp


@cache
def block_kernels(rows: int, cols: int):
    mod = wp.get_module(__name__ + "_shared")  # one module for every block size
    mod.options.update({"enable_backward": False})

    @wp.kernel(module=mod)
    def residual_jacobian(
        x: wp.array2d(dtype=float),
        t: wp.array(dtype=float),
        y: wp.array2d(dtype=float),
        res: wp.array2d(dtype=float),
        jac: wp.array3d(dtype=float),
    ):
        b, k = wp.tid()
        tk = t[k]
        model = 0.2 * wp.sin(x[b, 0] * tk)
        power = float(1.0)
        for j in range(wp.static(cols)):
            model += x[b, j] * power
            jac[b, k, j] = power
            power *= tk
        jac[b, k, 0] = jac[b, k, 0] + 0.2 * tk * wp.cos(x[b, 0] * tk)
        res[b, k] = model - y[b, k]

    @wp.kernel(module=mod)
    def gram(jac: wp.array3d(dtype=float), damping: float, out: wp.array3d(dtype=float)):
        b, i = wp.tid()
        for j in range(wp.static(cols)):
            s = float(0.0)
            for k in range(wp.static(rows)):
                s += jac[b, k, i] * jac[b, k, j]
            if i == j:
                s += damping
            out[b, i, j] = s

    @wp.kernel(module=mod)
    def rhs(jac: wp.array3d(dtype=float), res: wp.array2d(dtype=float), out: wp.array2d(dtype=float)):
        b, i = wp.tid()
        s = float(0.0)
        for k in range(wp.static(rows)):
            s += jac[b, k, i] * res[b, k]
        out[b, i] = -s

    return residual_jacobian, gram, rhs
