"""Normalise a batch of sensor readings and shape them with two element-wise maps, once per start-up."""

import numpy as np
import warp as wp


def centre(v):
    return v * 2.0 - 1.0


def shape(v):
    return v * v * v + 0.5 * v


def main():
    rng = np.random.default_rng(11)
    raw = wp.array(rng.random(8192).astype(np.float32), dtype=float)
    centred = wp.map(centre, raw)
    shaped = wp.map(shape, centred)
    out = shaped.numpy()
    print(f"n {out.size} mean {float(out.mean()):.6f} min {float(out.min()):.6f} max {float(out.max()):.6f}")


if __name__ == "__main__":
    main()
