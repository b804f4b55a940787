"""Five small independent modules, each loaded by its own first launch: few modules for NVRTC's header to serve."""

import warp as wp

wp.config.enable_backward = False


@wp.kernel(module="small_a")
def ka(x: wp.array(dtype=float)):
    i = wp.tid()
    x[i] = x[i] + 1.0


@wp.kernel(module="small_b")
def kb(x: wp.array(dtype=float)):
    i = wp.tid()
    x[i] = x[i] * 3.0


@wp.kernel(module="small_c")
def kc(x: wp.array(dtype=float)):
    i = wp.tid()
    x[i] = wp.sqrt(x[i])


@wp.kernel(module="small_d")
def kd(x: wp.array(dtype=float)):
    i = wp.tid()
    x[i] = x[i] - 0.5


@wp.kernel(module="small_e")
def ke(x: wp.array(dtype=float)):
    i = wp.tid()
    x[i] = wp.abs(x[i])


x = wp.ones(16, dtype=float, device="cpu")
for k in (ka, kb, kc, kd, ke):
    wp.launch(k, dim=16, inputs=[x], device="cpu")
print(float(x.numpy()[0]))
