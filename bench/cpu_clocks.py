"""Benchmark: how much other work on the machine moves the CPU clocks, against the wall clocks, on this machine.

    python bench/cpu_clocks.py [--samples 6] [--out bench/CPU_CLOCKS.md]

The same real Warp CPU app (tests/apps/heavy_forward: three modules and the precompiled header, in fresh caches)
is measured by the tool's own sandbox and hook (`measure.run_sample`: a cold and a warm run) in blocks, one per
machine state: as it is, one CPU burner (a pure-Python loop: the other core of two busy), two burners, three
compile jobs (loops compiling another Warp app in fresh caches, bench/load.py), and as it is again. Per block and
clock: the median, the spread (raw MAD over the median) and the median against the first quiet block. The two
vCPUs may be SMT siblings or share caches on the host; whatever they share shows up here as CPU time moving too.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from load import burners, compile_jobs  # noqa: E402

from warp_compile.probe.measure import run_sample  # noqa: E402

APP = HERE.parent / "tests" / "apps" / "heavy_forward"
CLOCKS = [
    ("compile elapsed (wall)", lambda s: s.cold.result.wall_ms - s.warm.result.wall_ms),
    ("compile CPU", lambda s: s.cold.result.cpu_ms - s.warm.result.cpu_ms),
    ("cold module work (wall)", lambda s: s.cold.result.module_ms),
    ("cold module CPU", lambda s: s.cold.result.module_cpu_ms),
    ("header (wall)", lambda s: s.cold.result.pch_ms),
    ("header CPU", lambda s: s.cold.result.pch_cpu_ms),
]


def _block(samples: int) -> list:
    out = []
    for i in range(samples + 1):  # the first sample of a block warms the file cache after the switch: dropped
        s = run_sample([sys.executable, "-m", "heavyfwd"], APP, i)
        if s.ok and i > 0:
            out.append(s)
    return out


def _stats(xs: list[float]) -> tuple[float, float]:
    m = statistics.median(xs)
    mad = statistics.median([abs(x - m) for x in xs])
    return m, (mad / m if m else 0.0)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--samples", type=int, default=6)
    ap.add_argument("--out", default=str(HERE / "CPU_CLOCKS.md"))
    args = ap.parse_args()
    blocks = [
        ("as it is", None),
        ("1 CPU burner", lambda: burners(1)),
        ("2 CPU burners", lambda: burners(2)),
        ("3 compile jobs", lambda: compile_jobs(3)),
        ("as it is, again", None),
    ]
    results: dict[str, tuple[list, float, float]] = {}
    for name, load in blocks:
        t0 = time.monotonic()
        load0 = os.getloadavg()[0]
        if load is None:
            got = _block(args.samples)
        else:
            with load():
                got = _block(args.samples)
        results[name] = (got, load0, os.getloadavg()[0])
        print(f"{name}: {len(got)} samples, {time.monotonic() - t0:.0f} s", file=sys.stderr)
    import warp

    lines = [
        "# CPU clocks against wall clocks on a busy machine",
        "",
        f"`python bench/cpu_clocks.py --samples {args.samples}` ({datetime.now(timezone.utc):%Y-%m-%d}, "
        f"{platform.machine()}, {os.cpu_count()} vCPUs, warp-lang {warp.__version__}); app: tests/apps/heavy_forward "
        "(three modules of two kernels with backward code, and the CPU precompiled header), cold + warm per sample in "
        "the tool's sandbox; load = 1-minute load average at the start and end of the block.",
        "",
        "Per block: median ms (spread = raw MAD / median) and, in brackets, the median against the first "
        "quiet block.",
        "",
        "| block | load | " + " | ".join(n for n, _ in CLOCKS) + " |",
        "| --- | --- | " + " | ".join("---:" for _ in CLOCKS) + " |",
    ]
    base = {n: _stats([f(s) for s in results["as it is"][0]])[0] for n, f in CLOCKS}
    for name, _ in blocks:
        got, l0, l1 = results[name]
        cells = []
        for n, f in CLOCKS:
            vals = [f(s) for s in got if f(s) is not None]
            if not vals:
                cells.append("n/a")
                continue
            m, spread = _stats(vals)
            cells.append(f"{m:,.0f} (±{100 * spread:.1f}%) [{m / base[n]:.2f}x]")
        lines.append(f"| {name} | {l0:.1f} -> {l1:.1f} | " + " | ".join(cells) + " |")
    Path(args.out).write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
