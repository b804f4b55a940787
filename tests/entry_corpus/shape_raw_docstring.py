r"""A raw docstring with backslashes: C:\temp\new and \d+ patterns."""
import argparse

import warp as wp


@wp.kernel
def inc(xs: wp.array(dtype=int)):
    xs[wp.tid()] += 1


if __name__ == "__main__":
    argparse.ArgumentParser(description="raw").parse_args()
