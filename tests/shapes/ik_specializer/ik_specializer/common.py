"""Kernels shared by every solver size."""

import warp as wp


@wp.kernel
def residual_cost(res: wp.array2d(dtype=float), cost: wp.array(dtype=float)):
    b = wp.tid()
    s = float(0.0)
    for r in range(res.shape[1]):
        s += res[b, r] * res[b, r]
    cost[b] = s
