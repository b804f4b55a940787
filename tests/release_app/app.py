"""One small module for the release matrix: a late option, then a late generic instance, all on the CPU."""

from typing import Any

import warp as wp

wp.config.enable_backward = False


@wp.kernel
def scale(a: wp.array(dtype=wp.float32)):
    i = wp.tid()
    a[i] = a[i] * 2.0


@wp.kernel
def shift(a: wp.array(dtype=Any)):
    i = wp.tid()
    a[i] = a[i] + a.dtype(1.0)


a = wp.zeros(8, dtype=wp.float32, device="cpu")
wp.launch(scale, dim=8, inputs=[a], device="cpu")
wp.set_module_options({"fast_math": True})
wp.launch(shift, dim=8, inputs=[a], device="cpu")
b = wp.zeros(8, dtype=wp.float64, device="cpu")
wp.launch(shift, dim=8, inputs=[b], device="cpu")
print(a.numpy().sum() + b.numpy().sum())
