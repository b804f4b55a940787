"""Command-line entry point: `python -m lbm_operators [--size N] [--steps N]`."""

from __future__ import annotations

import argparse
import sys

import warp as wp

from .flow import run_phase
from .stepper import NSEStepper


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="lbm_operators")
    parser.add_argument("--size", type=int, default=32)
    parser.add_argument("--steps", type=int, default=5)
    args = parser.parse_args(argv)
    stepper = NSEStepper(omega=1.2)
    m32, e32 = run_phase(stepper, args.size, args.steps, wp.float32, seed=97)
    m64, e64 = run_phase(stepper, args.size, args.steps, wp.float64, seed=97)
    print(f"float32 storage: mass {m32:.4f} kinetic {e32:.6f}")
    print(f"float64 storage: mass {m64:.4f} kinetic {e64:.6f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
