"""Command-line entry point: `python -m qualname_stages [--steps N] [--count N]`."""

from __future__ import annotations

import argparse
import sys

from .physics import simulate


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="qualname_stages")
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--count", type=int, default=1024)
    args = parser.parse_args(argv)
    result = simulate(count=args.count, steps=args.steps, seed=3)
    print(f"steps {result['steps']}  mean radius {result['mean_radius']:.5f}")
    print(f"mean kinetic energy {result['kinetic']:.5f}  mean height {result['height']:.5f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
