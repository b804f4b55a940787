#!/usr/bin/env python3
# -*- coding: utf-8 -*-
"""Shebang, encoding line, then the docstring — résumé of a run."""
import sys

import numpy as np
import warp as wp

TOTAL = np.zeros(3)


def main(argv: list[str]) -> int:
    if "--help" in argv:
        print("usage: shape_shebang_encoding.py [--help]")
        return 0
    print(wp.__version__)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
