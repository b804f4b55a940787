"""`warp-compile measure [--samples N] [--cwd DIR] [--timeout S] [--json FILE] [--label TEXT] -- CMD...`"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from warp_compile.io import emit, progress_printer


def add_run_options(p: argparse.ArgumentParser, samples: int) -> None:
    p.add_argument("--samples", type=int, default=samples, help=f"cold+warm pairs to run (default {samples})")
    p.add_argument("--cwd", default=".", help="directory to run the command in (default: current)")
    p.add_argument("--timeout", type=float, default=900.0, help="seconds per run before the tree is killed")
    p.add_argument("--json", metavar="FILE", help="write the JSON result to FILE (`-` for stdout)")
    p.add_argument("--quiet", action="store_true", help="no progress lines on stderr")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "measure",
        help="measure cold and warm compile time of a command",
        description="Run CMD (after `--`) in a sandbox with empty Warp/CUDA caches: a cold run, then a warm "
        "re-run, per sample. Records every module build and launch.",
    )
    add_run_options(p, samples=3)
    p.add_argument("--label", default="", help="a name for this measurement (e.g. baseline)")
    p.set_defaults(func=run)


def run(ns: argparse.Namespace) -> int:
    from warp_compile.probe.measure import measure
    from warp_compile.probe.report_text import render_report

    report = measure(
        ns.cmd_argv,
        Path(ns.cwd),
        samples=ns.samples,
        timeout_s=ns.timeout,
        label=ns.label,
        progress=progress_printer(ns.quiet),
    )
    emit(report, render_report(report), ns.json)
    if report.samples and report.failed_samples == report.samples:
        last = report.sample_results[-1]
        tail = last.cold.stderr_tail or (last.warm.stderr_tail if last.warm else "")
        reason = last.failure or "failed"
        sys.stderr.write(f"warp-compile: error: every sample failed ({reason})\n")
        if tail:
            sys.stderr.write(tail.rstrip() + "\n")
        return 1
    return 0
