#!/usr/bin/env bash
# How many interleaved pairs `compare --until-decided` needs for a real compile-elapsed effect, and what it says
# when nothing changed (the same tree on both arms). bench/ten_percent/before rebuilds one module after a late
# fast_math switch; after/ sets it before the first load (about 7-10% of compile elapsed, by machine).
# The output is recorded in bench/UNTIL_DECIDED.txt.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here/ten_percent"
py="${PYTHON:-python3}"
wc="${WARP_COMPILE:-warp-compile}"
{
  echo "# compare --until-decided ($(date +%F), $(uname -m), $(nproc) cpu, $("$py" -c 'import warp; print("warp-lang", warp.__version__)' 2>/dev/null))"
  for arms in "before after" "before before"; do
    set -- $arms
    echo
    echo "## --before-cwd $1 --after-cwd $2"
    "$wc" compare --before-cwd "$1" --after-cwd "$2" --until-decided --max-samples 12 --quiet -- "$py" -m tenapp \
      | grep -E "^[A-Z]+:|^Interleaved|^  stopped|^  compile elapsed:" || true
  done
} | tee "$here/UNTIL_DECIDED.txt"
