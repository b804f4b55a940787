"""A file with a form feed between its sections."""

import argparse

import warp as wp


@wp.kernel
def k(xs: wp.array(dtype=float)):
    xs[wp.tid()] = 3.0


if __name__ == "__main__":
    argparse.ArgumentParser(description="ff").parse_args()
