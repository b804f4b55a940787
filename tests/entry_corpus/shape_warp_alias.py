"""warp under another name."""

import argparse

import warp as warp_lib


@warp_lib.kernel
def twice(xs: warp_lib.array(dtype=float)):
    i = warp_lib.tid()
    xs[i] = 2.0 * xs[i]


if __name__ == "__main__":
    argparse.ArgumentParser(description="twice").parse_args()
