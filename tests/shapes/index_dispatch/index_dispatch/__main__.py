"""Command-line entry point: `python -m index_dispatch [--envs N]`."""

from __future__ import annotations

import argparse
import sys

import numpy as np

from .scene import Scene


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="index_dispatch")
    parser.add_argument("--envs", type=int, default=512)
    args = parser.parse_args(argv)
    scene = Scene(args.envs, seed=23)
    scene.randomize_masses(np.int32)
    scene.randomize_masses(np.int64)
    scene.add_articulation(num_joints=12)
    scene.reset_joints(np.int32, np.int64)
    scene.reset_joints(np.int64, np.int32)
    mass = scene.body_mass.numpy().astype(np.float64)
    joints = scene.joint_pos.numpy().astype(np.float64)
    print(f"body mass sum {mass.sum():.4f} nonzero {int((mass > 0).sum())}")
    print(f"joint position sum {joints.sum():.4f} abs {np.abs(joints).sum():.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
