"""Command-line entry point: `python -m typed_checks [--count N] [--register-first]`."""

from __future__ import annotations

import argparse
import sys

from . import suite


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="typed_checks")
    parser.add_argument("--count", type=int, default=1024)
    parser.add_argument("--register-first", action="store_true", help="create every kernel before any launch")
    args = parser.parse_args(argv)
    if args.register_first:
        suite.register_all()
    rows = suite.run_all(args.count, seed=31)
    for name, unary_mean, binary_max in rows:
        print(f"{name}: affine-abs mean {unary_mean:.4f} spread max {binary_max:.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
