"""Normalise a batch of sensor readings and shape them with two element-wise maps, once per start-up."""

import numpy as np
import warp as wp


def main():
    rng = np.random.default_rng(11)
    raw = wp.array(rng.random(8192).astype(np.float32), dtype=float)
    centred = wp.map(lambda v: v * 2.0 - 1.0, raw)
    shaped = wp.map(lambda v: v * v * v + 0.5 * v, centred)
    out = shaped.numpy()
    print(f"n {out.size} mean {float(out.mean()):.6f} min {float(out.min()):.6f} max {float(out.max()):.6f}")


if __name__ == "__main__":
    main()
