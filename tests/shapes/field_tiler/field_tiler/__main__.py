"""Command-line entry point: `python -m field_tiler [--bodies N] [--worlds N]`."""

from __future__ import annotations

import argparse
import sys

import numpy as np
import warp as wp

from .expand import expand_fields
from .model import make_model, scale_masses


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="field_tiler")
    parser.add_argument("--bodies", type=int, default=300)
    parser.add_argument("--worlds", type=int, default=4)
    args = parser.parse_args(argv)
    model = make_model(args.bodies, seed=101)
    expand_fields(model, args.worlds, {"body_mass", "body_com", "body_quat", "body_inertia", "body_group"})
    wp.launch(scale_masses, dim=model.body_mass.shape[0], inputs=[model.body_mass, args.bodies, 0.1], device="cpu")
    sums = {
        name: float(getattr(model, name).numpy().astype(np.float64).sum())
        for name in ("body_mass", "body_com", "body_quat")
    }
    inertia = float(np.trace(model.body_inertia.numpy().astype(np.float64), axis1=1, axis2=2).sum())
    groups = int(model.body_group.numpy().sum())
    rows = model.body_mass.shape[0]
    print(f"worlds {args.worlds} rows {rows} mass {sums['body_mass']:.4f} com {sums['body_com']:.4f}")
    print(f"quat {sums['body_quat']:.4f} inertia trace {inertia:.4f} groups {groups}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
