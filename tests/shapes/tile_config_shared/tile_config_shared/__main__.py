"""Command-line entry point: `python -m tile_config_shared [--batch N]`."""

from __future__ import annotations

import argparse
import sys

from .solver import run_both


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="tile_config_shared")
    parser.add_argument("--batch", type=int, default=256)
    args = parser.parse_args(argv)
    for name, start, final in run_both(batch=args.batch, seed=23):
        print(f"solver {name}: residual {start:.5f} -> {final:.5f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
