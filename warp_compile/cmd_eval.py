"""`warp-compile eval [--case ID ...] [--json FILE] [--list] [--pairs N] [-- AGENT_CMD...]`

Without an agent command: diagnose every bundled fixture and score it against its expected diagnosis.
With one (after `--`): copy each fixture's project to a temp dir, run the agent there (the case prompt in
$WARP_COMPILE_PROMPT, the copy as cwd), then measure the original and the agent's copy interleaved (A B, B A, ...)
and compare them, and score the diagnosis the agent left in `warp-compile-diagnosis.json` (if any).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from warp_compile.io import check_json_dest, clip, clip_path, emit, progress_printer, seconds
from warp_compile.probe.errors import UsageError

USAGE = (
    "%(prog)s [--case ID ...] [--list] [--json FILE] [--samples N] [--pairs N] [--timeout S] [--quiet]\n"
    "                         [-- AGENT_CMD...]"
)

DESCRIPTION = """\
Score diagnoses on the bundled fixture projects (evals/fixtures/<case>/): every expected mechanism named, none of
the absent ones, each expected location pointed at (same file, line within 2).

Without an agent command, warp-compile's own `diagnose` is scored on each case. With AGENT_CMD (an argv after
`--`), each case's project is copied to a temp dir and the agent runs there (the request in $WARP_COMPILE_PROMPT,
the case id in $WARP_COMPILE_CASE); it passes when the diagnosis it leaves in warp-compile-diagnosis.json scores
and its change, measured against the original interleaved (--pairs), is not INVALID or a REGRESSION.
A relative AGENT_CMD path is taken from the current directory.

