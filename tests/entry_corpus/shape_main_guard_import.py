"""A script that imports warp only inside its main guard."""

import argparse
import sys


def parse(argv: list[str]) -> argparse.Namespace:
    return argparse.ArgumentParser(description="guarded").parse_args(argv)


if __name__ == "__main__":
    args = parse(sys.argv[1:])
    import warp as wp

    print(wp.__version__)
