"""Command-line entry point: `python -m writer_modules [--spheres N]`."""

from __future__ import annotations

import argparse
import sys

from .pipeline import run


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="writer_modules")
    parser.add_argument("--spheres", type=int, default=768)
    args = parser.parse_args(argv)
    for writer, exact, speculative, measure in run(spheres=args.spheres, seed=31):
        print(f"{writer}: contacts {exact}  speculative {speculative}  measure {measure:.5f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
