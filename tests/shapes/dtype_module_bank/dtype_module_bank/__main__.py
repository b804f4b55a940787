"""Command-line entry point: `python -m dtype_module_bank [--rows N]`."""

from __future__ import annotations

import argparse
import sys

from .pipeline import run


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="dtype_module_bank")
    parser.add_argument("--rows", type=int, default=512)
    args = parser.parse_args(argv)
    for name, checksum, weighted in run(rows=args.rows, seed=17):
        print(f"{name}: permutation checksum {checksum}  weighted gather {weighted:.5f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
