"""The first import takes names from warp; no `import warp` at all."""

from warp import array, constant, kernel, zeros

import argparse

N = constant(4)


@kernel
def ramp(xs: array(dtype=float)):
    xs[0] = float(N)


if __name__ == "__main__":
    argparse.ArgumentParser(description="ramp").parse_args()
    print(zeros(1, dtype=float, device="cpu").shape)
