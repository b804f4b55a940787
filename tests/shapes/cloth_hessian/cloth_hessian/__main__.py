"""Command-line entry point: `python -m cloth_hessian [--count N]`."""

from __future__ import annotations

import argparse
import sys

from .solver import simulate


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="cloth_hessian")
    parser.add_argument("--count", type=int, default=1024)
    args = parser.parse_args(argv)
    residual, speed, height = simulate(args.count, steps=5, iterations=8, seed=3)
    print(f"final residual {residual:.3e}")
    print(f"total |v| {speed:.4f}  mean height {height:.5f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