Exit status: 0 every case passed, 1 some case failed, 2 unusable input.
"""


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "eval",
        help="score diagnoses on the bundled fixture projects (or run an agent over them)",
        usage=USAGE,
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--case", action="append", default=[], metavar="ID", help="case id (repeatable; default: all)")
    p.add_argument(
        "--json", metavar="FILE",
        help="write the scorecard (with --list: the cases) as JSON (`-` for stdout); its directory must exist",
    )
    p.add_argument("--list", action="store_true", help="list the cases (id, mechanisms, title) and exit")
    p.add_argument("--samples", type=int, default=1, metavar="N", help="samples per diagnosis (default 1)")
    p.add_argument(
        "--pairs",
        type=int,
        default=4,
        metavar="N",
        help="with an agent: interleaved before/after pairs that judge its change (default 4)",
    )
    p.add_argument(
        "--timeout", type=seconds, default=900.0, metavar="S",
        help="seconds per run, and for each agent run (default 900)",
    )
    p.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    p.set_defaults(func=run)


def _bind_python(command: list[str]) -> list[str]:
    """Fixture commands say `python`: run them with this interpreter, which has warp installed."""
    return [sys.executable if c == "python" else c for c in command]


def _select(ns: argparse.Namespace):  # type: ignore[no-untyped-def]
    from warp_compile.evals.scorer import load_cases

    cases = load_cases()
    if ns.case:
        known = {c.id for c in cases}
        unknown = [c for c in ns.case if c not in known]
        if unknown:
            raise UsageError(f"unknown case {', '.join(clip(c) for c in unknown[:3])}"
                             f"{' ...' if len(unknown) > 3 else ''}; known: {', '.join(sorted(known))}")
        cases = [c for c in cases if c.id in ns.case]
    return cases


def run(ns: argparse.Namespace) -> int:
    from warp_compile.evals.scorer import CaseScore, render_text, summarize

    if ns.samples < 1 or ns.pairs < 1:
        raise UsageError("eval: --samples and --pairs must be at least 1")
    cases = _select(ns)
    check_json_dest(ns.json)
    if ns.list:
        rows = [{"id": c.id, "mechanisms": list(c.expected.mechanisms), "title": c.title} for c in cases]
        text = "\n".join(f"{r['id']:<22} {','.join(r['mechanisms']) or '-':<8} {r['title']}" for r in rows)
        emit(rows, text, ns.json)
        return 0
    if ns.cmd_argv:
        ns.cmd_argv = _check_agent(ns.cmd_argv)
    progress = progress_printer(ns.quiet)
    scores: list[CaseScore] = []
    for case in cases:
        progress(f"case {case.id}")
        try:
            if ns.cmd_argv:
                scores.append(_agent_case(case, ns, progress))
            else:
                scores.append(_self_case(case, ns, progress))
        except UsageError as exc:
            scores.append(CaseScore(case=case.id, passed=False, error=str(exc)))
    card = summarize(scores)
    emit(card, render_text(card), ns.json)
    return 0 if card.passed == card.total else 1


def _check_agent(command: list[str]) -> list[str]:
    """The agent must be runnable before any case starts (it runs in each case's copy, so a relative path with a
    slash is made absolute against the current directory); a missing one is bad input, not a failed case."""
    exe = command[0]
    if not exe:
        raise UsageError("eval: empty agent command after `--`")
    if os.sep in exe:
        path = Path(exe).expanduser()
        try:
            if not path.exists():
                raise UsageError(f"eval: agent command not found: {clip_path(exe)}")
            if path.is_dir() or not os.access(path, os.X_OK):
                raise UsageError(f"eval: agent command is not executable: {clip_path(exe)}")
        except OSError as exc:
            raise UsageError(f"eval: agent command {clip_path(exe)}: {exc.strerror or exc}") from None
        return [str(path.absolute()), *command[1:]]
    if shutil.which(exe) is None:
        raise UsageError(f"eval: agent command not found on PATH: {clip_path(exe)}")
    return list(command)


def _self_case(case, ns, progress):  # type: ignore[no-untyped-def]
    from warp_compile.evals.scorer import score_case
    from warp_compile.probe.diagnose import diagnose_command

    _, diagnosis = diagnose_command(
        _bind_python(case.command), case.project, samples=ns.samples, progress=progress, timeout_s=ns.timeout,
        cuda_arch=case.cuda_arch,
    )
    return score_case(case, diagnosis)


def _agent_case(case, ns, progress):  # type: ignore[no-untyped-def]
    """Run the agent on a private copy; judge its change by measurement and its diagnosis by the scorer."""
    from warp_compile.evals.scorer import CaseScore, score_case
    from warp_compile.probe.compare import interleaved_compare
    from warp_compile.probe.diagnosis_models import Diagnosis

    work = Path(tempfile.mkdtemp(prefix="warp-compile-eval-"))
    try:
        copy = work / "project"
        shutil.copytree(case.project, copy)
        env = dict(os.environ, WARP_COMPILE_PROMPT=case.prompt, WARP_COMPILE_CASE=case.id)
        progress(f"case {case.id}: agent")
        try:
            subprocess.run(ns.cmd_argv, cwd=copy, env=env, timeout=ns.timeout, check=False,
                           stdin=subprocess.DEVNULL)
        except (FileNotFoundError, PermissionError) as exc:
            raise UsageError(f"cannot run the agent command: {exc}") from exc
        except subprocess.TimeoutExpired:
            return CaseScore(case=case.id, passed=False, error="agent timed out")
        left = copy / "warp-compile-diagnosis.json"
        score = CaseScore(case=case.id, passed=False)
        if left.is_file():
            try:
                score = score_case(case, Diagnosis.model_validate_json(left.read_text()))
            except ValueError as exc:
                score.error = f"unreadable diagnosis left by the agent: {str(exc).splitlines()[0]}"
            left.unlink()
        else:
            score.error = f"the agent left no diagnosis ({left.name}, a Diagnosis JSON as `diagnose --json` writes)"
        progress(f"case {case.id}: measure before/after, {ns.pairs} interleaved pairs")
        # interleaved, so drift on a shared machine hits both arms; several pairs, so each clock has a MAD and a
        # band (one sample each way has neither, and a 1% band then calls PCH jitter a regression)
        verdict = interleaved_compare(
            _bind_python(case.command), case.project, copy, samples=ns.pairs, timeout_s=ns.timeout, progress=progress
        )
        score.verdict = verdict.verdict
        score.verdict_reason = verdict.reason
        # the change must keep the workload and must not make compiling worse
        score.passed = score.passed and verdict.verdict not in ("INVALID", "REGRESSION")
        return score
    finally:
        shutil.rmtree(work, ignore_errors=True)
