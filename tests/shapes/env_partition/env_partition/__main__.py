"""Command-line entry point: `python -m env_partition [--cells N]`."""

from __future__ import annotations

import argparse
import sys

from .partition import run


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="env_partition")
    parser.add_argument("--cells", type=int, default=24, help="grid cells per side")
    args = parser.parse_args(argv)
    for topo, whole, sub in run(cells=args.cells, seed=41):
        print(
            f"{topo}: whole nodes {whole[0]} (index mean {whole[1]:.5f})  sub nodes {sub[0]} (index mean {sub[1]:.5f})"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
