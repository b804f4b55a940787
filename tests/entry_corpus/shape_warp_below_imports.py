"""warp is imported below the standard library and numpy, above the project's own code."""

import argparse
import json
import os

import numpy as np

import warp as wp

SIZES = json.loads(os.environ.get("SHAPE_SIZES", "[4, 8]"))


@wp.kernel
def add(a: wp.array(dtype=float), b: wp.array(dtype=float)):
    i = wp.tid()
    a[i] = a[i] + b[i]


if __name__ == "__main__":
    argparse.ArgumentParser(description="add arrays").parse_args()
    print(np.asarray(SIZES).sum())
