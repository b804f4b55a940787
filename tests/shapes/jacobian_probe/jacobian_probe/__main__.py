"""Command-line entry point: `python -m jacobian_probe [--seed N]`."""

from __future__ import annotations

import argparse
import sys

from .example import run


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="jacobian_probe")
    parser.add_argument("--seed", type=int, default=8)
    args = parser.parse_args(argv)
    for label, sums in run(seed=args.seed):
        print(f"{label}: column sums " + " ".join(f"{s:.5f}" for s in sums))
    return 0


if __name__ == "__main__":
    sys.exit(main())
