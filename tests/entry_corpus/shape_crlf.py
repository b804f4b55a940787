# Copyright (c) 2026 The warp-compile authors
# (the test stores this file with CRLF line endings before editing it)

"""A file written on Windows."""

from __future__ import annotations

import argparse

import warp as wp


@wp.kernel
def fill(xs: wp.array(dtype=float)):
    xs[wp.tid()] = 1.0


if __name__ == "__main__":
    argparse.ArgumentParser(description="crlf").parse_args()
