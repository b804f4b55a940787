"""Command line: ``python -m keeper [--rebuild]``.

--rebuild   must actually clear the kernel cache before running (used after a toolchain upgrade)
"""

import argparse

from . import runtime

runtime.prepare()

from . import maintenance  # noqa: E402
from .kernels import smooth  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(prog="keeper")
    parser.add_argument("--rebuild", action="store_true", help="clear the kernel cache before running")
    args = parser.parse_args()
    if args.rebuild:
        maintenance.clear_caches()
    total = smooth(n=2048, passes=3)
    print(f"smoothed total {total:.4f}")


if __name__ == "__main__":
    main()
