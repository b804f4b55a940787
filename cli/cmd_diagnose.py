"""`warp-compile diagnose`: why does this command compile, where in the code, and what would the fix save?

    warp-compile diagnose [--samples N] [--cwd DIR] [--source DIR] [--timeout S] [--label TEXT] [--json FILE] -- CMD...
    warp-compile diagnose --report REPORT.json [--source DIR] [--json FILE]

Exit 0 when a diagnosis was made (findings are not an error), 1 when every measured sample failed, 2 on bad input.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from ..probe.errors import UsageError
from .args import add_command, all_failed_exit
from .cmd_measure import cuda_arch
from .io import check_dir, check_json_dest, clip_path, emit, progress_printer, seconds

USAGE = """\
%(prog)s [--samples N] [--cwd DIR] [--source DIR] [--timeout S] [--label TEXT] [--rebuild-limit S]
                             [--cuda-arch N] [--json FILE] [--diff] [--verify] [--quiet] -- CMD...
       %(prog)s --report REPORT.json [--source DIR] [--json FILE] [--diff] [--quiet]"""

DESCRIPTION = """\
Measure CMD (after `--`) cold and warm in a sandbox, scan the project's sources (never imported), and name the
mechanisms that make it compile: each finding says where in the code, what to change, and what the measured
builds say the change would save. With --report, diagnose a measurement saved by `warp-compile measure --json`
instead of measuring again.

Exit status: 0 diagnosed (with or without findings), 1 every sample failed, 2 unusable input.
"""


def register(sub: argparse._SubParsersAction) -> None:
    p = add_command(
        sub, "diagnose",
        "name why a command compiles (CS-1..CS-13) or repeats kernel work per call (WC-1), where, the fix and its "
        "measured value",
        DESCRIPTION, usage=USAGE,
    )
    p.add_argument("--report", metavar="REPORT.json", help="diagnose a saved measurement instead of running CMD")
    p.add_argument(
        "--source",
        metavar="DIR",
        help="project sources to scan (default: --cwd; with --report, the report's cwd when it still exists)",
    )
    p.add_argument(
        "--json",
        metavar="FILE",
        help="also write the diagnosis as JSON ('-': JSON on stdout, text on stderr); its directory must exist",
    )
    p.add_argument(
        "--diff", action="store_true",
        help="print the findings' edits as one unified diff (nothing is written; `warp-compile fix` measures them)",
    )
    g = p.add_argument_group("measuring (the command follows `--`)")
    g.add_argument("--samples", type=int, metavar="N", help="cold+warm pairs to measure (default 1)")
    g.add_argument("--cwd", metavar="DIR", help="directory to run the command in (default: current)")
    g.add_argument(
        "--timeout", type=seconds, metavar="S", help="seconds per run before the tree is killed (default 900)"
    )
    g.add_argument("--label", metavar="TEXT", help="a name for the measurement (default: none)")
    g.add_argument(
        "--rebuild-limit", type=_limit, metavar="S",
        help="CPU seconds the first cold run may spend, after the app, rebuilding its modules with enable_backward "
        "off and (with few modules) the precompiled header toggled, to price CS-10 / CS-12 by measurement (default "
        "60; 0: no rebuilds, the modelled estimates stay); what did not fit is named in the diagnosis",
    )
    g.add_argument(
        "--cuda-arch", type=cuda_arch, metavar="N",
        help="also build the cold run's modules for sm_N through NVRTC after it ran (no GPU needed), so the CUDA "
        "mechanisms (CS-5, CS-7, CS-13) are judged on measured CUDA builds",
    )
    v = p.add_argument_group("verifying (runs the command again, with and without each finding's experiment)")
    v.add_argument(
        "--verify", action="store_true",
        help="apply each finding's edit (or setting) to a scratch copy and measure it against the original "
        "(`warp-compile fix` without writing): the measured saving goes next to the estimate, a fix with no effect "
        "says so, one that regresses or changes behaviour is withdrawn with the evidence",
    )
    v.add_argument(
        "--verify-pairs", type=int, metavar="N",
        help="exactly N samples per finding (default: until its interval decides and an improving fix's saving is "
        "known to ±25%% of itself, 2 to --verify-max-pairs)",
    )
    v.add_argument(
        "--verify-max-pairs", type=int, metavar="M", default=10,
        help="with the default until-decided rule: stop a finding after M pairs (default 10), undecided or with its "
        "saving known less precisely than asked; each finding says which happened",
    )
    p.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    p.set_defaults(func=run)


def _limit(text: str) -> float:
    """argparse type of --rebuild-limit: seconds, 0 or more (0 turns the rebuilds off)."""
    import math

    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected seconds (a number), got {text[:40]!r}") from None
    if not math.isfinite(value) or value < 0:
        raise argparse.ArgumentTypeError(f"must be a finite number of seconds, 0 or more, got {text[:40]!r}")
    return value


def _source_dir(value: str) -> Path:
    return check_dir(value, "diagnose: --source")


def _from_report(ns: argparse.Namespace):  # type: ignore[no-untyped-def]
    from ..probe.diagnose import diagnose_sources
    from ..probe.models import Report

    # --label names a new measurement; a saved report keeps the label it was measured with
    opts = (
        ("--samples", ns.samples), ("--cwd", ns.cwd), ("--timeout", ns.timeout), ("--label", ns.label),
        ("--cuda-arch", ns.cuda_arch), ("--rebuild-limit", ns.rebuild_limit),
    )
    given = [flag for flag, v in opts if v is not None]
    if given or ns.cmd_argv:
        what = ", ".join(given + (["a command after `--`"] if ns.cmd_argv else []))
        raise UsageError(f"diagnose: --report reads a saved measurement; {what} only apply when measuring")
    try:
        Path(ns.report).exists()
    except OSError as exc:  # a path the file system cannot even look up (e.g. too long)
        raise UsageError(f"diagnose: --report {clip_path(ns.report)}: {exc.strerror or exc}") from None
    source = _source_dir(ns.source) if ns.source else None
    check_json_dest(ns.json, inputs=[ns.report])
    report = Report.load(ns.report)
    if source is None and report.cwd and Path(report.cwd).is_dir():
        source = Path(report.cwd)
    return report, diagnose_sources(report, source, progress_printer(ns.quiet))


def _from_command(ns: argparse.Namespace):  # type: ignore[no-untyped-def]
    """(report, diagnosis, sample): the sample only when --verify may reuse it as the baseline's first."""
    from ..probe.diagnose import diagnose_command
    from ..probe.measure import check_inputs

    if not ns.cmd_argv:
        raise UsageError("diagnose: give the command to measure after `--` (e.g. `-- python -m app`), or --report FILE")
    samples = 1 if ns.samples is None else ns.samples
    timeout = 900.0 if ns.timeout is None else ns.timeout
    cwd = check_inputs(ns.cmd_argv, check_dir(ns.cwd or ".", "--cwd"), samples, timeout)
    source = _source_dir(ns.source) if ns.source else None
    check_json_dest(ns.json)
    from ..probe.pricing import DEFAULT_LIMIT_S

    limit = DEFAULT_LIMIT_S if ns.rebuild_limit is None else ns.rebuild_limit
    if ns.verify and samples == 1:
        from ..probe.fix.engine import diagnose_with_sample, real_engine

        return diagnose_with_sample(ns.cmd_argv, cwd, source, timeout, progress_printer(ns.quiet), real_engine(None),
                                    ns.cuda_arch, rebuild_limit_s=limit)
    report, diagnosis = diagnose_command(
        ns.cmd_argv,
        cwd,
        samples=samples,
        source=source,
        progress=progress_printer(ns.quiet),
        timeout_s=timeout,
        label=ns.label or "",
        cuda_arch=ns.cuda_arch,
        rebuild_limit_s=limit,
    )
    return report, diagnosis, None


