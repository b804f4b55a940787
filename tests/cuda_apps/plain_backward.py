"""One module left with backward code on (Warp's default) that nothing differentiates."""

import warp as wp


@wp.kernel
def damp(x: wp.array(dtype=wp.vec3), v: wp.array(dtype=wp.vec3), k: float):
    i = wp.tid()
    d = x[i] - wp.vec3(0.5, 0.5, 0.5)
    for _ in range(8):  # enough differentiable math that its adjoint is a clear share of the build
        d = wp.vec3(wp.sin(d[1]) * k, wp.cos(d[2]) + wp.tanh(d[0]), wp.exp(-k * wp.length(d)))
    v[i] = v[i] * wp.exp(-k * wp.length(d)) + wp.normalize(d + wp.vec3(1.0e-3, 0.0, 0.0))


x = wp.full(64, wp.vec3(1.0, 2.0, 3.0), dtype=wp.vec3, device="cpu")
v = wp.zeros(64, dtype=wp.vec3, device="cpu")
wp.launch(damp, dim=64, inputs=[x, v, 0.1], device="cpu")
print(float(v.numpy()[0, 0]))
