# Copyright (c) 2026 The warp-compile authors
# SPDX-License-Identifier: Apache-2.0

"""An entry point in the usual shape of a licensed project: license comment, docstring, __future__ import."""

from __future__ import annotations

import argparse

import warp as wp


@wp.kernel
def scale(xs: wp.array(dtype=float), s: float):
    i = wp.tid()
    xs[i] = xs[i] * s


def main() -> None:
    argparse.ArgumentParser(description="scale an array").parse_args()


if __name__ == "__main__":
    main()
