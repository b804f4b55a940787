"""A small forward-only app for the fix engine's slow tests: two kernels nothing differentiates, one printed line.

`--check` is a second invocation whose output a fix must keep (a must-keep path)."""

import sys

import numpy as np
import warp as wp

SCALE = 0.5


@wp.func
def smooth(x: float, y: float) -> float:
    a = wp.sin(x) * wp.cos(y) + wp.exp(-x * x) * wp.tanh(y)
    b = wp.sqrt(x * x + y * y + 1.0) * wp.atan2(y, x + 2.0)
    return a * b + wp.log(1.0 + wp.abs(a - b))


@wp.kernel
def field(xs: wp.array(dtype=float), ys: wp.array(dtype=float), out: wp.array(dtype=float)):
    i = wp.tid()
    acc = float(0.0)
    for k in range(4):
        acc += smooth(xs[i] + float(k), ys[i]) * SCALE
    out[i] = acc


@wp.kernel
def reduce(vals: wp.array(dtype=float), total: wp.array(dtype=float)):
    i = wp.tid()
    v = vals[i]
    w = wp.sin(v) * wp.cos(v) + wp.sqrt(wp.abs(v) + 1.0)
    wp.atomic_add(total, 0, v + 0.001 * w)


n = 64
rng = np.random.default_rng(3)
xs = wp.array(rng.standard_normal(n).astype(np.float32), dtype=float, device="cpu")
ys = wp.array(rng.standard_normal(n).astype(np.float32), dtype=float, device="cpu")
out = wp.zeros(n, dtype=float, device="cpu")
total = wp.zeros(1, dtype=float, device="cpu")
wp.launch(field, dim=n, inputs=[xs, ys, out], device="cpu")
wp.launch(reduce, dim=n, inputs=[out, total], device="cpu")
if "--check" in sys.argv:
    print("check %.3f" % float(out.numpy()[0]))
else:
    print("total %.4f" % float(total.numpy()[0]))
