# Copyright (c) 2026 The warp-compile authors, directly above the first import
import argparse
import os


def main() -> None:
    argparse.ArgumentParser(description=os.path.basename(__file__)).parse_args()


if __name__ == "__main__":
    main()
