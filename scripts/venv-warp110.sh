#!/usr/bin/env bash
# Make a second interpreter with the oldest supported warp-lang (1.10.1), for the hook's version tests.
# Usage: scripts/venv-warp110.sh [VENV_DIR]   (default: .venv-warp110 in the project root)
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
venv="${1:-${WARP110_VENV:-$here/.venv-warp110}}"
py="${PYTHON:-python3}"
if [ ! -x "$venv/bin/python" ]; then
  "$py" -m venv "$venv"
fi
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check "warp-lang==1.10.1" numpy
"$venv/bin/python" -c "import warp; print('warp', warp.__version__, 'ready in', '$venv')"
