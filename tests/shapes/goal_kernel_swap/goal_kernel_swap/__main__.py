"""Command-line entry point: `python -m goal_kernel_swap [--samples N]`."""

from __future__ import annotations

import argparse
import sys

import numpy as np

from .cost import PoseCost


def _goals(rng, n: int):
    pos = rng.uniform(-1.0, 1.0, (n, 3))
    rot = rng.normal(size=(n, 4))
    rot /= np.linalg.norm(rot, axis=1, keepdims=True)
    return pos, rot


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="goal_kernel_swap")
    parser.add_argument("--samples", type=int, default=512)
    args = parser.parse_args(argv)
    rng = np.random.default_rng(53)
    cost = PoseCost("axis_angle")
    parts = []
    for size in (1, 3, 1, 5):  # goal sets arrive with the requests
        angles = rng.uniform(-np.pi, np.pi, (args.samples, 3))
        c, g = cost.forward(angles, *_goals(rng, size))
        i = int(np.argmin(c))
        mean = float(c.astype(np.float64).mean())
        parts.append(f"n={size} best goal {int(g[i])} cost {float(c[i]):.5f} mean {mean:.4f}")
    print("; ".join(parts[:2]))
    print("; ".join(parts[2:]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
