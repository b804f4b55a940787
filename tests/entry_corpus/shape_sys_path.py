"""A path tweak runs before warp is imported."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import warp as wp  # noqa: E402


@wp.kernel
def half(xs: wp.array(dtype=float)):
    xs[wp.tid()] = 0.5 * xs[wp.tid()]


if __name__ == "__main__":
    import argparse

    argparse.ArgumentParser(description="path").parse_args()
