#!/usr/bin/env bash
# The device path against the replay: on a machine with a CUDA device, run every CUDA fixture (evals/fixtures/cuda_*)
# through `measure` + `diagnose` on the device, and through the `--cuda-arch` replay with the device hidden
# (CUDA_VISIBLE_DEVICES= : what CI and a CPU-only machine see), then print side by side what each found: the CUDA
# builds (module, block_dim, ms), the block_dims, and CS-5 / CS-7 / CS-13 with their figures. One sample each side
# (about 2-4 minutes for the four fixtures). Without a CUDA device it says so and exits 0.
# Usage: bench/device_check.sh [PYTHON]   (PYTHON: the interpreter with warp-lang, default .venv/bin/python)
set -uo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
py="${1:-$here/.venv/bin/python}"
tool="$(dirname "$py")/warp-compile"
[ -x "$tool" ] || tool="$here/.venv/bin/warp-compile"
if [ ! -x "$py" ] || [ ! -x "$tool" ]; then
  echo "device_check: no interpreter at $py (make .venv first, see README)" >&2
  exit 2
fi
arch="$("$py" -c '
import warp as wp
wp.config.quiet = True
wp.init()
print(wp.get_cuda_device().arch if wp.is_cuda_available() else "")
' 2>/dev/null | tail -n1)"
if [ -z "$arch" ]; then
  echo "device_check: no CUDA device here (warp sees none): nothing to compare; the replay alone is tested by CI."
  exit 0
fi
out="$(mktemp -d "${TMPDIR:-/tmp}/warp-device-check.XXXXXX")"
trap 'rm -rf "$out"' EXIT
echo "device_check: CUDA device sm_$arch; replay with --cuda-arch $arch and the device hidden"
for case in "$here"/evals/fixtures/cuda_*/; do
  name="$(basename "$case")"
  cmd="$("$py" -c 'import json,sys; print(" ".join(json.load(open(sys.argv[1]))["command"][1:]))' "$case/case.json")"
  # shellcheck disable=SC2086
  "$tool" measure --quiet --samples 1 --timeout 300 --cwd "$case/project" --json "$out/$name.device.json" \
    -- "$py" $cmd > /dev/null 2>"$out/$name.device.err" || echo "device_check: $name: device run failed" >&2
  # shellcheck disable=SC2086
  CUDA_VISIBLE_DEVICES= "$tool" measure --quiet --samples 1 --timeout 300 --cwd "$case/project" --cuda-arch "$arch" \
    --json "$out/$name.replay.json" -- "$py" $cmd > /dev/null 2>"$out/$name.replay.err" \
    || echo "device_check: $name: replay run failed" >&2
done
"$py" - "$out" "$here/evals/fixtures" <<'PY'
import sys
from pathlib import Path

from warp_compile.probe.diagnose import diagnose
from warp_compile.probe.models import Report
from warp_compile.probe.rules import cuda_replay
from warp_compile.probe.scan import scan

out, fixtures = Path(sys.argv[1]), Path(sys.argv[2])


def judged(report, root):
    d = diagnose(report, scan(root), root=root)
    res = {}
    for m in ("CS-5", "CS-7", "CS-13"):
        f = next((f for f in d.findings if f.mechanism == m), None)
        r = next((r for r in d.ruled_out if r.mechanism == m), None)
        n = next((n for n in d.not_reached if n.mechanism == m), None)
        if f is not None:
            ms = f.estimated_saving_ms
            res[m] = f"finding ({ms:.0f} ms)" if ms is not None else "finding"
        else:
            res[m] = "ruled out" if r is not None else "not reached" if n is not None else "-"
    return res


def side(path, root):
    if not path.exists():
        return None
    report = Report.model_validate_json(path.read_text())
    builds = cuda_replay.replay_builds(report)
    return {
        "builds": ", ".join(f"{b.module}@{b.block_dim} {b.ms:.0f} ms" for b in builds) or "none",
        "block_dims": ", ".join(str(x) for x in sorted({b.block_dim for b in builds if b.block_dim})) or "-",
        **judged(report, root),
    }


for case in sorted(fixtures.glob("cuda_*")):
    dev = side(out / f"{case.name}.device.json", case / "project")
    rep = side(out / f"{case.name}.replay.json", case / "project")
    print(f"\n== {case.name}")
    print(f"   {'':10} | {'device':50} | replay (no device)")
    for key in ("builds", "block_dims", "CS-5", "CS-7", "CS-13"):
        a = dev[key] if dev else "run failed"
        b = rep[key] if rep else "run failed"
        mark = "" if key == "builds" or a.split(" (")[0] == b.split(" (")[0] else "   <- differs"
        print(f"   {key:10} | {a:50} | {b}{mark}")
PY
