"""Issue 25's done-when list, run on this machine while three other compile jobs load it; the record is DONE_WHEN.md.

    python bench/done_when.py [--jobs 3] [--only NAME ...] [--out bench/DONE_WHEN.md]

Every item runs the CLI a user would run (`warp-compile ... --json`), in scratch copies of the trees, while
`--jobs` loops compile another Warp app in fresh caches (bench/load.py). The coverage benchmark
(bench/coverage.py, COVERAGE.md) records the repeated ones: the 5% effect read in at most 6 samples, and identical
trees compared ten times and more.

- five:     `compare --until-decided --max-samples 6` on bench/effects/five (a real ~5% compile-time fix);
- fix:      `fix --write --unsafe-fixes` on tests/apps/late_pair (a late option and a late generic instance: CS-3
            and CS-6; the option move is rated review, so --write alone holds it back);
- header:   `try --set use_precompiled_headers=False --until-decided` on tests/apps/one_module;
- cs10:     `diagnose --verify` on warp.fem's example_diffusion and on two apps over an installed library
            (tests/apps/solverlib: grid_app, swarm_app, in a venv that has solverlib installed): the CS-10
            estimate (priced by the rebuilds at exit) against what --verify measured, on the same clock.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from datetime import datetime, timezone
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
from gentle import exit_on_sigterm, tool_json  # noqa: E402
from load import compile_jobs  # noqa: E402

PY = sys.executable
WC = str(Path(PY).with_name("warp-compile"))


def _cli(args: list[str], cwd: Path, out: Path) -> tuple[int, dict, float]:
    return tool_json(WC, args, cwd, out)


def _shown(args: list[str]) -> str:
    return "warp-compile " + " ".join(a.replace(PY, "python") for a in args)


def five(scratch: Path) -> list[str]:
    args = ["compare", "--before-cwd", str(ROOT / "bench/effects/five/before"), "--after-cwd",
            str(ROOT / "bench/effects/five/after"), "--until-decided", "--max-samples", "6", "--", PY, "-m", "effapp"]
    code, c, took = _cli(args, ROOT, scratch / "five.json")
    head = next((k for k in c.get("clocks", []) if k["name"] == c.get("headline")), {})
    iv = head.get("interval") or {}
    return [
        "## A real ~5% effect reads IMPROVED in at most 6 samples",
        "",
        f"`{_shown(args)}` (run from the repository root)",
        "",
        f"- verdict **{c.get('verdict')}**, exit {code}, after {c.get('interleaved', {}).get('pairs')} pairs "
        f"({c.get('interleaved', {}).get('stopped_because')}), {took:.0f} s",
        f"- headline {c.get('headline')}: {head.get('before', {}).get('median', 0):,.0f} -> "
        f"{head.get('after', {}).get('median', 0):,.0f} ms ({head.get('delta_pct') or 0:+.1f}%), 95% interval "
        f"[{iv.get('low_ms', 0):+,.0f}, {iv.get('high_ms', 0):+,.0f}] ms; clocks: {c.get('clock_basis')}",
        f"- reason: {c.get('reason')}",
        "",
    ]


def fix(scratch: Path) -> list[str]:
    app = scratch / "late_pair"
    shutil.copytree(ROOT / "tests/apps/late_pair", app)
    args = ["fix", "--write", "--unsafe-fixes", "--", PY, "-m", "latepair"]
    code, r, took = _cli(args, app, scratch / "fix.json")
    lines = ["## `fix` proves both fixes of a late-option + late-instance project and writes them", "",
             f"`{_shown(args)}` in a copy of tests/apps/late_pair (a `set_module_options` after the first launch, and "
             "a generic kernel's float64 instance after its module loaded)", "",
             f"- exit {code}, {took:.0f} s: {r.get('summary')}"]
    for c in r.get("candidates", []) + ([r["combination"]] if r.get("combination") else []):
        if c.get("status") != "measured":
            lines.append(f"- {c['key']}: {c.get('status')} ({c.get('reason')})")
            continue
        iv = ""
        if c.get("saving_low_ms") is not None:
            iv = f", 95% interval {c['saving_low_ms']:,.0f} to {c['saving_high_ms']:,.0f} ms"
        lines.append(f"- {c['key']}: {c.get('verdict')} after {c.get('pairs')} sample(s); saves "
                     f"{c.get('saving_ms') or 0:,.0f} ms on {c.get('clock')}{iv}; behaviour "
                     f"{'kept' if (c.get('behaviour') or {}).get('ok') else 'NOT kept'}")
    lines += [f"- written: {', '.join(r.get('written', [])) or 'nothing'} ({', '.join(r.get('applied', []))})",
              f"- cost: {r.get('costs', {}).get('program_runs')} program runs", "", "```diff",
              (r.get("written_diff") or "").rstrip(), "```", ""]
    return lines


def header(scratch: Path) -> list[str]:
    app = scratch / "one_module"
    shutil.copytree(ROOT / "tests/apps/one_module", app)
    args = ["try", "--set", "use_precompiled_headers=False", "--until-decided", "--max-pairs", "8", "--", PY,
            "app.py"]
    code, r, took = _cli(args, app, scratch / "header.json")
    c = r.get("comparison", {})
    head = next((k for k in c.get("clocks", []) if k["name"] == c.get("headline")), {})
    iv = head.get("interval") or {}
    return [
        "## Turning the header off for a one-module app reads IMPROVED, exit 0", "",
        f"`{_shown(args)}` in a copy of tests/apps/one_module", "",
        f"- verdict **{c.get('verdict')}**, exit {code}, {c.get('interleaved', {}).get('pairs')} pairs, {took:.0f} s",
        f"- headline {c.get('headline')}: {head.get('before', {}).get('median', 0):,.0f} -> "
        f"{head.get('after', {}).get('median', 0):,.0f} ms ({head.get('delta_pct') or 0:+.1f}%), 95% interval "
        f"[{iv.get('low_ms', 0):+,.0f}, {iv.get('high_ms', 0):+,.0f}] ms",
        f"- moved: {'; '.join(c.get('moved_costs', [])) or '-'}",
        f"- reason: {c.get('reason')}",
        "",
    ]


def _venv_with_solverlib(where: Path) -> str:
    """A real venv whose site-packages holds solverlib (with its dist-info) and sees this interpreter's packages."""
    subprocess.run([PY, "-m", "venv", "--without-pip", str(where)], check=True, timeout=300)
    python = str(where / "bin" / "python")
    site = Path(subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                               capture_output=True, text=True, check=True).stdout.strip())
    (site / "base_env.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    for item in (ROOT / "tests/apps/solverlib/site-packages").iterdir():
        shutil.copytree(item, site / item.name)
    return python


def cs10(scratch: Path) -> list[str]:
    python = _venv_with_solverlib(scratch / "venv")
    for name in ("grid_app", "swarm_app"):
        shutil.copytree(ROOT / "tests/apps/solverlib" / name, scratch / name)
    fem = scratch / "fem"
    fem.mkdir()
    cases = [
        ("warp.fem example_diffusion", fem, [PY, "-m", "warp.examples.fem.example_diffusion", "--headless",
                                             "--device", "cpu"]),
        ("solverlib grid_app (script)", scratch / "grid_app", [python, "main.py"]),
        ("solverlib swarm_app (python -m)", scratch / "swarm_app", [python, "-m", "swarm"]),
    ]
    lines = ["## CS-10: the estimate against `diagnose --verify`", "",
             "| app | command | estimate (source) | measured by --verify (95% interval) | clock | verdict | "
             "estimate / measured | wall |", "| --- | --- | ---: | ---: | --- | --- | ---: | ---: |"]
    notes = []
    for label, cwd, cmd in cases:
        args = ["diagnose", "--verify", "--", *cmd]
        code, d, took = _cli(args, cwd, scratch / f"{cwd.name}.json")
        f = next((x for x in d.get("findings", []) + [w["finding"] for w in d.get("withdrawn", [])]
                  if x["mechanism"] == "CS-10"), None)
        shown = _shown(args).replace(str(scratch / "venv" / "bin" / "python"), "VENV/bin/python")
        if f is None or f.get("measured") is None:
            lines.append(f"| {label} | `{shown}` | no CS-10 finding measured (exit {code}) | | | | | {took:.0f} s |")
            notes.append(f"- {label}: {d.get('summary') or d.get('error')}")
            continue
        m = f["measured"]
        ratio = f["estimated_saving_ms"] / m["saving_ms"] if m.get("saving_ms") and f.get("estimated_saving_ms") \
            else None
        iv = (f"{m['saving_low_ms']:,.0f} to {m['saving_high_ms']:,.0f}" if m.get("saving_low_ms") is not None
              else "no interval")
        est = f"{f['estimated_saving_ms']:,.0f} ms ({f.get('saving_source')})" if f.get("estimated_saving_ms") \
            else "none"
        lines.append(f"| {label} | `{shown}` | {est} | {m.get('saving_ms') or 0:,.0f} ms ({iv}) | {m['clock']} | "
                     f"{m['verdict']} ({m['pairs']} pairs) | {ratio:.2f} |" if ratio is not None else
                     f"| {label} | `{shown}` | {est} | {m.get('saving_ms')} | {m['clock']} | {m['verdict']} | - |")
        lines[-1] += f" {took:.0f} s |"
        rb = d.get("rebuild") or {}
        notes.append(f"- {label}: {m.get('agreement')}; rebuilds: {rb.get('builds')} builds, "
                     f"{rb.get('cpu_ms') or 0:,.0f} ms CPU")
    return lines + [""] + notes + [""]


ITEMS = {"five": five, "fix": fix, "header": header, "cs10": cs10}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--jobs", type=int, default=3)
    ap.add_argument("--only", nargs="*", choices=sorted(ITEMS))
    ap.add_argument("--out", default=str(HERE / "DONE_WHEN.md"))
    args = ap.parse_args()
    exit_on_sigterm()  # the load's finally runs: its jobs are stopped
    import warp

    body: list[str] = []
    loads = [os.getloadavg()[0]]
    scratch = Path(tempfile.mkdtemp(prefix="warp-compile-done-"))
    try:
        with compile_jobs(args.jobs):
            for name in args.only or list(ITEMS):
                print(f"{name} ...", file=sys.stderr, flush=True)
                body += ITEMS[name](scratch)
                loads.append(os.getloadavg()[0])
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    head = [
        "# Issue 25: done when", "",
        f"`python bench/done_when.py --jobs {args.jobs}{' --only ' + ' '.join(args.only) if args.only else ''}` "
        f"({datetime.now(timezone.utc):%Y-%m-%d}, {platform.machine()}, {os.cpu_count()} vCPUs, warp-lang "
        f"{warp.__version__}), with {args.jobs} compile jobs (bench/load.py) running throughout; 1-minute load "
        f"average {', '.join(f'{x:.1f}' for x in loads)} (start, then after each item). Repeated runs of the 5% effect "
        "and of identical trees: bench/COVERAGE.md.", "",
    ]
    Path(args.out).write_text("\n".join(head + body) + "\n")
    print("\n".join(head + body))


if __name__ == "__main__":
    main()
