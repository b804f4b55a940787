"""Command-line entry point: `python -m mass_apply [--steps N]`."""

from __future__ import annotations

import argparse
import sys

from .relax import run


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="mass_apply")
    parser.add_argument("--steps", type=int, default=10)
    args = parser.parse_args(argv)
    dense, sparse = run(steps=args.steps, seed=13)
    print(f"dense model: |x| {dense[0]:.5f}  |Mx - b| {dense[1]:.5f}")
    print(f"sparse model: |x| {sparse[0]:.5f}  |Mx - b| {sparse[1]:.5f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
