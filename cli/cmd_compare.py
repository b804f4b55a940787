"""`warp-compile compare`: judge a change by measurement.

    warp-compile compare BEFORE.json AFTER.json [--max-regression PCT] [--acts-through KIND] [--json FILE]
    warp-compile compare --before-cwd A --after-cwd B [--samples N] [--until-decided [--max-samples M]] [--warmup N]
                         [--max-regression PCT] [--acts-through KIND] [--timeout S] [--json FILE] -- CMD...

Exit 0: IMPROVED / INCONCLUSIVE / UNVERIFIED / NO_EFFECT; 1: REGRESSION / INVALID; 2: unusable input (one line on
stderr). With --max-regression PCT: 1 only when the headline regressed beyond its band by more than PCT, or INVALID.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..probe.errors import UsageError
from .args import add_command, add_timeout_quiet
from .io import check_dir, check_json_dest, clip_path, emit

USAGE = """\
%(prog)s BEFORE.json AFTER.json [--max-regression PCT] [--acts-through KIND] [--json FILE]
       %(prog)s --before-cwd A --after-cwd B [--samples N] [--until-decided [--max-samples M]] [--warmup N]
                            [--max-regression PCT] [--acts-through KIND] [--timeout S] [--json FILE] [--quiet]
                            -- CMD..."""

DESCRIPTION = """\
Compare two measurements of the same command: was the same work done (launch structure), and was less or sooner
compiled? Judges the headline clock (compile elapsed; the repeat run's wall time when a warm run compiled; the
CUDA compile clock with --cuda-arch) against its band max(1% of the BEFORE median, 2 x BEFORE raw MAD), shows every
other clock (cold / warm wall, cold module work, header, native, codegen) with its band and delta, and prints
IMPROVED / INCONCLUSIVE / REGRESSION / INVALID / UNVERIFIED / NO_EFFECT with the reason.

Either pass two reports written by `warp-compile measure --json` (judged on clocks corrected for the machine's
drift, measured on the work both reports did identically), or let compare measure two source trees alternately
(A B, B A, ...) after a discarded warm-up, in one run, so drift on a shared machine hits both arms:
  warp-compile compare --before-cwd A --after-cwd B -- python app.py

