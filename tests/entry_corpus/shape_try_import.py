"""warp is optional: imported in a try block."""

import argparse

try:
    import warp as wp
except ImportError:  # pragma: no cover
    wp = None


def main() -> None:
    argparse.ArgumentParser(description="optional warp").parse_args()
    print("warp" if wp is not None else "no warp")


if __name__ == "__main__":
    main()
