"""Command-line entry point: `python -m boundary_kinds [--size N] [--steps N]`."""

from __future__ import annotations

import argparse
import sys

from .lattice import run


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="boundary_kinds")
    parser.add_argument("--size", type=int, default=32)
    parser.add_argument("--steps", type=int, default=8)
    args = parser.parse_args(argv)
    total, per_tag = run(size=args.size, steps=args.steps, seed=2)
    print(f"mass per cell {total:.5f}")
    print("boundary density " + "  ".join(f"{name} {value:.5f}" for name, value in per_tag))
    return 0


if __name__ == "__main__":
    sys.exit(main())
