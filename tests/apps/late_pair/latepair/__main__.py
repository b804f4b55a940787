"""Center and advect a particle cloud, then sum its speeds in float32 and, for the audit, in float64."""

import numpy as np
import warp as wp

from latepair import stages, totals

n = 64
rng = np.random.default_rng(3)
pos_np = rng.normal(size=(n, 3)).astype(np.float32)
pos = wp.array(pos_np, dtype=wp.vec3, device="cpu")
vel = wp.array(rng.normal(scale=0.3, size=(n, 3)).astype(np.float32), dtype=wp.vec3, device="cpu")
wp.launch(stages.center, dim=n, inputs=[pos, wp.vec3(*pos_np.mean(axis=0).tolist())], device="cpu")
stages.configure()
wp.launch(stages.advect, dim=n, inputs=[pos, vel, 0.3], device="cpu")
speed = np.linalg.norm(vel.numpy(), axis=1)
w = np.linspace(0.0, 1.0, n)
s32 = totals.accumulate(wp.array(speed.astype(np.float32), device="cpu"), wp.array(w.astype(np.float32), device="cpu"))
s64 = totals.accumulate(wp.array(speed.astype(np.float64), device="cpu"), wp.array(w, device="cpu"))
print("sum32 %.3f sum64 %.3f" % (s32, s64))
