"""Plain runs of a history case: the original and a changed copy on the release before the fix, and the original on
the release with it, interleaved, no tool attached, each sample in a fresh kernel cache.

    python bench/history_plain.py CASE [--diff FILE | --tree DIR] [--pairs N] [--json OUT]

A sample runs the case's command twice in one new cache: `cold` is the first run, `repeat` the second (what every
later start with a kept cache pays). Wall time is what a user waits; CPU time (os.wait4 of the run) is what the
verdict rests on, as in compare, since several jobs share this machine's two cores. `--diff` is a unified diff
against the project (e.g. `written_diff` of builtin:fix's fix.json, kept by `eval --out`), applied with `patch -p1`;
`--tree` a changed copy of project/. Prints a Markdown row per arm and clock; `--json` keeps every run.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from warp_compile.evals.history import history_root, interpreters
from warp_compile.evals.scorer import load_cases
from warp_compile.probe.fix.behaviour import app_lines

T95 = {1: 12.71, 2: 4.30, 3: 3.18, 4: 2.78, 5: 2.57, 6: 2.45, 7: 2.36, 8: 2.31, 9: 2.26, 10: 2.23, 11: 2.20}


def _run(argv: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, float, list[str], int]:
    """(wall s, CPU s, the app's output lines, exit status) of one run, its CPU time from os.wait4."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                            stdin=subprocess.DEVNULL, text=True)
    out = proc.stdout.read() if proc.stdout else ""
    _pid, status, ru = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    return wall, ru.ru_utime + ru.ru_stime, app_lines(out), proc.returncode


def sample(argv: list[str], cwd: Path) -> dict:
    with tempfile.TemporaryDirectory(prefix="history-plain-") as cache:
        env = dict(os.environ, WARP_CACHE_PATH=cache, PYTHONDONTWRITEBYTECODE="1")
        cw, cc, cout, cst = _run(argv, cwd, env)
        rw, rc, rout, rst = _run(argv, cwd, env)
    return {"cold_wall": cw, "cold_cpu": cc, "repeat_wall": rw, "repeat_cpu": rc, "outputs": [cout, rout],
            "status": [cst, rst]}


def interval(diffs: list[float]) -> tuple[float, float]:
    n = len(diffs)
    if n < 2:
        return (float("-inf"), float("inf"))
    m, sd = statistics.mean(diffs), statistics.stdev(diffs)
    half = T95.get(n - 1, 2.0) * sd / n ** 0.5
    return (m - half, m + half)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("case")
    p.add_argument("--diff", type=Path)
    p.add_argument("--tree", type=Path)
    p.add_argument("--pairs", type=int, default=4)
    p.add_argument("--json", type=Path)
    ns = p.parse_args(argv)
    case = next((c for c in load_cases(history_root()) if c.id == ns.case), None)
    if case is None or case.history is None:
        print(f"history_plain: no history case {ns.case!r}", file=sys.stderr)
        return 2
    before, after = interpreters(case, progress=lambda m: print(m, file=sys.stderr))
    with tempfile.TemporaryDirectory(prefix="history-plain-trees-") as tmp:
        root = Path(tmp)
        original = root / "a" / "project"
        shutil.copytree(Path(case.path) / "project", original)
        arms = {"original": (original, before), "maintainers": (original, after)}
        if ns.diff or ns.tree:
            changed = root / "b" / "project"
            if ns.tree:
                shutil.copytree(ns.tree, changed, ignore=shutil.ignore_patterns("__pycache__"))
            else:
                shutil.copytree(original, changed)
                subprocess.run(["patch", "-s", "-p1", "-d", str(changed), "-i", str(ns.diff.resolve())], check=True)
            arms["changed"] = (changed, before)
        names = list(arms)
        runs: dict[str, list[dict]] = {n: [] for n in names}
        for i in range(ns.pairs):
            order = names[i % len(names):] + names[:i % len(names)]  # each arm takes each position in turn
            for name in order:
                cwd, py = arms[name]
                runs[name].append(sample([py if c == "python" else c for c in case.command], cwd))
                print(f"round {i + 1}: {name} {runs[name][-1]['repeat_cpu']:.2f} s repeat CPU", file=sys.stderr)
    rows = []
    base = runs["original"]
    for name in names[1:]:
        for clock in ("cold_cpu", "repeat_cpu", "cold_wall", "repeat_wall"):
            b = statistics.median(s[clock] for s in base)
            a = statistics.median(s[clock] for s in runs[name])
            low, high = interval([y[clock] - x[clock] for x, y in zip(base, runs[name], strict=True)])
            rows.append({"arm": name, "clock": clock, "before_s": round(b, 3), "after_s": round(a, 3),
                         "saving_pct": round(100 * (b - a) / b, 1), "interval_s": [round(low, 3), round(high, 3)],
                         "improved": high < 0})
    same = {n: all(s["outputs"] == base[0]["outputs"] and s["status"] == [0, 0] for s in runs[n]) for n in names}
    print("| case | arm | clock | original (median) | arm (median) | saving | 95% interval of the difference | "
          "same output |")
    print("| --- | --- | --- | ---: | ---: | ---: | ---: | --- |")
    for r in rows:
        print(f"| {case.id} | {r['arm']} | {r['clock']} | {r['before_s']:.2f} s | {r['after_s']:.2f} s | "
              f"{r['saving_pct']:+.1f}% | {r['interval_s'][0]:+.2f} to {r['interval_s'][1]:+.2f} s | "
              f"{'yes' if same[r['arm']] else 'NO'} |")
    if ns.json:
        ns.json.write_text(json.dumps({"case": case.id, "pairs": ns.pairs, "rows": rows, "runs": runs,
                                       "same_output": same}, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
