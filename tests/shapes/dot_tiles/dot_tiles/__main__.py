"""Command-line entry point: `python -m dot_tiles [--length N] [--batch N]`."""

from __future__ import annotations

import argparse
import sys

from .batched import run


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="dot_tiles")
    parser.add_argument("--length", type=int, default=1024)
    parser.add_argument("--batch", type=int, default=8)
    args = parser.parse_args(argv)
    for name, by_tile in run(length=args.length, batch=args.batch, seed=71):
        print(f"{name}: " + "  ".join(f"tile {tile} mean dot {value:.4f}" for tile, value in by_tile))
    return 0


if __name__ == "__main__":
    sys.exit(main())