def _verify(ns: argparse.Namespace, report, diagnosis, sample=None):  # type: ignore[no-untyped-def]
    from ..probe.fix.verify import verify

    cwd = Path(report.cwd)
    if not report.command or not cwd.is_dir():
        raise UsageError(f"diagnose: --verify reruns the measured command, but its directory {clip_path(report.cwd)} "
                         "is gone")
    timeout = 900.0 if ns.timeout is None else ns.timeout
    return verify(diagnosis, list(report.command), cwd, pairs=ns.verify_pairs, max_pairs=ns.verify_max_pairs,
                  timeout_s=timeout,
                  progress=progress_printer(ns.quiet), seed=sample, cuda_arch=ns.cuda_arch)


def run(ns: argparse.Namespace) -> int:
    from ..probe.render.diagnosis import render_text

    if ns.verify_pairs is not None and ns.verify_pairs < 1:
        raise UsageError("diagnose: --verify-pairs must be at least 1")
    if ns.verify_max_pairs < 2:
        raise UsageError("diagnose: --verify-max-pairs must be at least 2")
    if ns.report:
        (report, diagnosis), sample = _from_report(ns), None
    else:
        report, diagnosis, sample = _from_command(ns)
    if ns.verify and not report.all_failed:
        diagnosis = _verify(ns, report, diagnosis, sample)
    if ns.diff:
        emit(diagnosis, diff_text(diagnosis), ns.json)
    else:
        emit(diagnosis, render_text(diagnosis), ns.json)
    return all_failed_exit(report)


def diff_text(diagnosis) -> str:  # type: ignore[no-untyped-def]
    """Every finding's edits as one unified diff against the project's files (an edit that no longer applies is
    named instead of shown), then each finding without an edit with why it has none."""
    from ..probe.fix.edits import EditConflict, SourceView, unified_diff
    from ..probe.fix.policy import finding_keys, no_edit_reason

    src = SourceView(diagnosis.source_root) if diagnosis.source_root else None
    chunks = []
    without = []
    for key, f in zip(finding_keys(diagnosis.findings), diagnosis.findings, strict=True):
        if not f.edits:
            without.append(f"# {key} {f.title}: {no_edit_reason(f)}\n")
            continue
        try:
            body = unified_diff(Path(diagnosis.source_root or "."), f.edits, src=src)
        except (EditConflict, OSError, UnicodeDecodeError) as exc:
            body = f"# the edits no longer apply: {exc}\n"
        chunks.append(f"# {f.mechanism} {f.title} [{f.applicability or 'unrated'}]\n{body}")
    if not diagnosis.findings:
        return "# no findings: nothing to edit\n"
    if without:
        head = "# no finding has an edit:\n" if not chunks else "# findings without an edit:\n"
        chunks.append(head + "".join(without))
    return "".join(chunks)
