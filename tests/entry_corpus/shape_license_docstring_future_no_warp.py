# Copyright (c) 2026 The warp-compile authors
# SPDX-License-Identifier: Apache-2.0
#
# The entry point imports a package that builds kernels, and never imports warp itself.

"""Run the pipeline."""

from __future__ import annotations

import argparse
import json


def main() -> None:
    parser = argparse.ArgumentParser(description="run the pipeline")
    parser.add_argument("--config", default="{}")
    args = parser.parse_args()
    print(json.loads(args.config))


if __name__ == "__main__":
    main()
