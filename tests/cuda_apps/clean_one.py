"""One module, one kernel, launched at the default block_dim: nothing CUDA-specific to fix."""

import warp as wp

wp.config.enable_backward = False


@wp.kernel
def axpy(x: wp.array(dtype=float), y: wp.array(dtype=float)):
    i = wp.tid()
    y[i] = 2.0 * x[i] + y[i]


x = wp.ones(32, dtype=float, device="cpu")
y = wp.zeros(32, dtype=float, device="cpu")
wp.launch(axpy, dim=32, inputs=[x, y], device="cpu")
print(float(y.numpy()[0]))
