"""Four independent modules, each loaded by its own first launch, one after another."""

import warp as wp

wp.config.enable_backward = False


@wp.kernel(module="stage_a")
def ka(x: wp.array(dtype=float)):
    i = wp.tid()
    x[i] = x[i] + 1.0


@wp.kernel(module="stage_b")
def kb(x: wp.array(dtype=float)):
    i = wp.tid()
    x[i] = x[i] * 3.0


@wp.kernel(module="stage_c")
def kc(x: wp.array(dtype=float)):
    i = wp.tid()
    x[i] = wp.sqrt(x[i])


@wp.kernel(module="stage_d")
def kd(x: wp.array(dtype=float)):
    i = wp.tid()
    x[i] = x[i] - 0.5


x = wp.ones(16, dtype=float, device="cpu")
for k in (ka, kb, kc, kd):
    wp.launch(k, dim=16, inputs=[x], device="cpu")
print(float(x.numpy()[0]))
