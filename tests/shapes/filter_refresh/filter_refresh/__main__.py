"""Command-line entry point: `python -m filter_refresh [--steps N] [--fixed]`."""

from __future__ import annotations

import argparse
import sys

from .scene import run


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="filter_refresh")
    parser.add_argument("--steps", type=int, default=15)
    parser.add_argument("--boxes", type=int, default=384)
    parser.add_argument("--fixed", action="store_true", help="key the sweep kernel on the filter mode integer")
    args = parser.parse_args(argv)
    counts = run(boxes=args.boxes, steps=args.steps, fixed=args.fixed, seed=53)
    print(f"pairs per step: first {counts[0]}  last {counts[-1]}  total {sum(counts)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
