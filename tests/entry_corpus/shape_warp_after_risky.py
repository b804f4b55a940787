"""warp is imported after a third-party package that could (for all the tool knows) build kernels."""

import argparse

import pydantic

import warp as wp


class Settings(pydantic.BaseModel):
    n: int = 4


@wp.kernel
def square(xs: wp.array(dtype=float)):
    i = wp.tid()
    xs[i] = xs[i] * xs[i]


if __name__ == "__main__":
    argparse.ArgumentParser(description="square").parse_args()
    print(Settings().n)
