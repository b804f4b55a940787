"""How the scan and the rules grow with a project: files, kernels, tapes.

A maintainer runs warp-compile inside their own checkout, so the project is the whole engine. This benchmark
copies a real library's source into a project folder, runs one of its programs from there (so the library is the
project's own code), then times `diagnose` on that measurement for growing slices of the tree, each in a fresh
process: scan seconds, rules seconds, peak memory, against the files, kernels and tapes the scan found. A second
series grows only the number of `wp.Tape` sites behind command-line switches, the shape that made the rules walk
every file per tape. Writes a Markdown table (default bench/SCALE.md).

    python bench/scale.py [--tree DIR --module NAME -- CMD...] [--out bench/SCALE.md]

Default tree: the installed warp-lang's own Python sources (its native library linked, not copied), program:
`python -m warp.examples.fem.example_diffusion --headless --device cpu`. A Newton checkout works the same way:
`--tree .../site-packages/newton --module newton -- python -m newton.examples pyramid --viewer null --device cpu`.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
PY = sys.executable
FRACTIONS = (0.1, 0.25, 0.5, 1.0)
TAPES = (10, 100, 1000)


def _one(source: Path, report: Path) -> dict:
    """In this process: scan `source`, diagnose `report` against it; the timings and what the scan saw."""
    import resource

    from warp_compile.probe.diagnose import diagnose
    from warp_compile.probe.fix.edits import SourceView
    from warp_compile.probe.models import Report
    from warp_compile.probe.scan import scan

    rep = Report.load(report)
    t0 = time.perf_counter()
    facts = scan(source)
    t1 = time.perf_counter()
    d = diagnose(rep, facts, root=source, sources=SourceView(source))
    t2 = time.perf_counter()
    return {
        "files": facts.files_scanned,
        "mb": round(sum(f.stat().st_size for f in source.rglob("*.py")) / 1e6, 1),
        "kernels": len(facts.kernels),
        "tapes": len(facts.tapes),
        "scan_s": round(t1 - t0, 2),
        "rules_s": round(t2 - t1, 2),
        "findings": len(d.findings),
        "peak_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
    }


def _timed(source: Path, report: Path) -> dict:
    out = subprocess.run([PY, __file__, "--one", str(source), str(report)], capture_output=True, text=True,
                         timeout=3600, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def _checkout(tree: Path, module: str, dest: Path) -> Path:
    """`dest/<module>`: the tree's Python files copied, everything else (native libraries, data) linked."""
    for src in tree.rglob("*"):
        rel = src.relative_to(tree)
        if "__pycache__" in rel.parts:
            continue
        out = dest / module / rel
        if src.is_dir():
            continue
        out.parent.mkdir(parents=True, exist_ok=True)
        if src.suffix == ".py":
            shutil.copy2(src, out)
        else:
            os.symlink(src, out)
    return dest


def _slice(full: Path, keep: list[str], imported: set[str], dest: Path) -> Path:
    """`dest` (where the measurement ran, so its paths still match) holding `keep` (plus every file the measured
    run imported) as its Python sources."""
    shutil.rmtree(dest, ignore_errors=True)
    for rel in sorted(set(keep) | imported):
        out = dest / rel
        out.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(full / rel, out)
    return dest


