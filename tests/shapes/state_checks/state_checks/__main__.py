"""Command-line entry point: `python -m state_checks [--bodies N]`."""

from __future__ import annotations

import argparse
import sys

from .scenario import run


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="state_checks")
    parser.add_argument("--bodies", type=int, default=512)
    parser.add_argument("--steps", type=int, default=60)
    args = parser.parse_args(argv)
    results = run(args.bodies, args.steps, seed=61)
    print("  ".join(f"{name}: {ok} pass {bad} fail" for name, ok, bad in results[:2]))
    print("  ".join(f"{name}: {ok} pass {bad} fail" for name, ok, bad in results[2:]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
