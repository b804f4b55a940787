"""Command-line entry point: `python -m energy_zoo [--cells-per-axis N]`."""

from __future__ import annotations

import argparse
import sys

from .evaluate import evaluate_all


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="energy_zoo")
    parser.add_argument("--cells-per-axis", type=int, default=4)
    args = parser.parse_args(argv)
    rows = evaluate_all(cells_per_axis=args.cells_per_axis, seed=5)
    for name, energy, grad_norm in rows:
        print(f"{name:<8s} energy {energy:.5f}  gradient norm {grad_norm:.5f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
