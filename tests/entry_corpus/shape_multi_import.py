"""One import statement for numpy and warp."""

import argparse
import numpy as np, warp as wp  # noqa: E401


@wp.kernel
def zero(xs: wp.array(dtype=float)):
    xs[wp.tid()] = 0.0


if __name__ == "__main__":
    argparse.ArgumentParser(description="zero").parse_args()
    print(np.zeros(2).sum())
