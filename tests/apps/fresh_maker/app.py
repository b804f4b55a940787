"""A kernel factory handed a new wp.func at every step (tests/test_cache_maker.py).

`make_shade(style)` is a module function taking a string that defines a new `@wp.func` at each call; `shade_kernel`
is a plain factory (no cache) of a `module="unique"` kernel calling it. Each step asks for
`shade_kernel(make_shade(STYLE))`, so a new kernel object is made at every step although the style never changes.
`--gain-array` makes the maker read a run-time array instead (a cache must be refused there).
"""

import sys

import numpy as np
import warp as wp

STYLE = "soft"
GAINS = wp.array(np.array([0.5, 2.0], dtype=np.float32), dtype=float, device="cpu")


def make_shade(style: str):
    weight = 0.25 if style == "soft" else 1.0

    @wp.func
    def shade(x: float) -> float:
        return wp.sqrt(wp.abs(x)) * weight

    return shade


def make_shade_from(style: str):
    weight = float(GAINS.numpy()[0 if style == "soft" else 1])  # a run-time array the run may change

    @wp.func
    def shade(x: float) -> float:
        return wp.sqrt(wp.abs(x)) * weight

    return shade


def shade_kernel(shade_fn):
    @wp.kernel(module="unique", enable_backward=False)
    def apply(x: wp.array(dtype=float), y: wp.array(dtype=float)):
        i = wp.tid()
        y[i] = shade_fn(x[i]) + x[i] * 0.5

    return apply


def main(steps: int, from_array: bool) -> float:
    x = wp.array(np.linspace(-1.0, 1.0, 64, dtype=np.float32), dtype=float, device="cpu")
    y = wp.zeros(64, dtype=float, device="cpu")
    total = 0.0
    for _ in range(steps):
        if from_array:
            kernel = shade_kernel(make_shade_from(STYLE))
        else:
            kernel = shade_kernel(make_shade(STYLE))
        wp.launch(kernel, dim=64, inputs=[x], outputs=[y], device="cpu")
        total += float(y.numpy().sum())
    return total


if __name__ == "__main__":
    print(f"total {main(40, '--gain-array' in sys.argv):.4f}")
