"""`warp-compile try`: measure a fix before editing any code.

    warp-compile try --set KEY=VALUE [--set ...] [--pairs N | --samples N] [--until-decided] [--json FILE] -- CMD...

Exit 0: IMPROVED / INCONCLUSIVE / UNVERIFIED / NO_EFFECT; 1: REGRESSION / INVALID; 2: unusable input.
"""

from __future__ import annotations

import argparse

from ..probe.errors import UsageError
from .args import add_command
from .io import check_dir, check_json_dest, emit, progress_printer, seconds

USAGE = """\
%(prog)s --set KEY=VALUE [--set KEY=VALUE ...] [--pairs N | --samples N] [--until-decided [--max-pairs M]]
                        [--cwd DIR] [--timeout S] [--json FILE] [--quiet] -- CMD...
       %(prog)s --list"""


def _description() -> str:
    from ..probe.experiment import SETTINGS

    rows = "\n".join(f"  {s.key:<24} {s.mechanism:<6} {s.what}" for s in SETTINGS.values())
    return f"""\
Run CMD as it is and with Warp settings applied inside the measured process at `import warp` (before the
application or any library it imports creates a kernel module), alternately (A B, B A, ...), and compare the two:
IMPROVED / INCONCLUSIVE / REGRESSION / INVALID / UNVERIFIED, as `compare` judges, or NO_EFFECT when both arms
built identical work (a setting that changes nothing Warp compiles; worker-thread settings keep their timing
verdict). Nothing in the project is written; the settings exist only in the measured processes. When a setting
wins, the output says which lines make it permanent.

Settings (KEY, the mechanism it tests, what it changes):
{rows}

Exit status: 0 IMPROVED / INCONCLUSIVE / UNVERIFIED / NO_EFFECT, 1 REGRESSION / INVALID, 2 unusable input.
"""


def register(sub: argparse._SubParsersAction) -> None:
    p = add_command(
        sub, "try",
        "measure the effect of Warp settings (e.g. enable_backward=False) without editing code",
        _description(), usage=USAGE,
    )
    p.add_argument("--set", dest="settings", action="append", default=[], metavar="KEY=VALUE",
                   help="a Warp setting for the experiment arm (repeatable)")
    p.add_argument("--list", action="store_true", help="list the settings an experiment can change and exit")
    p.add_argument("--pairs", type=int, metavar="N",
                   help="interleaved pairs (default 4; with --until-decided the minimum)")
    p.add_argument("--samples", type=int, metavar="N",
                   help="measure each arm N times in turn instead of interleaving")
    p.add_argument("--until-decided", action="store_true", help="stop once the verdict cannot change")
    p.add_argument(
        "--max-pairs", type=int, default=20, metavar="M", help="most pairs with --until-decided (default 20)"
    )
    p.add_argument("--cwd", metavar="DIR", help="directory to run the command in (default: current)")
    p.add_argument("--timeout", type=seconds, default=900.0, metavar="S", help="seconds per run (default 900)")
    p.add_argument("--json", metavar="FILE", help="write the result as JSON ('-': stdout); its directory must exist")
    p.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    p.set_defaults(func=run)


def run(ns: argparse.Namespace) -> int:
    from ..probe.experiment import SETTINGS, parse_settings, run_try
    from ..probe.measure import check_inputs
    from ..probe.render.experiment import render_try

    if ns.list:
        rows = [{"key": s.key, "mechanism": s.mechanism, "what": s.what} for s in SETTINGS.values()]
        emit(rows, "\n".join(f"{r['key']:<24} {r['mechanism']:<6} {r['what']}" for r in rows), ns.json)
        return 0
    settings = parse_settings(ns.settings)
    if ns.pairs is not None and ns.samples is not None:
        raise UsageError("try: give --pairs or --samples, not both")
    if ns.samples is not None and ns.until_decided:
        raise UsageError("try: --until-decided needs interleaved pairs, not --samples")
    for flag, value in (("--pairs", ns.pairs), ("--samples", ns.samples), ("--max-pairs", ns.max_pairs)):
        if value is not None and value < 1:
            raise UsageError(f"try: {flag} must be at least 1")
    if not ns.cmd_argv:
        raise UsageError("try: give the command to measure after `--` (e.g. `-- python -m app`)")
    cwd = check_inputs(ns.cmd_argv, check_dir(ns.cwd or ".", "--cwd"), ns.samples or 1, ns.timeout)
    check_json_dest(ns.json)
    result = run_try(
        ns.cmd_argv, cwd, settings,
        pairs=None if ns.samples is not None else (ns.pairs or 4),
        samples=ns.samples, until_decided=ns.until_decided, max_pairs=ns.max_pairs,
        timeout_s=ns.timeout, progress=progress_printer(ns.quiet),
    )
    emit(result, render_try(result), ns.json)
    return result.exit_code
