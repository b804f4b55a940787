"""Command-line entry point: `python -m precision_family [--size N]`."""

from __future__ import annotations

import argparse
import sys

import numpy as np

from . import mesh
from .evaluate import total_energy


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="precision_family")
    parser.add_argument("--size", type=int, default=24)
    args = parser.parse_args(argv)
    pts, edges, tris = mesh.grid_mesh(args.size, seed=5)
    moved = mesh.deformed(pts, 0.15).astype(np.float64)
    e32 = total_energy(pts, moved, edges, tris, 40.0, np.float32)
    lifted = np.concatenate([moved, 0.1 * np.sin(4.0 * moved[:, :1])], axis=1)
    e64 = total_energy(np.concatenate([pts, np.zeros((pts.shape[0], 1))], 1), lifted, edges, tris, 40.0, np.float64)
    print(f"float32 plane energy {e32:.4f}")
    print(f"float64 lifted energy {e64:.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
