"""Run the toy engine. --no-grad turns Warp's backward code off, as engines' own switches often do."""
import sys

import engine
import numpy as np
import warp as wp
from engine.contacts import ground
from engine.solver import integrate

if "--no-grad" in sys.argv:
    wp.config.enable_backward = False  # too late for engine.solver / engine.contacts: created at `import engine`

from engine.render_prep import to_points  # noqa: E402

n = 16
x = wp.array(np.linspace(-1, 1, n * 3).reshape(n, 3), dtype=wp.vec3, device="cpu")
v = wp.zeros(n, dtype=wp.vec3, device="cpu")
out = wp.zeros(n, dtype=wp.vec3, device="cpu")
for _ in range(3):
    wp.launch(integrate, dim=n, inputs=[x, v, 0.01], device="cpu")
    wp.launch(ground, dim=n, inputs=[x, v], device="cpu")
wp.launch(to_points, dim=n, inputs=[x, 2.0, out], device="cpu")
print("points %.4f" % float(out.numpy().sum()), engine.__name__)
