#!/usr/bin/env bash
# The release matrix: tests/test_release_matrix.py (marker `release`) under every supported minor warp-lang release,
# one interpreter each, then the table of what each run measured (written to bench/RELEASES.md with --write).
# Usage: scripts/release-matrix.sh [--write] [VERSION...]
#   default versions: every minor from 1.10 to 1.19 (below); venvs come from scripts/venv-warp.sh (WARP_VENVS=DIR
#   puts them in DIR/warp-X.Y.Z, reused when present). Runs one release at a time (each is a real CPU compile and an
#   NVRTC replay: about 1-3 minutes per release on a quiet 2-core machine).
set -uo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
cd "$here"
write=0
if [ "${1:-}" = "--write" ]; then write=1; shift; fi
versions=("$@")
if [ ${#versions[@]} -eq 0 ]; then
  versions=(1.10.1 1.11.1 1.12.1 1.13.0 1.14.0 1.15.0 1.16.0 1.17.0 1.18.0 1.19.0)
fi
if [ ! -x .venv/bin/pytest ]; then
  echo "release-matrix: no .venv with the test extras (python3 -m venv .venv && .venv/bin/pip install -e '.[test]')" >&2
  exit 2
fi
out="$(mktemp -d "${TMPDIR:-/tmp}/warp-release-matrix.XXXXXX")"
trap 'rm -rf "$out"' EXIT
status=0
for v in "${versions[@]}"; do
  if ! py="$(scripts/venv-warp.sh "$v" | tail -n1)"; then
    echo "release-matrix: $v: no interpreter" | tee -a "$out/results.txt"
    status=1
    continue
  fi
  start=$(date +%s)
  if WARP_RELEASE_PYTHON="$py" WARP_RELEASE_RECORD="$out/runs" .venv/bin/pytest -q --slow -m release \
      tests/test_release_matrix.py -p no:cacheprovider > "$out/$v.log" 2>&1; then
    result=pass
  else
    result=FAIL
    status=1
    tail -n 30 "$out/$v.log" >&2
  fi
  echo "$v $result $(( $(date +%s) - start ))" >> "$out/results.txt"
  echo "release-matrix: $v $result ($(( $(date +%s) - start )) s)" >&2
done
table="$(.venv/bin/python - "$out" <<'PY'
import json, os, sys
from pathlib import Path

out = Path(sys.argv[1])
rows = {}
for line in (out / "results.txt").read_text().splitlines():
    parts = line.split()
    if len(parts) == 3:
        rows[parts[0]] = {"tests": parts[1], "s": parts[2]}
print("| release | toolkit | structured builds (late option, late generic) | CUDA replay: status, output | "
      "NVRTC header: with -> without (wall; thread CPU) | CS-6 named | replay cost | tests (wall) |")
print("| --- | --- | --- | --- | --- | --- | --- | --- |")
for v, row in rows.items():
    rp, dp = out / "runs" / f"{v}.report.json", out / "runs" / f"{v}.diagnosis.json"
    if not rp.exists():
        print(f"| {v} | - | - | - | - | - | - | {row['tests']} ({row['s']} s) |")
        continue
    r, d = json.loads(rp.read_text()), json.loads(dp.read_text())
    builds = [b for b in r["builds"] if b["module"] == "__main__"]
    structured = f"{sum(b['status'] == 'compiled' for b in builds)} compiled, {len({b['hash'] for b in builds})} hashes"
    replay = r.get("cuda_replay") or {}
    cb = r.get("cuda_builds") or []
    status = ", ".join(f"{b['status']}, {b.get('output') or '-'}" for b in cb) or "none"
    hdr = []
    for b in cb:
        h, n = b.get("nvrtc_header") or {}, b.get("no_header")
        if not h.get("dir"):
            hdr.append("no header dir")
        elif not h.get("files"):
            hdr.append("dir given, none written")
        elif n:
            cpu = (f"; {b['cpu_ms'] / 1000:.2f} -> {n['cpu_ms'] / 1000:.2f} s"
                   if b.get("cpu_ms") is not None and n.get("cpu_ms") is not None else "")
            hdr.append(f"{h['bytes'] / 1e6:.0f} MB: {b['ms'] / 1000:.2f} -> {n['ms'] / 1000:.2f} s{cpu}")
        else:
            hdr.append(f"{h['bytes'] / 1e6:.0f} MB, not re-measured")
    cs6 = "yes" if any(f["mechanism"] == "CS-6" for f in d["findings"]) else "no"
    print(f"| {v} | {replay.get('toolkit') or '-'} | {structured} | {status} | {'; '.join(hdr) or '-'} | {cs6} | "
          f"{replay.get('ms', 0) / 1000:.1f} s | {row['tests']} ({row['s']} s) |")
PY
)"
echo "$table"
if [ $write -eq 1 ]; then
  load="$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown)"
  .venv/bin/python - "$table" "$load" <<'PY'
import datetime, os, platform, sys
from pathlib import Path

table, load = sys.argv[1], sys.argv[2]
path = Path("bench/RELEASES.md")
head = path.read_text().split("<!-- matrix -->")[0] if path.exists() else "# Release matrix\n\n"
stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
path.write_text(
    head + "<!-- matrix -->\n"
    f"Last run: {stamp}, `scripts/release-matrix.sh --write`, {platform.machine()} {os.cpu_count()} cores, no GPU, "
    f"load average at the end {load}.\n\n{table}\n"
)
print("wrote", path)
PY
fi
exit $status
