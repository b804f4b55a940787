"""Command-line entry point: `python -m mapper_constants [--frames N]`."""

from __future__ import annotations

import argparse
import sys

import numpy as np

from .mapper import MapperConfig, integrate_frames


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="mapper_constants")
    parser.add_argument("--frames", type=int, default=3)
    args = parser.parse_args(argv)
    rng = np.random.default_rng(83)
    frames = []
    for _ in range(args.frames):
        centers = np.column_stack([rng.uniform(-0.6, 0.6, (3, 2)), rng.uniform(1.2, 2.0, 3), rng.uniform(0.2, 0.4, 3)])
        frames.append(centers)
    fine = MapperConfig(grid=24, voxel=0.1, origin=(-1.2, -1.2, 0.5), trunc=0.2)
    coarse = MapperConfig(grid=16, voxel=0.15, origin=(-1.2, -1.2, 0.5), trunc=0.3)
    results = [integrate_frames(cfg, frames) for cfg in (fine, coarse, fine)]
    print("  ".join(f"tsdf {s:.4f} surface voxels {h}" for s, h in results[:2]))
    print(f"fine again: tsdf {results[2][0]:.4f} surface voxels {results[2][1]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
