"""One module whose kernels launch at two block_dims: a CUDA run builds the module once per block_dim."""

import warp as wp

wp.config.enable_backward = False


@wp.kernel
def scale(x: wp.array(dtype=float)):
    i = wp.tid()
    x[i] = x[i] * 2.0


@wp.kernel
def shift(x: wp.array(dtype=float)):
    i = wp.tid()
    x[i] = x[i] + 1.0


x = wp.ones(64, dtype=float, device="cpu")
wp.launch(scale, dim=64, inputs=[x], block_dim=64, device="cpu")
wp.launch(shift, dim=64, inputs=[x], block_dim=128, device="cpu")
print(float(x.numpy()[0]))
