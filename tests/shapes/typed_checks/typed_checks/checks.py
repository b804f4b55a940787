"""Arithmetic checks per scalar type: an affine-abs map and a max-minus-min of two arrays."""

import numpy as np
import warp as wp

from .registry import get_kernel

DEVICE = "cpu"
FLOAT_TYPES = (np.float32, np.float64)


def check_unary(dtype, inputs: np.ndarray, register_only: bool = False):
    T = wp.dtype_from_numpy(np.dtype(dtype))

    def affine_abs(inp: wp.array(dtype=T), out: wp.array(dtype=T)):
        i = wp.tid()
        out[i] = T(3) * wp.abs(inp[i]) + T(1)

    kernel = get_kernel(affine_abs, np.dtype(dtype).name, enable_backward=dtype in FLOAT_TYPES)
    if register_only:
        return None
    a = wp.array(inputs.astype(dtype), dtype=T, device=DEVICE)
    out = wp.zeros_like(a)
    wp.launch(kernel, dim=a.shape[0], inputs=[a, out], device=DEVICE)
    return out.numpy()


def check_binary(dtype, x: np.ndarray, y: np.ndarray, register_only: bool = False):
    T = wp.dtype_from_numpy(np.dtype(dtype))

    def spread(a: wp.array(dtype=T), b: wp.array(dtype=T), out: wp.array(dtype=T)):
        i = wp.tid()
        out[i] = wp.max(a[i], b[i]) - wp.min(a[i], b[i])

    kernel = get_kernel(spread, np.dtype(dtype).name, enable_backward=dtype in FLOAT_TYPES)
    if register_only:
        return None
    a = wp.array(x.astype(dtype), dtype=T, device=DEVICE)
    b = wp.array(y.astype(dtype), dtype=T, device=DEVICE)
    out = wp.zeros_like(a)
    wp.launch(kernel, dim=a.shape[0], inputs=[a, b, out], device=DEVICE)
    return out.numpy()
