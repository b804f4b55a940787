"""Command-line entry point: `python -m ring_merge [--points N] [--ranks N]`."""

from __future__ import annotations

import argparse
import sys

import numpy as np

from .ring import ring_query


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="ring_merge")
    parser.add_argument("--points", type=int, default=2048)
    parser.add_argument("--queries", type=int, default=256)
    parser.add_argument("--ranks", type=int, default=4)
    args = parser.parse_args(argv)
    rng = np.random.default_rng(41)
    points = rng.uniform(0.0, 1.0, (args.points, 3))
    queries = rng.uniform(0.0, 1.0, (args.queries, 3))
    index, count = ring_query(points, queries, args.ranks, radius=0.12)
    valid = np.arange(index.shape[1])[None, :] < count[:, None]
    checksum = int((index * valid).sum() % 1000003)
    print(f"neighbors total {int(count.sum())} max {int(count.max())} empty {int((count == 0).sum())}")
    print(f"index checksum {checksum}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
