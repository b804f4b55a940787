#!/usr/bin/env bash
# How many interleaved pairs `compare --until-decided` needs for a real ~10% compile-elapsed effect:
# bench/ten_percent/before rebuilds one module after a late fast_math switch; after/ sets it before the first load.
set -euo pipefail
cd "$(dirname "$0")/ten_percent"
py="${PYTHON:-python3}"
warp-compile compare --before-cwd before --after-cwd after --until-decided --max-samples 20 --quiet -- "$py" -m tenapp
