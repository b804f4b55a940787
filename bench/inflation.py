"""What three compile jobs do to the CPU time of the same compile: CS-10's saving on warp.fem's diffusion example,
measured the way `diagnose --verify` measures it, on the quiet machine and then under load.

    python bench/inflation.py [--pairs 8] [--jobs 3] [--out bench/INFLATION.md] [--raw F.json]

Each leg runs `diagnose --verify --verify-pairs N` on the example (a fixed number of pairs, no stopping rule) and
keeps the reports of the CS-10 arm and its baseline (the fix engine's own samples, taken from its compare step).
Per pair it reads, for both arms: the compile CPU (cold CPU - warm CPU of the process tree, the clock the saving is
reported on) and the module builds' own CPU (the building threads' CPU time, cold - warm), and the tool's reading
of how much of the machine other work held (probe/contention.py). The table says how much the saving and the
compile it belongs to grew from the quiet leg to the loaded one, and how much each clock's pair differences spread.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from gentle import exit_on_sigterm  # noqa: E402
from load import compile_jobs  # noqa: E402

FEM = ["-m", "warp.examples.fem.example_diffusion", "--headless", "--device", "cpu"]


def _leg(pairs: int, jobs: int, scratch: Path) -> dict[str, Any]:
    """One `diagnose --verify` run; the last compare of the CS-10 arm, as two reports' samples."""
    from warp_compile.cli import main as cli_main
    from warp_compile.probe.compare import multiarm

    seen: list[tuple[Any, Any]] = []
    original = multiarm.compare_arm

    def spy(base, after, base_name, arm_name, *a, **k):  # type: ignore[no-untyped-def]
        if "CS-10" in arm_name:
            seen.append((base, after))
        return original(base, after, base_name, arm_name, *a, **k)

    multiarm.compare_arm = spy
    args = ["diagnose", "--verify", "--verify-pairs", str(pairs), "--quiet", "--json", str(scratch / "d.json"), "--",
            sys.executable, *FEM]
    try:
        if jobs:
            with compile_jobs(jobs):
                _run(cli_main, args)
        else:
            _run(cli_main, args)
    finally:
        multiarm.compare_arm = original
    if not seen:
        raise SystemExit("no CS-10 arm was measured (is CS-10 still a finding on this example?)")
    base, after = seen[-1]
    return {"before": _runs(base), "after": _runs(after), "other_share": [base.other_share, after.other_share]}


def _run(cli_main: Any, args: list[str]) -> None:
    try:
        cli_main(args)
    except SystemExit as stop:
        if stop.code not in (0, None):
            raise


def _runs(rep: Any) -> list[dict[str, float]]:
    out = []
    for s in rep.sample_results:
        if not s.ok or s.warm is None:
            continue
        c, w = s.cold, s.warm
        out.append({"compile": c.cpu_ms - w.cpu_ms, "modules": (c.module_cpu_ms or 0.0) - (w.module_cpu_ms or 0.0),
                    "other_share": c.other_share})
    return out


def summary(leg: dict[str, Any]) -> dict[str, float]:
    b, a = leg["before"], leg["after"]
    n = min(len(b), len(a))
    out: dict[str, float] = {"pairs": n}
    for clock in ("compile", "modules"):
        d = [b[i][clock] - a[i][clock] for i in range(n)]
        out[f"{clock}_saving"] = statistics.mean(d)
        out[f"{clock}_sd"] = statistics.stdev(d) if n > 1 else 0.0
        out[f"{clock}_base"] = statistics.mean(x[clock] for x in b[:n])
        out[f"{clock}_share"] = 100.0 * statistics.mean(d[i] / b[i]["compile"] for i in range(n))
    shares = [x["other_share"] for x in b + a if x["other_share"] is not None]
    out["other_share"] = statistics.median(shares) if shares else float("nan")
    return out


def render(quiet: dict[str, float], loaded: dict[str, float], jobs: int, pairs: int, commit: str) -> list[str]:
    when = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    lines = [
        "# CPU time under contention: the same saving, quiet and with compile jobs running", "",
        f"`python bench/inflation.py --pairs {pairs} --jobs {jobs}`, {when}, at {commit} (2 vCPUs). CS-10's fix on "
        "warp.fem's diffusion example, measured as `diagnose --verify` measures it (the fix engine's own pairs, "
        f"{pairs} a leg, no stopping rule). Compile CPU: cold - warm CPU of the process tree, the clock savings are "
        "reported on; module builds: the building threads' CPU time, cold - warm. Shares are of the original's "
        "compile CPU, pair by pair.", "",
        "| leg | other work (tool) | original's compile CPU | saving, compile CPU (sd of a pair) | as a share | "
        "saving, module builds (sd of a pair) | as a share of the compile |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for name, s in (("quiet", quiet), (f"{jobs} compile jobs", loaded)):
        lines.append(
            f"| {name} | {s['other_share']:.0%} | {s['compile_base']:,.0f} ms | {s['compile_saving']:,.0f} ms "
            f"({s['compile_sd']:,.0f}) | {s['compile_share']:.1f}% | {s['modules_saving']:,.0f} ms "
            f"({s['modules_sd']:,.0f}) | {s['modules_share']:.1f}% |")

    def grew(key: str) -> str:
        return f"{100.0 * (loaded[key] / quiet[key] - 1.0):+.0f}%"

    lines += [
        "", f"Under load: the original's compile CPU {grew('compile_base')}, its module builds' CPU "
        f"{grew('modules_base')}; the saving {grew('compile_saving')} on compile CPU and {grew('modules_saving')} on "
        f"the module builds; as shares {grew('compile_share')} and {grew('modules_share')}.", ""]
    return lines


def main() -> None:
    exit_on_sigterm()
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pairs", type=int, default=8)
    ap.add_argument("--jobs", type=int, default=3)
    ap.add_argument("--out", default=str(HERE / "INFLATION.md"))
    ap.add_argument("--raw", default="")
    ap.add_argument("--commit", default="")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="inflation-") as tmp:
        q = _leg(a.pairs, 0, Path(tmp))
        print("quiet leg done", file=sys.stderr, flush=True)
        loaded = _leg(a.pairs, a.jobs, Path(tmp))
    if a.raw:
        Path(a.raw).write_text(json.dumps({"quiet": q, "loaded": loaded}, indent=1))
    lines = render(summary(q), summary(loaded), a.jobs, a.pairs, a.commit or "HEAD")
    Path(a.out).write_text("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
