"""`import warp` with no alias: the setting must say `warp.config`."""

import argparse

import warp


@warp.kernel
def negate(xs: warp.array(dtype=float)):
    i = warp.tid()
    xs[i] = -xs[i]


if __name__ == "__main__":
    argparse.ArgumentParser(description="negate").parse_args()
