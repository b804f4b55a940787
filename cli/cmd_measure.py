"""`warp-compile measure [--samples N] [--cwd DIR] [--timeout S] [--json FILE] [--label TEXT] -- CMD...`"""

from __future__ import annotations

import argparse
import os
import sys

from ..probe.errors import UsageError
from .io import check_dir, check_json_dest, emit, end_progress, progress_printer, seconds, write_json

USAGE = (
    "%(prog)s [--samples N] [--cwd DIR] [--timeout S] [--json FILE] [--trace FILE] [--label TEXT] [--cuda-arch N]\n"
    "                          [--quiet] -- CMD..."
)


def add_run_options(p: argparse.ArgumentParser, samples: int) -> None:
    p.add_argument(
        "--samples", type=int, default=samples, metavar="N", help=f"cold+warm pairs to run (default {samples})"
    )
    p.add_argument("--cwd", default=".", metavar="DIR", help="directory to run the command in (default: current)")
    p.add_argument(
        "--timeout", type=seconds, default=900.0, metavar="S",
        help="seconds per run before the whole process tree is killed (default 900)",
    )
    p.add_argument(
        "--json", metavar="FILE",
        help="write the JSON report to FILE (`-`: JSON on stdout, text on stderr); its directory must exist",
    )
    p.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    p.add_argument(
        "--cuda-arch", type=cuda_arch, metavar="N",
        help="after the cold run's workload, also build every module it loaded for sm_N through NVRTC (no GPU "
        "needed), at each block_dim its launches and preloads used, timed on its own clock (e.g. 90)",
    )


def cuda_arch(text: str) -> int:
    """A CUDA compute capability as NVRTC takes it: 75, 80, 86, 89, 90, 100, ..."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a CUDA architecture number such as 90, got {text!r}") from None
    if not 50 <= value <= 199:
        raise argparse.ArgumentTypeError(f"expected a CUDA architecture between 50 and 199 (sm_N), got {value}")
    return value


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "measure",
        help="measure cold and warm compile time of a command",
        usage=USAGE,
        description="Run CMD (after `--`, an argv, never a shell string) in a sandbox with empty Warp/CUDA caches: "
        "a cold run, then a warm re-run, per sample. Records every module build and launch.",
        epilog="Exit status: 0 measured, 1 every sample failed, 2 unusable input.",
    )
    add_run_options(p, samples=3)
    p.add_argument("--label", default="", metavar="TEXT", help="a name for this measurement, e.g. baseline "
                   "(default: none)")
    p.add_argument(
        "--trace", metavar="FILE",
        help="also write a Chrome/Perfetto trace of the builds (open it in ui.perfetto.dev or chrome://tracing)",
    )
    p.set_defaults(func=run)


def run(ns: argparse.Namespace) -> int:
    from ..probe.measure import measure
    from ..probe.render.report import render_report

    # everything the run needs is checked before the first sample: a bad --json must not lose minutes of results
    if not ns.cmd_argv:
        raise UsageError("no command given: put the command to measure after `--`, e.g. `-- python -m app`")
    if ns.samples < 1:
        raise UsageError(f"--samples must be at least 1 (got {ns.samples})")
    cwd = check_dir(ns.cwd, "--cwd")
    check_json_dest(ns.json)
    if ns.trace is not None:
        if ns.trace == "-" or not ns.trace.strip():
            raise UsageError("--trace needs a file name")
        check_json_dest(ns.trace)
        if ns.json and ns.json != "-" and os.path.abspath(ns.json) == os.path.abspath(ns.trace):
            raise UsageError("--trace and --json name the same file; give two files")
    try:
        report = measure(
            ns.cmd_argv,
            cwd,
            samples=ns.samples,
            timeout_s=ns.timeout,
            label=ns.label,
            progress=progress_printer(ns.quiet),
            cuda_arch=ns.cuda_arch,
        )
    finally:
        end_progress()
    emit(report, render_report(report), ns.json)
    if ns.trace is not None:
        from ..probe.trace import report_trace

        write_json(report_trace(report), ns.trace)
    if report.all_failed:
        reason, tail = report.last_failure()
        who = report.python_executable or report.interpreter
        if who and who not in reason:
            reason += f"; interpreter {who}"
        sys.stderr.write(f"warp-compile: error: every sample failed ({reason})\n")
        if tail:
            sys.stderr.write(tail.rstrip() + "\n")
        return 1
    return 0
