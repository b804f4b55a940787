"""Soft-clip a signal again and again: each pass maps a Warp function over the samples and blends the result in."""

import numpy as np
import warp as wp


@wp.func
def soft_clip(x: float, knee: float):
    return x / (1.0 + wp.abs(x) / knee)


def main():
    rng = np.random.default_rng(3)
    n = 2048
    signal = wp.array((rng.standard_normal(n) * 4.0).astype(np.float32), dtype=float)
    passes = 400
    for _ in range(passes):
        clipped = wp.map(soft_clip, signal, 2.0)
        signal = clipped
    out = signal.numpy()
    print(f"passes {passes} rms {float(np.sqrt((out * out).mean())):.6f} peak {float(np.abs(out).max()):.6f}")


if __name__ == "__main__":
    main()
