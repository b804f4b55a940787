"""warp only under TYPE_CHECKING at the top; the real import is in a function."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import warp as wp


def run() -> wp.array:
    import warp as wp

    return wp.zeros(4, dtype=float, device="cpu")


if __name__ == "__main__":
    argparse.ArgumentParser(description="typed").parse_args()
