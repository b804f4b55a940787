"""`warp-compile fix`: apply each finding's edits to a scratch copy, measure them against the original, keep the
ones proven.

    warp-compile fix [--finding CS-n ...] [--write [--unsafe-fixes]] [--pairs N | --until-decided] [--json FILE]
                     [--diff] -- CMD...

Exit 0 when the fixes were judged (whatever the verdicts), 1 when the command failed, 2 on bad input.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from ..probe.errors import UsageError
from .args import add_command, add_timeout_quiet
from .cmd_measure import cuda_arch
from .io import check_dir, check_json_dest, clip_path, emit, progress_printer

USAGE = """\
%(prog)s [--finding CS-n ...] [--write [--unsafe-fixes]] [--pairs N | --until-decided [--max-pairs M]]
                        [--diagnosis FILE] [--cuda-arch N] [--cwd DIR] [--source DIR] [--timeout S] [--json FILE]
                        [--diff] [--quiet] -- CMD..."""

DESCRIPTION = """\
Diagnose CMD (after `--`), or read a diagnosis saved by `diagnose --json`, then for every finding with an edit:
copy the project to a private scratch directory, apply the edit there, and measure the copies interleaved against
one shared copy of the original (rounds of original, fix 1, fix 2, ..., each fix stopped once its verdict is
decided), then the fixes that improved together. Each copy must behave like the original: the same printed output
(numbers within a stated tolerance), the same kernel launches, and the must-keep invocations a finding names
(e.g. a --rebuild flag) printing the same. Without --write nothing in the project changes. With --write, the
fixes proven IMPROVED with behaviour kept (the combination when it improved, else the best one) are written into
the project, all or nothing, after checking the files still hold what was measured; the diff written is printed.
--write writes only fixes rated automatic; --unsafe-fixes also writes those rated review (what to check is
printed with each); a fix left out is named, with why.

Exit status: 0 judged, 1 the command failed, 2 unusable input.
"""


def register(sub: argparse._SubParsersAction) -> None:
    p = add_command(sub, "fix", "apply each finding's fix to a copy, measure and check it; --write the proven ones",
                    DESCRIPTION, usage=USAGE)
    p.add_argument("--finding", action="append", default=[], metavar="CS-n",
                   help="only this finding (repeatable; CS-n#k picks one of several findings of a mechanism)")
    p.add_argument("--write", action="store_true",
                   help="write the fixes proven IMPROVED with behaviour kept and rated automatic into the project "
                   "(default: dry run)")
    p.add_argument("--unsafe-fixes", action="store_true",
                   help="also write fixes rated review (ruff's convention; manual ones have no edit and never are)")
    p.add_argument("--pairs", type=int, metavar="N", help="exactly N samples per candidate instead of stopping when "
                   "decided")
    p.add_argument("--until-decided", action="store_true",
                   help="stop each candidate once its verdict cannot change (the default)")
    p.add_argument("--min-pairs", type=int, default=2, metavar="N", help="with --until-decided: at least N (default 2)")
    p.add_argument("--max-pairs", type=int, default=6, metavar="M", help="with --until-decided: at most M (default 6)")
    p.add_argument("--cuda-arch", type=cuda_arch, metavar="N",
                   help="also replay every module for sm_N through NVRTC in the diagnosis and every measured sample, "
                   "so a CUDA-only fix (CS-5, CS-7) is judged on the CUDA compile clock without a GPU")
    p.add_argument("--diagnosis", metavar="FILE", help="a diagnosis saved by `diagnose --json` instead of diagnosing")
    p.add_argument("--cwd", metavar="DIR", help="directory to run the command in (default: current)")
    p.add_argument("--source", metavar="DIR", help="the project to copy and scan (default: --cwd)")
    p.add_argument("--json", metavar="FILE", help="write the result as JSON ('-': stdout); its directory must exist")
    p.add_argument("--diff", action="store_true", help="print only the diff (what was written with --write, else "
                   "the proven fixes' diff)")
    add_timeout_quiet(p, "seconds per run before its process tree is killed (default 900)")
    p.set_defaults(func=run)


def _saved(path: str):  # type: ignore[no-untyped-def]
    from pydantic import ValidationError

    from ..probe.models.diagnosis import Diagnosis

    try:
        return Diagnosis.model_validate_json(Path(path).read_bytes())
    except OSError as exc:
        raise UsageError(f"fix: --diagnosis {clip_path(path)}: {exc.strerror or exc}") from None
    except (ValidationError, ValueError):
        what = "is not a diagnosis written by `diagnose --json`"
        raise UsageError(f"fix: --diagnosis {clip_path(path)} {what}") from None


def options_from(ns: argparse.Namespace):  # type: ignore[no-untyped-def]
    from ..probe.fix.engine import FixOptions

    if ns.pairs is not None and ns.until_decided:
        raise UsageError("fix: give --pairs N or --until-decided, not both")
    for flag, value in (("--pairs", ns.pairs), ("--min-pairs", ns.min_pairs), ("--max-pairs", ns.max_pairs)):
        if value is not None and value < 1:
            raise UsageError(f"fix: {flag} must be at least 1")
    if ns.max_pairs < ns.min_pairs:
        raise UsageError(f"fix: --max-pairs {ns.max_pairs} is below --min-pairs {ns.min_pairs}")
    return FixOptions(wanted=list(ns.finding), write=ns.write, unsafe_fixes=ns.unsafe_fixes, rounds=ns.pairs,
                      until_decided=ns.pairs is None, min_rounds=ns.min_pairs, max_rounds=ns.max_pairs,
                      timeout_s=ns.timeout)


def run(ns: argparse.Namespace) -> int:
    from ..probe.fix.engine import run_fix
    from ..probe.fix.policy import to_write
    from ..probe.measure import check_inputs
    from ..probe.render.fix import render_fix

    options = options_from(ns)
    if not ns.cmd_argv:
        raise UsageError("fix: give the command to run after `--` (e.g. `-- python -m app`)")
    cwd = check_inputs(ns.cmd_argv, check_dir(ns.cwd or ".", "--cwd"), 1, ns.timeout)
    source = check_dir(ns.source, "fix: --source") if ns.source else None
    check_json_dest(ns.json, inputs=[ns.diagnosis] if ns.diagnosis else [])
    diagnosis = _saved(ns.diagnosis) if ns.diagnosis else None
    result, _ = run_fix(ns.cmd_argv, cwd, options, diagnosis=diagnosis, source=source,
                        progress=progress_printer(ns.quiet), cuda_arch=ns.cuda_arch)
    if ns.diff:
        if result.write:
            text = result.written_diff
        else:
            from ..probe.fix.edits import unified_diff

            text = unified_diff(Path(result.source_root), to_write(result, options.unsafe_fixes)[1])
        emit(result, text or "(no proven fix: empty diff)", ns.json)
    else:
        emit(result, render_fix(result), ns.json)
    return result.exit_code
