# Copyright (c) 2026 The particle_ship authors.
# SPDX-License-Identifier: Apache-2.0
"""Command-line entry point: `python -m particle_ship [--count N]`."""

from __future__ import annotations

import argparse
import sys

from .pipeline import run


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="particle_ship")
    parser.add_argument("--count", type=int, default=2048)
    args = parser.parse_args(argv)
    summary = run(count=args.count, seed=7)
    print(f"mean radius {summary['mean_radius']:.5f}  max speed {summary['max_speed']:.5f}")
    print(f"exported energy {summary['energy']:.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
