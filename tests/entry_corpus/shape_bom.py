"""A UTF-8 file that starts with a byte order mark."""

import argparse

import warp as wp

if __name__ == "__main__":
    argparse.ArgumentParser(description=wp.__name__).parse_args()
