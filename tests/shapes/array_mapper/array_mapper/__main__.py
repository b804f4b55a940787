"""Command-line entry point: `python -m array_mapper [--count N]`."""

from __future__ import annotations

import argparse
import sys

import numpy as np

from .pipeline import coarse_phase, refine_phase


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="array_mapper")
    parser.add_argument("--count", type=int, default=2048)
    args = parser.parse_args(argv)
    rng = np.random.default_rng(107)
    values = rng.normal(scale=3.0, size=args.count)
    offsets = rng.uniform(-0.5, 0.5, args.count)
    points = rng.normal(scale=2.0, size=(args.count, 3))
    coarse, lengths = coarse_phase(values, offsets, points, rounds=3)
    fine = refine_phase(coarse, rounds=2)
    print(f"coarse sum {coarse.sum():.4f} length sum {lengths.sum():.4f}")
    print(f"refined sum {fine.sum():.6f} max {fine.max():.6f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
