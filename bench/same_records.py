"""Issue 41: does a hook change leave every launch record, kernel creation and finding as it was?

    python bench/same_records.py --before REV [--apps fixtures,shapes] [--only NAME ...] [--out FILE]

Runs `warp-compile measure --samples 1` of the tool at git revision REV and of this checkout on every bundled
fixture (evals/fixtures/*/project) and every corpus app (tests/shapes/*), each on a scratch copy, and compares what
`fix` and the rules read from the hook: the launch records (kernel, module, dim, device, argument types, block_dim,
adjoint, tiled, site, count), the total launch count, the kernel creations (key, module, where, function,
arguments, at_import, caller, made_by, signature, outer frames) and, diagnosed by this checkout's rules, each
finding's mechanism, locations, applicability and edits. Clocks are left out: they differ from run to run.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
from overhead import TOOL_LAUNCHER, _tree_of  # noqa: E402

_LAUNCH = ("kernel", "module", "dim", "device", "dtypes", "block_dim", "adjoint", "tiled", "site", "count")


def _apps(kinds: list[str]) -> list[tuple[str, Path, list[str]]]:
    out = []
    if "fixtures" in kinds:
        for case in sorted((ROOT / "evals" / "fixtures").glob("*/case.json")):
            cmd = json.loads(case.read_text())["command"]
            out.append((f"fixture {case.parent.name}", case.parent / "project", cmd[1:]))
    if "shapes" in kinds:
        for app in json.loads((ROOT / "tests" / "shapes" / "MANIFEST.json").read_text()):
            out.append((f"shape {app['name']}", ROOT / "tests" / "shapes" / app["name"], app["command"][1:]))
    return out


def _facts(report: dict, diagnosis: dict) -> dict:
    """What the hook gave `fix` and the rules, without clocks."""
    launches = [{k: la.get(k) for k in _LAUNCH} for la in report["launches"]]
    made = [{k: v for k, v in c.items() if k != "start_ms"} for c in report.get("kernel_creations", [])]
    findings = [{k: f.get(k) for k in ("mechanism", "locations", "applicability", "edits", "owner")}
                for f in diagnosis["findings"]]
    return {"launches": launches, "launch_count": report["launch_count"], "kernel_creations": made,
            "findings": findings, "ruled_out": sorted(str(r.get("mechanism")) for r in diagnosis.get("ruled_out", []))}


def _run(tree: str | None, cwd: Path, args: list[str], work: Path) -> dict:
    head = [sys.executable, "-c", TOOL_LAUNCHER, tree] if tree else [sys.executable, "-m", "warp_compile"]
    rep, diag = work / "r.json", work / "d.json"
    subprocess.run(head + ["measure", "--samples", "1", "--quiet", "--json", str(rep), "--cwd", str(cwd), "--",
                           sys.executable, *args], check=True, capture_output=True, timeout=1200)
    subprocess.run([sys.executable, "-m", "warp_compile", "diagnose", "--report", str(rep), "--source", str(cwd),
                    "--json", str(diag)], check=True, capture_output=True, timeout=600)
    return _facts(json.loads(rep.read_text()), json.loads(diag.read_text()))


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--before", required=True, metavar="REV")
    ap.add_argument("--apps", default="fixtures,shapes")
    ap.add_argument("--only", action="append", help="only the apps whose name holds this text")
    ap.add_argument("--out", metavar="FILE", help="append the result lines to FILE")
    ns = ap.parse_args()
    made = Path(tempfile.mkdtemp(prefix="warp-compile-same-"))
    lines, differ = [], 0
    try:
        before = str(_tree_of(ns.before, made / "before"))
        for name, src, args in _apps(ns.apps.split(",")):
            if ns.only and not any(o in name for o in ns.only):
                continue
            got = {}
            for arm, tree in (("before", before), ("after", None)):
                cwd = made / "app"
                shutil.rmtree(cwd, ignore_errors=True)
                shutil.copytree(src, cwd)
                got[arm] = _run(tree, cwd, args, made)
            diff = [k for k in got["before"] if got["before"][k] != got["after"][k]]
            differ += bool(diff)
            a = got["after"]
            line = (f"{name}: {'SAME' if not diff else 'DIFFERENT: ' + ', '.join(diff)} ({len(a['launches'])}"
                    f" launch records, {a['launch_count']} launches, {len(a['kernel_creations'])}"
                    f" kernel creations, {len(a['findings'])} findings)")
            print(line, flush=True)
            lines.append(line)
            if diff:
                (made.parent / f"same-records-{name.replace(' ', '-')}.json").write_text(json.dumps(got, indent=1))
    finally:
        shutil.rmtree(made, ignore_errors=True)
    summary = (f"{time.strftime('%Y-%m-%d %H:%M')} UTC, before {ns.before}: {len(lines) - differ} of {len(lines)} apps"
               f" the same, {differ} different")
    print(summary)
    if ns.out:
        with open(ns.out, "a", encoding="utf-8") as f:
            f.write("\n".join(["", summary, "", *("- " + ln for ln in lines)]) + "\n")
    return 1 if differ else 0


if __name__ == "__main__":
    raise SystemExit(main())
