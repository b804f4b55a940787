"""Command-line entry point: `python -m ik_specializer [--batch N]`."""

from __future__ import annotations

import argparse
import sys

from .solver import run


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="ik_specializer")
    parser.add_argument("--batch", type=int, default=128)
    parser.add_argument("--iterations", type=int, default=8)
    args = parser.parse_args(argv)
    for label, start, final in run(batch=args.batch, iterations=args.iterations, seed=19):
        print(f"{label}: mean cost {start:.5f} -> {final:.5f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
