"""A three-point smoothing pass."""

import numpy as np
import warp as wp

wp.set_module_options({"enable_backward": False})


@wp.kernel
def smooth_pass(src: wp.array(dtype=float), dst: wp.array(dtype=float)):
    i = wp.tid()
    n = src.shape[0]
    a = src[wp.max(i - 1, 0)]
    b = src[i]
    c = src[wp.min(i + 1, n - 1)]
    dst[i] = 0.25 * a + 0.5 * b + 0.25 * c


def smooth(n: int, passes: int) -> float:
    wp.clear_kernel_cache()  # never trust an old binary
    x = np.sin(np.linspace(0.0, 12.0, n)).astype(np.float32)
    a = wp.array(x, dtype=float, device="cpu")
    b = wp.zeros(n, dtype=float, device="cpu")
    for _ in range(passes):
        wp.launch(smooth_pass, dim=n, inputs=[a, b], device="cpu")
        a, b = b, a
    return float(a.numpy().sum())
