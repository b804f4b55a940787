# Copyright (c) 2026 The particlekit authors.
# SPDX-License-Identifier: MIT
"""Command-line entry point: `python -m particlekit [--count N]`."""

from __future__ import annotations

import argparse
import sys

from .pipeline import prepare


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="particlekit")
    parser.add_argument("--count", type=int, default=2048)
    args = parser.parse_args(argv)
    summary = prepare(count=args.count, seed=11)
    print(f"mean radius {summary['mean_radius']:.5f}  max speed {summary['max_speed']:.5f}")
    print(f"conditioned energy {summary['energy']:.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
