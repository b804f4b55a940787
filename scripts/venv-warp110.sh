#!/usr/bin/env bash
# Make a second interpreter with the oldest supported warp-lang (1.10.1), for the hook's version tests.
# Usage: scripts/venv-warp110.sh [VENV_DIR]   (default: .venv-warp110 in the project root)
# A thin wrapper over scripts/venv-warp.sh, kept because CI and the README call it.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
"$here/scripts/venv-warp.sh" 1.10.1 "${1:-${WARP110_VENV:-$here/.venv-warp110}}" >/dev/null
