import numpy as np
import warp as wp

from effapp import core, late

n = 32
rng = np.random.default_rng(7)
x = wp.array(rng.standard_normal((n, 3)) * 0.1, dtype=wp.vec3, device="cpu")
v = wp.array(rng.standard_normal((n, 3)) * 0.1, dtype=wp.vec3, device="cpu")
out = wp.zeros(n, dtype=wp.vec3, device="cpu")
total = wp.zeros(1, dtype=float, device="cpu")
wp.launch(core.step, dim=n, inputs=[x, v, 0.3, out], device="cpu")
wp.launch(late.tone0, dim=n, inputs=[out, 0.2, x], device="cpu")
late.precise()
for k in late.KERNELS:
    wp.launch(k, dim=n, inputs=[x, 0.1, out], device="cpu")
wp.launch(core.norm, dim=n, inputs=[out, total], device="cpu")
print("total %.3f" % float(total.numpy()[0]))
