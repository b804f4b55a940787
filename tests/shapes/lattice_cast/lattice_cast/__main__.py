"""Command-line entry point: `python -m lattice_cast [--sites N] [--steps N]`."""

from __future__ import annotations

import argparse
import sys

import numpy as np

from .simulation import Simulation


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="lattice_cast")
    parser.add_argument("--sites", type=int, default=1024)
    parser.add_argument("--steps", type=int, default=6)
    args = parser.parse_args(argv)
    rng = np.random.default_rng(17)
    rho0 = 1.0 + 0.1 * rng.random(args.sites)
    sim = Simulation(args.sites, omega=0.8)
    parts = []
    for name in ("fp32/fp32", "fp64/fp32", "fp64/fp64"):
        mass, peak = sim.run(name, rho0, args.steps)
        parts.append(f"{name} mass {mass:.3f} peak {peak:.6f}")
    print("; ".join(parts[:2]))
    print(parts[2])
    return 0


if __name__ == "__main__":
    sys.exit(main())
