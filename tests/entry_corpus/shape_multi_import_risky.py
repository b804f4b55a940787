"""One import statement for a third-party package and warp: warp must move out of it, above the other."""

import argparse
import pydantic, warp as wp  # noqa: E401


@wp.kernel
def one(xs: wp.array(dtype=float)):
    xs[wp.tid()] = 1.0


if __name__ == "__main__":
    argparse.ArgumentParser(description="one").parse_args()
    print(pydantic.VERSION is not None)
