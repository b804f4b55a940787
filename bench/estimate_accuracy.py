"""How close are diagnose's estimated savings to what the fixes measurably save?

For each app, `diagnose --verify` runs every finding that declares an experiment (Warp settings applied at
`import warp`, interleaved against the app as it is) and records the estimate next to the measured saving on the
same clock (the finding's one clock: compile CPU for CPU compile work). Writes a Markdown table (default
bench/ESTIMATES.md).

    python bench/estimate_accuracy.py [--pairs 3] [--only NAME ...] [--out bench/ESTIMATES.md]

Apps: the bundled fixtures whose diagnosis declares an experiment, the test apps in tests/apps/, and Warp's own
fem diffusion example (its kernels live in the installed warp-lang). Takes minutes per app on a small machine.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

PY = sys.executable
APPS: dict[str, tuple[list[str], Path | None]] = {
    "heavy_forward (tests/apps)": ([PY, "-m", "heavyfwd"], ROOT / "tests" / "apps" / "heavy_forward"),
    "twin_entry (tests/apps)": ([PY, "run_forward.py"], ROOT / "tests" / "apps" / "twin_entry"),
    "heat_field (fixture)": ([PY, "-m", "heat_field"], ROOT / "evals" / "fixtures" / "heat_field" / "project"),
    "warp fem example_diffusion": (
        [PY, "-m", "warp.examples.fem.example_diffusion", "--headless", "--device", "cpu", "--quiet",
         "--resolution", "10"],
        None,
    ),
}


def _row(name: str, argv: list[str], cwd: Path | None, pairs: int) -> list[dict]:
    from warp_compile.probe.diagnose import diagnose_command
    from warp_compile.probe.fix.verify import verify

    with tempfile.TemporaryDirectory(prefix="warp-compile-bench-") as tmp:
        where = cwd or Path(tmp)
        t0 = time.perf_counter()
        report, d = diagnose_command(argv, where, samples=1, timeout_s=900, rebuild_limit_s=60)
        d = verify(d, argv, where, pairs=pairs, timeout_s=900)
        took = time.perf_counter() - t0
    rows = []
    for f in d.findings:
        if f.measured is None:
            continue
        m = f.measured
        err = None
        if m.saving_ms and f.estimated_saving_ms is not None:
            err = (f.estimated_saving_ms - m.saving_ms) / m.saving_ms
        rows.append({
            "app": name, "mechanism": f.mechanism, "settings": m.settings, "estimate_ms": f.estimated_saving_ms,
            "measured_ms": m.saving_ms, "band_ms": m.band_ms, "verdict": m.verdict, "pairs": m.pairs,
            "clock": m.clock, "low_ms": m.saving_low_ms, "high_ms": m.saving_high_ms, "source": f.saving_source,
            "error": err, "seconds": round(took, 1), "cold_module_ms": report.cold_module_ms.median,
        })
    if not rows:
        rows.append({"app": name, "mechanism": "-", "settings": {}, "estimate_ms": None, "measured_ms": None,
                     "band_ms": None, "verdict": "no finding with an experiment", "pairs": 0, "error": None,
                     "seconds": round(took, 1), "cold_module_ms": report.cold_module_ms.median})
    return rows


def _ms(x: float | None) -> str:
    return "-" if x is None else f"{x:,.0f}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pairs", type=int, default=3)
    ap.add_argument("--only", nargs="*", default=None, help="substrings of app names to run")
    ap.add_argument("--out", default=str(ROOT / "bench" / "ESTIMATES.md"))
    ns = ap.parse_args()
    rows: list[dict] = []
    for name, (argv, cwd) in APPS.items():
        if ns.only and not any(s in name for s in ns.only):
            continue
        print(f"{name} ...", file=sys.stderr, flush=True)
        rows += _row(name, argv, cwd, ns.pairs)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    lines = [
        "# Estimated vs measured savings",
        "",
        f"`python bench/estimate_accuracy.py --pairs {ns.pairs}` on {os.cpu_count()} cores, warp "
        f"{__import__('warp').__version__}, load average {load:.1f} at the end" if load is not None else "",
        "",
        "Measured: on the finding's one clock (the clock `fix` reports), median of the interleaved pairs, as is minus "
        "with the experiment's settings, with its 95% interval (paired t). Estimate: as diagnose prices it (source: "
        "rebuild = rebuilt at exit with the setting changed, model, builds). Error: (estimate - measured) / measured.",
        "",
        "| app | finding | experiment | estimate ms (source) | measured ms | 95% interval | clock | verdict | error |"
        " cold module ms |",
        "| --- | --- | --- | ---: | ---: | ---: | --- | --- | ---: | ---: |",
    ]
    for r in rows:
        err = "-" if r["error"] is None else f"{r['error']:+.0%}"
        exp = ", ".join(f"{k}={v}" for k, v in r["settings"].items()) or "-"
        iv = f"{_ms(r.get('low_ms'))} to {_ms(r.get('high_ms'))}" if r.get("low_ms") is not None else "-"
        lines.append(
            f"| {r['app']} | {r['mechanism']} | {exp} | {_ms(r['estimate_ms'])} ({r.get('source') or '-'}) | "
            f"{_ms(r['measured_ms'])} | {iv} | {r.get('clock') or '-'} | {r['verdict']} | {err} | "
            f"{_ms(r['cold_module_ms'])} |"
        )
    Path(ns.out).write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(json.dumps(rows, indent=1, default=str))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
