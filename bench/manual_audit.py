"""Audit (issue 39): every finding left `manual` while a candidate of the plan was not tried is a defect.

    python bench/manual_audit.py [--only NAME ...] [--out FILE.md] [--json FILE] [--keep DIR] [--reread DIR]

Diagnoses each corpus shape (tests/shapes/MANIFEST.json) and each fixture app of tests/apps/ that has an entry
point (a package with `__main__.py`, or a top-level script with a main guard), as a user would: the tool's own CLI,
`warp-compile diagnose --json --rebuild-limit 0` (the CS-10/CS-12 rebuild pricing is not what is audited) in a copy
of the app. Every `manual` finding is then read:

- a placement that failed ("create at import" in its text) must name each candidate realise.py has for it:
  memoize, hoist (with the captured values written in, where it captures) and from the run's record. A candidate
  it does not name was not tried: a DEFECT row.
- a manual finding of another view of the module plan (CS-1, CS-4, CS-6, CS-9) whose rule placed kernels without
  realise.py must name the same candidates in its own words (OTHER_WORDS); one it does not name is a DEFECT too.
- any other manual finding has no placement candidate of the plan (an option moved by hand, a construct of a
  dependency): listed with its reason, not counted as a defect.

`--keep DIR` saves each diagnosis; `--reread DIR` audits saved ones without running anything.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHAPES = ROOT / "tests" / "shapes"
APPS = ROOT / "tests" / "apps"
PLACEMENT = "create at import"
# realise.py's candidates, as a finding's text names them when they did not hold
CANDIDATES = {"memoize": "memoize:", "hoist": "hoist:", "from the run's record": "from the run's record:"}
WRITTEN_IN = "with its captured values written in:"
# the module plan's views: a manual finding of theirs is a placement that failed
PLACING = {"CS-1", "CS-4", "CS-6", "CS-9"}
OPTIONS_APART = "set their own options"
# how the rules that place kernels without realise.py name a candidate they tried (or why it cannot apply)
OTHER_WORDS = {
    "memoize": ("memoize:", "versions at import:", "a cache can wrap", "not by a module-level factory"),
    "hoist": ("hoist:", "cannot move to module scope", "captured when it is created", "definition was not found",
              "definition of", "is not a statement of a function"),
    "from the run's record": ("from the run's record:", "the versions the run made", "the run recorded"),
}
_MAIN_GUARD = re.compile(r"^if __name__ == ['\"]__main__['\"]", re.M)


def targets(only: list[str] | None) -> list[dict]:
    """(name, folder, command) of every corpus shape and fixture app with an entry point; others with why not."""
    out = [{"name": a["name"], "kind": "shape", "folder": str(SHAPES / a["name"]), "argv": ["-m", a["name"]]}
           for a in json.loads((SHAPES / "MANIFEST.json").read_text())]
    for app in sorted(p for p in APPS.iterdir() if p.is_dir()):
        pkgs = sorted(p.parent.name for p in app.glob("*/__main__.py"))
        scripts = sorted(p.name for p in app.glob("*.py") if _MAIN_GUARD.search(p.read_text(errors="replace")))
        entry = ["-m", pkgs[0]] if len(pkgs) == 1 else [scripts[0]] if len(scripts) == 1 and not pkgs else None
        out.append({"name": app.name, "kind": "fixture", "folder": str(app), "argv": entry,
                    "why": "" if entry else f"no single entry point (packages {pkgs}, scripts {scripts})"})
    return [t for t in out if not only or t["name"] in only]


def diagnose(tool: str, py: str, t: dict, timeout: float = 900) -> dict:
    """The diagnosis JSON of one app, run in a scratch copy (nothing under tests/ is written)."""
    with tempfile.TemporaryDirectory(prefix="audit-") as tmp:
        copy = Path(tmp) / t["name"]
        shutil.copytree(t["folder"], copy, ignore=shutil.ignore_patterns("__pycache__"))
        out = Path(tmp) / "diagnosis.json"
        env = dict(os.environ)
        env.pop("PYTHONPATH", None)
        done = subprocess.run([tool, "diagnose", "--quiet", "--rebuild-limit", "0", "--json", str(out), "--", py,
                               *t["argv"]], cwd=copy, env=env, capture_output=True, text=True, timeout=timeout)
        if not out.is_file():
            return {"error": f"exit {done.returncode}: {done.stderr.strip().splitlines()[-1:] or ''}"}
        return json.loads(out.read_text())


def judge(finding: dict) -> dict:
    """One manual finding: a placement that failed with the candidates it named and those it did not, or another
    reason."""
    text = " ".join(str(finding.get(k) or "") for k in ("review", "fix"))
    row = {"id": finding.get("id") or finding.get("mechanism"), "title": finding.get("title", ""),
           "reason": (finding.get("review") or finding.get("fix") or "")[:700]}
    if PLACEMENT not in text:
        if OPTIONS_APART in text:  # the plan's own rule: as few modules as the kernels' compiled options allow
            row["kind"] = "options keep them apart"
            return row
        if finding.get("mechanism") not in PLACING:
            row["kind"] = "no placement step"
            return row
        # a view of the module plan that failed outside realise.py (CS-1's late kernels, CS-4's merge, CS-6's
        # instances): the same candidates, named in that rule's words
        named = [c for c, marks in OTHER_WORDS.items() if any(m in text for m in marks)]
        missing = [c for c in CANDIDATES if c not in named]
        row.update(kind="DEFECT" if missing else "every candidate tried", named=named, missing=missing,
                   path="outside realise.py")
        return row
    named = [c for c, mark in CANDIDATES.items() if mark in text]
    missing = [c for c in CANDIDATES if c not in named]
    captures = "captured when it is created" in text
    if captures and WRITTEN_IN not in text:
        missing.append("hoist with the captured values written in")
    row.update(kind="DEFECT" if missing else "every candidate tried", named=named, missing=missing)
    return row


def audit(diag: dict) -> list[dict]:
    return [judge(f) for f in diag.get("findings", []) if f.get("applicability") == "manual"]


def render(rows: list[dict], started: str, took: float, commit: str) -> str:
    defects = [(r, f) for r in rows for f in r.get("manual", []) if f["kind"] == "DEFECT"]
    manual = sum(len(r.get("manual", [])) for r in rows)
    out = ["# Issue 39: manual findings while a candidate of the plan was not tried", "",
           f"`python bench/manual_audit.py` ({started}, commit {commit}, {took:.0f} min, load at start "
           f"{rows[0].get('load', '?') if rows else '?'}). Each app diagnosed in a copy with `warp-compile diagnose "
           "--rebuild-limit 0`; every `manual` finding read. A placement that failed must name each of realise.py's "
           "candidates (memoize, hoist, from the run's record; with the captured values written in where it "
           "captures).", "",
           f"**{sum('manual' in r for r in rows)} apps diagnosed ({len(rows)} listed), {manual} manual finding(s), "
           f"{len(defects)} defect(s).**", "",
           "| app | kind | finding | verdict | candidates named | not tried |", "| --- | --- | --- | --- | --- | --- |"]
    for r in rows:
        if r.get("error") or r.get("why"):
            out.append(f"| {r['name']} | {r['kind']} | - | not run: {r.get('error') or r.get('why')} | | |")
            continue
        if not r.get("manual"):
            out.append(f"| {r['name']} | {r['kind']} | - | no manual finding | | |")
        for f in r.get("manual", []):
            out.append(f"| {r['name']} | {r['kind']} | {f['id']} | {f['kind']} | {', '.join(f.get('named', []))} | "
                       f"{', '.join(f.get('missing', []))} |")
    out += ["", "## Each manual finding's reason", ""]
    for r in rows:
        for f in r.get("manual", []):
            out.append(f"- **{r['name']} {f['id']}** ({f['kind']}): {f['reason']}")
    return "\n".join(out) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", nargs="*")
    ap.add_argument("--out", default=str(ROOT / "bench" / "MANUAL_AUDIT.md"))
    ap.add_argument("--json", default=str(ROOT / "bench" / "manual-audit.json"))
    ap.add_argument("--keep", help="save each diagnosis JSON here")
    ap.add_argument("--reread", help="audit the diagnoses saved here by --keep (no Warp run)")
    ns = ap.parse_args(argv)
    py = sys.executable
    tool = str(Path(py).parent / "warp-compile")
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                            text=True).stdout.strip() or "?"
    started = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    t0 = time.perf_counter()
    rows = []
    for t in targets(ns.only):
        row = {k: t[k] for k in ("name", "kind")}
        row["load"] = os.getloadavg()[0]
        if not t["argv"]:
            row["why"] = t["why"]
            rows.append(row)
            continue
        saved = Path(ns.reread) / f"{t['name']}.json" if ns.reread else None
        if saved is not None:
            diag = json.loads(saved.read_text()) if saved.is_file() else {"error": "no saved diagnosis"}
        else:
            print(f"audit: {t['name']} ...", file=sys.stderr, flush=True)
            diag = diagnose(tool, py, t)
            if ns.keep:
                Path(ns.keep).mkdir(parents=True, exist_ok=True)
                (Path(ns.keep) / f"{t['name']}.json").write_text(json.dumps(diag))
        if diag.get("error"):
            row["error"] = diag["error"]
        else:
            row["manual"] = audit(diag)
        rows.append(row)
    Path(ns.json).write_text(json.dumps(rows, indent=1))
    Path(ns.out).write_text(render(rows, started, (time.perf_counter() - t0) / 60, commit))
    print(Path(ns.out).read_text())
    return 0


if __name__ == "__main__":
    sys.exit(main())
