"""Command-line entry point: `python -m reset_worlds [--worlds N]`."""

from __future__ import annotations

import argparse
import sys

import numpy as np
import warp as wp

from . import io, model, physics


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="reset_worlds")
    parser.add_argument("--worlds", type=int, default=256)
    parser.add_argument("--episodes", type=int, default=6)
    args = parser.parse_args(argv)
    m, d = model.make(args.worlds, nbody=8, seed=13)
    rng = np.random.default_rng(29)
    for episode in range(args.episodes):
        if episode % 2 == 0:
            io.reset(m, d)
        else:
            done = rng.random(args.worlds) < 0.5
            io.reset(m, d, mask=wp.array(done, dtype=bool, device="cpu"))
        for _ in range(20 + 5 * episode):
            physics.step(m, d, 0.01)
    q = d.qpos.numpy().astype(np.float64)
    t = d.time.numpy().astype(np.float64)
    print(f"mean |q| {np.abs(q).mean():.5f}  q[0,:3] {q[0, 0]:.5f} {q[0, 1]:.5f} {q[0, 2]:.5f}")
    print(f"mean time {t.mean():.4f}  steps total {int(d.nstep.numpy().sum())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
