"""Device functions with hand-written gradients."""

import warp as wp


@wp.func
def soft_clip(x: float, k: float) -> float:
    return k * wp.tanh(x / k)


@wp.func_grad(soft_clip)
def adj_soft_clip(x: float, k: float, adj_ret: float):
    # straight-through inside the band, a small leak outside it
    if wp.abs(x) < k:
        wp.adjoint[x] += adj_ret
    else:
        wp.adjoint[x] += 0.1 * adj_ret


@wp.func
def smooth_abs(x: float, eps: float) -> float:
    return wp.sqrt(x * x + eps)


@wp.func_grad(smooth_abs)
def adj_smooth_abs(x: float, eps: float, adj_ret: float):
    # a sign-like gradient that stays bounded by one
    wp.adjoint[x] += adj_ret * x / wp.max(wp.abs(x), wp.sqrt(eps))
