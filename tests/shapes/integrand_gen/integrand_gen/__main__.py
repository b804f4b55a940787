"""Command-line entry point: `python -m integrand_gen [--cells N]`."""

from __future__ import annotations

import argparse
import sys

import numpy as np

from .integrate import integrate
from .problems import dirichlet_energy, make_fields, weighted_mass


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="integrand_gen")
    parser.add_argument("--cells", type=int, default=48)
    args = parser.parse_args(argv)
    fields = make_fields(args.cells, seed=113)
    lines = []
    for np_dtype in (np.float32, np.float64):
        e = integrate(dirichlet_energy, fields, np_dtype)
        m = integrate(weighted_mass, fields, np_dtype)
        lines.append(f"{np.dtype(np_dtype).name}: energy {e:.5f} mass {m:.5f}")
    print(lines[0])
    print(lines[1])
    return 0


if __name__ == "__main__":
    sys.exit(main())
