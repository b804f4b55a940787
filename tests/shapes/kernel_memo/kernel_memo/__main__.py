"""Command-line entry point: `python -m kernel_memo [--steps N] [--worlds N]`."""

from __future__ import annotations

import argparse
import sys

from .solver import simulate


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="kernel_memo")
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--worlds", type=int, default=256)
    args = parser.parse_args(argv)
    state = simulate(worlds=args.worlds, steps=args.steps, seed=43)
    print(f"mean |qpos| {state['qpos']:.5f}  mean |qvel| {state['qvel']:.5f}")
    print(f"contact pushes {state['pushes']}  warm steps {state['warm_steps']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
