"""Blend two noise fields a step at a time: each step asks the helpers below for its kernels and records them, so
the run can be replayed kernel by kernel afterwards."""

import functools

import numpy as np
import warp as wp


@functools.cache
def make_blend(weight):
    @wp.kernel(module="unique")
    def blend(a: wp.array(dtype=float), b: wp.array(dtype=float), out: wp.array(dtype=float)):
        i = wp.tid()
        out[i] = wp.min(a[i] * weight + b[i] * (1.0 - weight), 1.0)

    return blend


@functools.cache
def make_decay(rate):
    @wp.kernel(module="unique")
    def decay(x: wp.array(dtype=float), acc: wp.array(dtype=float)):
        i = wp.tid()
        acc[i] = acc[i] * rate + x[i]

    return decay


def step(a, b, out, acc, record):
    n = out.shape[0]
    blend = make_blend(0.25)
    wp.launch(blend, dim=n, inputs=[a, b, out])
    decay = make_decay(0.9)
    wp.launch(decay, dim=n, inputs=[out, acc])
    record.append((blend, decay))


def main():
    rng = np.random.default_rng(7)
    n = 4096
    a = wp.array(rng.random(n, dtype=np.float32), dtype=float)
    b = wp.array(rng.random(n, dtype=np.float32) * 1.5, dtype=float)
    out = wp.zeros(n, dtype=float)
    acc = wp.zeros(n, dtype=float)
    record = []
    for _ in range(200):
        step(a, b, out, acc, record)
    total = acc.numpy()
    print(f"steps {len(record)} mean {total.mean():.5f} max {total.max():.5f}")


if __name__ == "__main__":
    main()