Exit status: 0 IMPROVED / INCONCLUSIVE / UNVERIFIED / NO_EFFECT, 1 REGRESSION / INVALID, 2 unusable input.
With --max-regression PCT (a CI gate, see docs/ci.md): 1 only when the clock the verdict rests on (the headline,
else the deciding clock that regressed) regressed beyond its band by more than PCT percent (drift-corrected for
saved reports), or the comparison is INVALID; else 0.
"""


def register(subparsers: argparse._SubParsersAction) -> None:
    p = add_command(
        subparsers, "compare",
        "judge a change: same work, less compiled? (two reports, or two trees measured interleaved)",
        DESCRIPTION, usage=USAGE,
    )
    p.add_argument("reports", nargs="*", metavar="REPORT", help="BEFORE.json AFTER.json (from `measure --json`)")
    p.add_argument(
        "--json",
        metavar="FILE",
        help="also write the comparison as JSON ('-': JSON on stdout, text on stderr); its directory must exist",
    )
    p.add_argument(
        "--max-regression", type=float, metavar="PCT",
        help="CI gate: exit 1 only when the clock the verdict rests on regressed beyond its band by more than PCT "
        "percent (or the comparison is INVALID)",
    )
    p.add_argument(
        "--acts-through", choices=("compiled", "scheduling", "unknown"), default="unknown",
        help="what the change can act through: 'compiled' (settings, a fix meant to remove builds: identical work "
        "reads NO_EFFECT), 'scheduling' (preloads, workers) or 'unknown' (default; both judged on time)",
    )
    g = p.add_argument_group("interleaved mode (measure two trees alternately; the command follows `--`)")
    g.add_argument("--before-cwd", metavar="DIR", help="working directory of the BEFORE tree")
    g.add_argument("--after-cwd", metavar="DIR", help="working directory of the AFTER tree")
    g.add_argument(
        "--samples",
        type=int,
        metavar="N",
        help="pairs to measure (default 5); with --until-decided, the minimum number of pairs (default 4)",
    )
    g.add_argument(
        "--until-decided",
        action="store_true",
        help="stop as soon as the verdict cannot change (95%% bootstrap intervals of each clock's median "
        "difference against its band); reports how many pairs it took",
    )
    g.add_argument("--max-samples", type=int, metavar="M", help="most pairs with --until-decided (default 20)")
    g.add_argument(
        "--warmup", type=int, default=1, metavar="N",
        help="discarded samples of each arm before the pairs (default 1)",
    )
    add_timeout_quiet(g, "seconds per process run before its tree is killed (default 900)")
    p.set_defaults(func=run)


def run(ns: argparse.Namespace) -> int:
    from ..probe.compare import apply_gate, compare_reports, interleaved_compare
    from ..probe.models import Report
    from ..probe.render.comparison import render_comparison

    command = list(getattr(ns, "cmd_argv", []) or [])
    gate = ns.max_regression
    if gate is not None and not (0.0 <= gate < 1e6):
        raise UsageError("compare: --max-regression takes a percentage of 0 or more, e.g. 5")
    interleaved = ns.before_cwd is not None or ns.after_cwd is not None
    if interleaved:
        if ns.reports:
            raise UsageError("compare: give either two REPORT files or --before-cwd/--after-cwd, not both")
        if ns.before_cwd is None or ns.after_cwd is None:
            raise UsageError("compare: interleaved mode needs both --before-cwd and --after-cwd")
        if not command:
            raise UsageError("compare: interleaved mode needs the command to measure after `--`")
        before_cwd = check_dir(ns.before_cwd, "compare: --before-cwd")
        after_cwd = check_dir(ns.after_cwd, "compare: --after-cwd")
        if ns.samples is not None and ns.samples < 1:
            raise UsageError("compare: --samples must be at least 1")
        if ns.warmup < 0:
            raise UsageError("compare: --warmup must be 0 or more")
        if ns.max_samples is not None and not ns.until_decided:
            raise UsageError("compare: --max-samples only applies with --until-decided")
        max_samples = 20 if ns.max_samples is None else ns.max_samples
        if max_samples < 1:
            raise UsageError("compare: --max-samples must be at least 1")
        check_json_dest(ns.json)

        def progress(msg: str) -> None:
            if not ns.quiet:
                sys.stderr.write(f"warp-compile compare: {msg}\n")
                sys.stderr.flush()

        result = interleaved_compare(
            command,
            before_cwd,
            after_cwd,
            samples=ns.samples,
            until_decided=ns.until_decided,
            max_samples=max_samples,
            warmup=ns.warmup,
            timeout_s=ns.timeout,
            progress=progress,
            acts_through=ns.acts_through,
        )
        if gate is not None:
            apply_gate(result, gate)
    else:
        if command:
            raise UsageError("compare: a command after `--` needs --before-cwd and --after-cwd")
        if ns.until_decided or ns.samples is not None or ns.max_samples is not None:
            raise UsageError("compare: --samples/--until-decided/--max-samples need --before-cwd and --after-cwd")
        if len(ns.reports) != 2:
            raise UsageError(f"compare: expected two reports (BEFORE.json AFTER.json), got {len(ns.reports)}")
        for r in ns.reports:  # a path the file system cannot even look up (e.g. too long) is one line too
            try:
                Path(r).exists()
            except OSError as exc:
                raise UsageError(f"compare: {clip_path(r)}: {exc.strerror or exc}") from None
        check_json_dest(ns.json, inputs=ns.reports)
        before = Report.load(ns.reports[0])
        after = Report.load(ns.reports[1])
        result = compare_reports(
            before,
            after,
            before_label=ns.reports[0] + (f" [{before.label}]" if before.label else ""),
            after_label=ns.reports[1] + (f" [{after.label}]" if after.label else ""),
            acts_through=ns.acts_through,
            max_regression_pct=gate,
        )

    emit(result, render_comparison(result), ns.json)
    return result.exit_code
