"""`warp-compile eval [--case ID ...] [--json FILE] [--list] [-- AGENT_CMD...]`

Without an agent command: diagnose every bundled fixture and score it against its expected diagnosis.
With one (after `--`): copy each fixture's project to a temp dir, run the agent there (the case prompt in
$WARP_COMPILE_PROMPT, the copy as cwd), then measure the original and the agent's copy and compare them, and
score the diagnosis the agent left in `warp-compile-diagnosis.json` (if any).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from warp_compile.io import emit, progress_printer
from warp_compile.probe.errors import UsageError


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("eval", help="score diagnoses on the bundled fixture projects (or run an agent over them)")
    p.add_argument("--case", action="append", default=[], help="case id (repeatable; default: all)")
    p.add_argument("--json", metavar="FILE", help="write the scorecard as JSON (`-` for stdout)")
    p.add_argument("--list", action="store_true", help="list the cases and exit")
    p.add_argument("--samples", type=int, default=1, help="samples per measurement (default 1)")
    p.add_argument("--timeout", type=float, default=900.0, help="seconds per run (and for the agent)")
    p.add_argument("--quiet", action="store_true")
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
            raise UsageError(f"unknown case {', '.join(unknown)}; known: {', '.join(sorted(known))}")
        cases = [c for c in cases if c.id in ns.case]
    return cases


def run(ns: argparse.Namespace) -> int:
    from warp_compile.evals.scorer import CaseScore, render_text, summarize

    cases = _select(ns)
    if ns.list:
        for c in cases:
            print(f"{c.id:<22} {','.join(c.expected.mechanisms) or '-':<8} {c.title}")
        return 0
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


def _self_case(case, ns, progress):  # type: ignore[no-untyped-def]
    from warp_compile.evals.scorer import score_case
    from warp_compile.probe.diagnose import diagnose_command

    _, diagnosis = diagnose_command(
        _bind_python(case.command), case.project, samples=ns.samples, progress=progress, timeout_s=ns.timeout
    )
    return score_case(case, diagnosis)


def _agent_case(case, ns, progress):  # type: ignore[no-untyped-def]
    """Run the agent on a private copy; judge its change by measurement and its diagnosis by the scorer."""
    from warp_compile.evals.scorer import CaseScore, score_case
    from warp_compile.probe.compare import compare
    from warp_compile.probe.diagnosis_models import Diagnosis
    from warp_compile.probe.measure import measure

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
        cmd = _bind_python(case.command)
        progress(f"case {case.id}: measure before/after")
        before = measure(cmd, case.project, samples=ns.samples, timeout_s=ns.timeout)
        after = measure(cmd, copy, samples=ns.samples, timeout_s=ns.timeout)
        verdict = compare(before, after)
        score.verdict = verdict.verdict
        # the change must keep the workload and must not make compiling worse
        score.passed = score.passed and verdict.verdict not in ("INVALID", "REGRESSION")
        return score
    finally:
        shutil.rmtree(work, ignore_errors=True)
