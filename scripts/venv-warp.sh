#!/usr/bin/env bash
# Make an interpreter with one warp-lang release (and numpy), for the hook's release tests and the release matrix.
# Usage: scripts/venv-warp.sh VERSION [VENV_DIR]
#   VENV_DIR defaults to $WARP_VENVS/warp-VERSION when WARP_VENVS is set, else .venv-warp-VERSION in the project
#   root (gitignored). An existing venv that already has that release is reused as it is (no network).
#   Prints the interpreter's path on the last line of stdout.
set -euo pipefail
if [ $# -lt 1 ] || [ -z "$1" ]; then
  echo "usage: scripts/venv-warp.sh VERSION [VENV_DIR]" >&2
  exit 2
fi
version="$1"
case "$version" in
  *[!0-9.]*|.*|*.) echo "venv-warp: not a release number: $version" >&2; exit 2 ;;
esac
here="$(cd "$(dirname "$0")/.." && pwd)"
if [ -n "${2:-}" ]; then
  venv="$2"
elif [ -n "${WARP_VENVS:-}" ]; then
  venv="$WARP_VENVS/warp-$version"
else
  venv="$here/.venv-warp-$version"
fi
py="${PYTHON:-python3}"
have() {
  [ -x "$venv/bin/python" ] && [ "$("$venv/bin/python" -c 'import warp; print(warp.__version__)' 2>/dev/null | tail -n1)" = "$version" ]
}
if ! have; then
  if [ ! -x "$venv/bin/python" ]; then
    "$py" -m venv "$venv"
  fi
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "warp-lang==$version" numpy
fi
if ! have; then
  echo "venv-warp: $venv/bin/python does not import warp-lang $version" >&2
  exit 1
fi
echo "warp $version ready in $venv" >&2
echo "$venv/bin/python"
