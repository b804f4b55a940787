"""Command-line entry point: `python -m grad_import [--count N]`."""

from __future__ import annotations

import argparse
import sys

from .checks import run_rounds


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="grad_import")
    parser.add_argument("--count", type=int, default=1024)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    clip, softabs = run_rounds(count=args.count, rounds=args.rounds, seed=29)
    print(f"soft_clip: loss {clip[0]:.5f}  gradient sum {clip[1]:.5f}  gradient max {clip[2]:.5f}")
    print(f"smooth_abs: loss {softabs[0]:.5f}  gradient sum {softabs[1]:.5f}  gradient max {softabs[2]:.5f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
