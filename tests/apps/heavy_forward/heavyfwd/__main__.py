import numpy as np
import warp as wp

from heavyfwd import flow, heat, wave

n = 32
rng = np.random.default_rng(7)
x = wp.array(rng.standard_normal((n, 3)) * 0.1, dtype=wp.vec3, device="cpu")
v = wp.array(rng.standard_normal((n, 3)) * 0.1, dtype=wp.vec3, device="cpu")
out = wp.zeros(n, dtype=wp.vec3, device="cpu")
total = wp.zeros(1, dtype=float, device="cpu")
for mod in (flow, heat, wave):
    name = mod.__name__.rsplit(".", 1)[1]
    wp.launch(getattr(mod, name + "_step"), dim=n, inputs=[x, v, 0.3, out], device="cpu")
    wp.launch(getattr(mod, name + "_norm"), dim=n, inputs=[out, total], device="cpu")
print("total %.4f" % float(total.numpy()[0]))
