"""The built-in agents that bracket a scorecard: the reference answer, doing nothing, and this project's diagnose.

builtin:oracle  writes the expected mechanisms at the expected locations and replaces its copy with fixed/
builtin:null    answers "nothing to fix" and edits nothing (the floor, and the A/A control of the judge)
builtin:self    runs `warp-compile diagnose` on its copy and writes that diagnosis; no edits (also builtin:diagnose)
builtin:fix     runs `warp-compile fix --write --unsafe-fixes` on its copy: the diagnosis is its answer, and the fixes
                the engine proved (IMPROVED against the original with behaviour kept), review-rated ones included, are
                its edits (an agent that accepts what the tool rates review, as `--write` did before issue 22)
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable

from .harness import Agent, AgentContext, bind_python
from .models import Answer, AnswerFinding, AnswerLocation


def oracle(ctx: AgentContext) -> None:
    expected = ctx.case.expected_for(ctx.warp_version)
    findings = []
    for mech in expected.mechanisms:
        locs = [AnswerLocation(file=loc.file, line=loc.line) for loc in expected.locations if loc.mechanism == mech]
        findings.append(AnswerFinding(mechanism=mech, locations=locs))
    ctx.answer.write_text(Answer(findings=findings, summary="reference answer").model_dump_json(), encoding="utf-8")
    fixed = {k[len("fixed/"):]: v for k, v in ctx.files.items() if k.startswith("fixed/")}
    if not fixed:
        return
    shutil.rmtree(ctx.copy)
    for rel, data in fixed.items():
        p = ctx.copy / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data)


def null(ctx: AgentContext) -> None:
    """Answers "nothing to fix" and changes nothing: the floor every useful agent must beat."""
    ctx.answer.write_text(Answer(summary="nothing to fix").model_dump_json(), encoding="utf-8")


def self_diagnose(ctx: AgentContext) -> None:
    from ..probe.diagnose import diagnose_command

    _, diagnosis = diagnose_command(
        bind_python(ctx.case.command, ctx.python), ctx.copy, samples=1, progress=None, timeout_s=ctx.timeout_s,
        cuda_arch=ctx.case.cuda_arch,
    )
    ctx.answer.write_text(diagnosis.model_dump_json(), encoding="utf-8")
    # what it cost, in the shape fix.json counts it: each measured sample is one cold and one warm run
    costs = {"costs": {"program_runs": 2 * diagnosis.samples}}
    (ctx.answer.parent / "costs.json").write_text(json.dumps(costs), encoding="utf-8")


def fix_write(ctx: AgentContext) -> None:
    """`warp-compile fix --write --unsafe-fixes` in the copy, like a user who accepts the review fixes would run it;
    its diagnosis is the answer."""
    from ..probe.fix.engine import FixOptions, run_fix

    options = FixOptions(write=True, unsafe_fixes=True, timeout_s=ctx.timeout_s)
    result, diagnosis = run_fix(bind_python(ctx.case.command, ctx.python), ctx.copy, options, progress=ctx.progress,
                                cuda_arch=ctx.case.cuda_arch)
    ctx.answer.write_text(diagnosis.model_dump_json(), encoding="utf-8")
    (ctx.answer.parent / "fix.json").write_text(result.model_dump_json(indent=1), encoding="utf-8")


BUILTINS: dict[str, Callable[[AgentContext], None]] = {
    "builtin:oracle": oracle,
    "builtin:null": null,
    "builtin:self": self_diagnose,
    "builtin:diagnose": self_diagnose,  # the same agent under the name the history scorecard uses
    "builtin:fix": fix_write,
}


def builtin_agent(name: str) -> Agent | None:
    fn = BUILTINS.get(name)
    return Agent(name=name, builtin=fn) if fn else None
