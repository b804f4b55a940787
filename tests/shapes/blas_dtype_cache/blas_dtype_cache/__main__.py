"""Command-line entry point: `python -m blas_dtype_cache [--segments N]`."""

from __future__ import annotations

import argparse
import sys

from .phases import run


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="blas_dtype_cache")
    parser.add_argument("--segments", type=int, default=96)
    args = parser.parse_args(argv)
    for name, dots, zeroed, block in run(segments=args.segments, seed=61):
        print(f"{name}: segment dots {dots:.5f}  after masked zero {zeroed:.5f}  block matvec {block:.5f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