def _tapes_project(dest: Path, n: int) -> Path:
    """A package with one measured kernel and `n` tape sites over it in other files, each behind `--grad`."""
    pkg = dest / "taped"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "kernels.py").write_text(
        "import warp as wp\n\n\n@wp.kernel\ndef scale(a: wp.array(dtype=float), s: float):\n"
        "    i = wp.tid()\n    a[i] = a[i] * s\n"
    )
    (pkg / "__main__.py").write_text(
        "import argparse\n\nimport warp as wp\n\nfrom .kernels import scale\n\n"
        "p = argparse.ArgumentParser()\np.add_argument('--grad', action='store_true')\nargs = p.parse_args()\n"
        "a = wp.ones(8, dtype=float, device='cpu')\nwp.launch(scale, dim=8, inputs=[a, 2.0], device='cpu')\n"
        "print(a.numpy().sum())\n"
    )
    per_file = 10
    for f in range((n + per_file - 1) // per_file):
        body = ["import warp as wp", "", "from .kernels import scale", ""]
        for t in range(min(per_file, n - f * per_file)):
            body += [f"def grad_{t}(a, args):", "    if args.grad:", "        with wp.Tape() as tape:",
                     "            wp.launch(scale, dim=8, inputs=[a, 2.0], device='cpu')",
                     "        tape.backward()", ""]
        (pkg / f"grads_{f}.py").write_text("\n".join(body) + "\n")
    return dest


def _measure(command: list[str], cwd: Path, out: Path) -> None:
    subprocess.run([PY, "-m", "warp_compile", "measure", "--samples", "1", "--quiet", "--json", str(out), "--",
                    *command], cwd=cwd, check=True, timeout=3600)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--one", nargs=2, metavar=("SOURCE", "REPORT"), help=argparse.SUPPRESS)
    ap.add_argument("--tree", type=Path, help="the library's package directory (default: the installed warp)")
    ap.add_argument("--module", default="warp", help="its import name (default: warp)")
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "SCALE.md")
    ap.add_argument("--append", action="store_true", help="add this tree's tables to --out instead of replacing it")
    ap.add_argument("--no-tapes", action="store_true", help="skip the tape-site series")
    ap.add_argument("command", nargs="*", help="the program to measure (after --)")
    ns = ap.parse_args()
    if ns.one:
        print(json.dumps(_one(Path(ns.one[0]), Path(ns.one[1]))))
        return 0
    import warp

    tree = ns.tree or Path(warp.__file__).parent
    command = ns.command or [PY, "-m", "warp.examples.fem.example_diffusion", "--headless", "--device", "cpu",
                             "--quiet"]
    rows: list[dict] = []
    tape_rows: list[dict] = []
    with tempfile.TemporaryDirectory(prefix="warp-compile-scale-") as tmp:
        work = Path(tmp)
        project = _checkout(tree, ns.module, work / "project")
        report = work / "report.json"
        t0 = time.perf_counter()
        _measure(command, project, report)
        run_s = time.perf_counter() - t0
        data = json.loads(report.read_text())
        imported = {os.path.relpath(f, project) for f in data.get("imported_files", []) if f.startswith(str(project))}
        files = sorted(p.relative_to(project).as_posix() for p in project.rglob("*.py"))
        full = work / "full"
        project.rename(full)
        for frac in FRACTIONS:
            keep = files[: max(1, int(len(files) * frac))]
            src = _slice(full, keep, imported, project)
            rows.append({"slice": f"{frac:.0%}", **_timed(src, report)})
            print(rows[-1], flush=True)
        for n in () if ns.no_tapes else TAPES:
            proj = _tapes_project(work / f"tapes{n}", n)
            rep = work / f"tapes{n}.json"
            _measure([PY, "-m", "taped"], proj, rep)
            tape_rows.append({"tape sites": n, **_timed(proj, rep)})
            print(tape_rows[-1], flush=True)
    _write(ns.out, tree, command, run_s, rows, tape_rows, ns.append)
    return 0


def _table(rows: list[dict]) -> list[str]:
    keys = list(rows[0])
    return ["| " + " | ".join(keys) + " |", "|" + "---|" * len(keys),
            *("| " + " | ".join(str(r[k]) for k in keys) + " |" for r in rows)]


def _write(out: Path, tree: Path, command: list[str], run_s: float, rows: list[dict], tape_rows: list[dict],
           append: bool = False) -> None:
    cmd = " ".join(Path(c).name if i == 0 else c for i, c in enumerate(command))
    head = [] if append and out.exists() else ["# Scan and rules against the size of the project", ""]
    lines = [
        *head,
        f"## `{tree.name}`",
        "",
        f"Recorded by `python bench/scale.py` on {time.strftime('%Y-%m-%d')}, {platform.machine()}, "
        f"{os.cpu_count()} cores, Python {platform.python_version()}. Tree: the installed `{tree.name}` sources "
        f"copied into a project folder; program `{cmd}` run from there ({run_s:.0f} s to measure, cold + warm). "
        "Each row is a fresh process: the scan of that slice (every file the run imported is always in it), then "
        "every rule against the one measurement. `peak_mb` is the process's maximum resident size.",
        "",
        *_table(rows),
        "",
    ]
    if tape_rows:
        lines += ["Tape sites behind `--grad` over the measured kernel (the shape whose rules walked every file per "
                  "tape):", "", *_table(tape_rows), ""]
    text = "\n".join(lines)
    if append and out.exists():
        text = out.read_text().rstrip("\n") + "\n\n" + text
    out.write_text(text)


if __name__ == "__main__":
    raise SystemExit(main())
