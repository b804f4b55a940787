"""Run one agent on one case and judge it: private copies, the agent run, the answer, the measured fix.

Fairness: both arms of the measurement are written the same way (file by file from memory, no bytecode, the
same path depth and length: work/judge/a/project and work/judge/b/project), the baseline from the fixture files
as hashed in MANIFEST.json (read before the agent starts, so the agent cannot reach the baseline), never from the
installed fixture folder, whose pip-written bytecode made identical trees compare as different.
"""

from __future__ import annotations

import functools
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..probe.errors import UsageError
from ..probe.fix.behaviour import ArmRuns, app_lines, entry_bypassed, first_difference, judge, recording
from . import manifest
from .contract import ENV_ANSWER, ENV_CASE, ENV_PROMPT, agent_prompt
from .models import AgentRun, Answer, Case, CaseResult, DiagnosisScore, FixScore, MustKeep
from .scorer import case_score, fix_credit, score_diagnosis

Progress = Callable[[str], None]


@dataclass
class AgentContext:
    """What a built-in agent gets; an external agent gets the same through its cwd and environment."""

    case: Case
    copy: Path
    answer: Path
    prompt: str
    timeout_s: float
    files: dict[str, bytes]  # the case's files as shipped (built-in agents only: the oracle reads fixed/ here)
    warp_version: str
    progress: Progress | None = None
    python: str | None = None  # the interpreter `python` means in the case's command (a history case's release)


@dataclass
class Agent:
    name: str
    argv: list[str] | None = None
    builtin: Callable[[AgentContext], None] | None = None


@dataclass
class Settings:
    pairs: int = 4
    timeout_s: float = 900.0
    out: Path | None = None
    measure_unchanged: bool = False  # the A/A control: measure even when the agent changed nothing
    warp_version: str = ""
    manifest: dict[str, str] | None = None  # sha256 per file under the suite root (None: a private suite)
    # a history case: the interpreter with the release before the fix (the original and the agent's copy run on it)
    # and the one with the release that holds it (the reference arm: the same project on the fixed release)
    python: str | None = None
    reference_python: str | None = None


def bind_python(command: list[str], python: str | None = None) -> list[str]:
    """Case commands say `python`: run them with this interpreter, which has warp installed, or with `python` (a
    history case's venv holding the library release the case is about)."""
    return [(python or sys.executable) if c == "python" else c for c in command]


def _write_tree(files: dict[str, bytes], prefix: str, dest: Path) -> None:
    """Write the files under `prefix` to `dest`, the one way both measured arms are made."""
    dest.mkdir(parents=True)
    for rel, data in files.items():
        if rel.startswith(prefix):
            p = dest / rel[len(prefix):]
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_bytes(data)


def _case_files(case: Case) -> dict[str, bytes]:
    return manifest.files_of(Path(case.path))


def _tampered(case: Case, settings: Settings, files: dict[str, bytes]) -> list[str]:
    """Files of the case that differ from the manifest (empty for a suite without one)."""
    if settings.manifest is None:
        return []
    name = Path(case.path).name + "/"
    got = {name + k: v for k, v in manifest.digest(files).items()}
    return manifest.differences(settings.manifest, got, prefix=name)


def _run_external(agent: Agent, ctx: AgentContext, log_dir: Path) -> AgentRun:
    assert agent.argv is not None
    env = dict(os.environ)
    env.update({ENV_PROMPT: ctx.prompt, ENV_CASE: ctx.case.id, ENV_ANSWER: str(ctx.answer)})
    if ctx.python:  # a history case: `python` on the agent's PATH is the venv with the old release
        venv_bin = str(Path(ctx.python).parent)
        env["PATH"] = venv_bin + os.pathsep + env.get("PATH", "")
        env["VIRTUAL_ENV"] = str(Path(venv_bin).parent)
    log_dir.mkdir(parents=True, exist_ok=True)
    t0 = time.monotonic()
    with open(log_dir / "stdout.txt", "wb") as out, open(log_dir / "stderr.txt", "wb") as err:
        try:
            proc = subprocess.Popen(agent.argv, cwd=ctx.copy, env=env, stdin=subprocess.DEVNULL, stdout=out,
                                    stderr=err, start_new_session=True)
        except OSError as exc:
            raise UsageError(f"cannot run the agent command: {exc.strerror or exc}") from None
        try:
            code: int | None = proc.wait(timeout=ctx.timeout_s)
            timed_out = False
        except subprocess.TimeoutExpired:
            timed_out, code = True, None
        finally:
            # the agent's whole process group goes, whether it finished, timed out or we were interrupted
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            proc.wait()
    return AgentRun(wall_s=round(time.monotonic() - t0, 3), exit_status=code, timed_out=timed_out)


def _run_builtin(agent: Agent, ctx: AgentContext, log_dir: Path) -> AgentRun:
    assert agent.builtin is not None
    log_dir.mkdir(parents=True, exist_ok=True)
    t0 = time.monotonic()
    code = 0
    try:
        agent.builtin(ctx)
    except UsageError as exc:
        (log_dir / "stderr.txt").write_text(f"{exc}\n", encoding="utf-8")
        code = 1
    return AgentRun(wall_s=round(time.monotonic() - t0, 3), exit_status=code)


def _read_answer(path: Path) -> tuple[Answer | None, str | None]:
    if not path.is_file():
        return None, f"the agent wrote no answer to ${ENV_ANSWER}"
    try:
        return Answer.model_validate_json(path.read_bytes()), None
    except ValueError as exc:
        return None, f"unreadable answer: {str(exc).splitlines()[0][:200]}"


def saving(comparison) -> tuple[float | None, str | None]:  # type: ignore[no-untyped-def]
    """(percent saved, clock): on the clock that improved beyond its band (the CUDA compile clock of a --cuda-arch
    case first, then the headline: compile elapsed, warm repeat for a cache fix; cold module work when only the
    summed build time moved), else the first of them that was measured."""
    # a --cuda-arch judgement is about the GPU start-up: its CUDA compile clock comes first where it was measured
    order = ["cuda_compile_cpu", "cuda_compile", comparison.headline, "compile_elapsed", "warm_repeat", "cold_module"]
    clocks = [c for name in order for c in comparison.clocks if c.name == name and c.delta_pct is not None]
    moved = [c for c in clocks if c.judged == "improved"]
    pick = (moved or clocks or [None])[0]
    return (None, None) if pick is None else (round(-pick.delta_pct, 2), pick.name)


def saving_on(comparison, clock: str | None) -> float | None:  # type: ignore[no-untyped-def]
    """Percent saved on the named clock (the one the agent's saving was read on), None when it was not measured."""
    if clock is None:
        return saving(comparison)[0]
    k = comparison.clock(clock)
    return round(-k.delta_pct, 2) if k is not None and k.delta_pct is not None else None


ONE_SAMPLE = "not judged (one sample per arm)"


def _judged(comparison, clock: str) -> str | None:  # type: ignore[no-untyped-def]
    """How the comparison judged one clock ("improved", "within band", ...); None where it was not measured.

    With one sample per arm a clock has no spread, so its band is the 1 % floor and any move reads as judged (an
    unchanged copy of mjw-1342 read -53 % on `steady` at --pairs 1): that is not a judgement."""
    k = comparison.clock(clock)
    if k is None:
        return None
    il = comparison.interleaved
    if il is not None and il.pairs < 2:
        return ONE_SAMPLE
    return k.judged


def _keep(dest: Path | None, name: str, text: str) -> None:
    if dest is not None:
        dest.mkdir(parents=True, exist_ok=True)
        (dest / name).write_text(text, encoding="utf-8")


def run_case(case: Case, agent: Agent, settings: Settings, trial: int = 0,
             progress: Progress | None = None, files: dict[str, bytes] | None = None) -> CaseResult:
    """One trial of one case; never raises for the agent's failures (they are scored), only for unusable input.

    `files`: the project/ and fixed/ trees when they are not the case folder's own (a history case's maintainer
    role: the unpacked release and its reference); the case folder is still what the manifest guards."""
    say = progress or (lambda _m: None)
    result = CaseResult(id=case.id, kind=case.kind_for(settings.warp_version), trial=trial,
                        warp_version=settings.warp_version)
    keep = settings.out / case.id.replace(":", "-") / f"trial-{trial + 1}" if settings.out else None
    shipped = _case_files(case)
    files = shipped if files is None else files
    if _tampered(case, settings, shipped):
        result.flags.append("fixtures_modified")
        result.diagnosis = DiagnosisScore(error="the installed fixtures differ from MANIFEST.json before the run")
        return result
    with tempfile.TemporaryDirectory(prefix="warp-compile-eval-") as tmp:
        work = Path(tmp)
        copy = work / "agent" / "project"
        _write_tree(files, "project/", copy)
        (work / "answer").mkdir()
        answer_path = work / "answer" / "diagnosis.json"
        ctx = AgentContext(case=case, copy=copy, answer=answer_path, prompt=agent_prompt(case, str(answer_path)),
                           timeout_s=settings.timeout_s, files=files, warp_version=settings.warp_version,
                           progress=progress, python=settings.python)
        say(f"case {case.id}: agent {agent.name}")
        log_dir = keep or work / "log"
        run = _run_builtin(agent, ctx, log_dir) if agent.builtin else _run_external(agent, ctx, log_dir)
        run.transcript = str(keep) if keep else ""
        result.agent = run
        if run.timed_out:
            result.flags.append("agent_timed_out")
        after_files = _case_files(case)
        if manifest.digest(after_files) != manifest.digest(shipped) or _tampered(case, settings, after_files):
            result.flags.append("fixtures_modified")
        answer, error = _read_answer(answer_path)
        if answer is not None:
            _keep(keep, "answer.json", answer.model_dump_json(indent=1))
        fix_record = answer_path.parent / "fix.json"  # builtin:fix leaves the engine's FixResult beside its answer
        if fix_record.is_file():
            _keep(keep, "fix.json", fix_record.read_text(encoding="utf-8"))
        expected = case.expected_for(settings.warp_version)
        if answer is None:  # no answer is not the answer "nothing to fix"
            result.diagnosis = DiagnosisScore(expected=sorted(expected.mechanisms), error=error)
        else:
            result.diagnosis = score_diagnosis(expected, answer)
        if "fixtures_modified" in result.flags:
            result.score = case_score(result)
            return result
        judge_t0 = time.monotonic()
        result.fix, behaviour_flags = _judge_fix(case, settings, files, copy, work, keep, say)
        if case.history is not None:
            from .history import history_score, program_runs

            costs = fix_record if fix_record.is_file() else fix_record.with_name("costs.json")  # fix, or diagnose
            runs = program_runs(costs)
            result.history = history_score(case, answer, result.fix, runs, run.wall_s, time.monotonic() - judge_t0)
        if answer is None and not result.fix.changed:
            # leaving the project alone only counts as "nothing to fix" when the agent said so
            result.fix.credit = 0.0
            result.fix.reason = "the agent delivered nothing: no answer and no change"
        result.flags += [f for f in _fix_flags(case, result.fix, behaviour_flags) if f not in result.flags]
        result.score = case_score(result)
        _keep(keep, "result.json", result.model_dump_json(indent=1))
    return result


def _judge_fix(case: Case, settings: Settings, files: dict[str, bytes], copy: Path, work: Path,
               keep: Path | None, say: Progress) -> tuple[FixScore, list[str]]:
    agent_files = manifest.files_of(copy)
    base = {k[len("project/"):]: v for k, v in files.items() if k.startswith("project/")}
    fix = FixScore(changed=manifest.digest(agent_files) != manifest.digest(base))
    if case.reference is not None:  # replaced by the same run's reference arm when there is one (see below)
        fix.reference_saving_pct, fix.reference_clock = case.reference.saving_pct, case.reference.clock
    # a history case measures its reference (the release, or in the maintainer role the fixed source) even against
    # an unchanged copy: the maintainers' saving is half of what the suite reports
    if not fix.changed and not settings.measure_unchanged and case.history is None:
        fix.reason = "the agent left the project unchanged; nothing to measure"
        fix.credit = fix_credit(case, fix, settings.warp_version)
        return fix, []
    a, b = work / "judge" / "a" / "project", work / "judge" / "b" / "project"
    _write_tree(files, "project/", a)
    _write_tree(agent_files, "", b)
    fixed = {k[len("fixed/"):]: v for k, v in files.items() if k.startswith("fixed/")}
    # the reference fix as a third arm of the same run, so the agent's saving is judged against what the reference
    # saves today on this machine, not a figure recorded on another day (skipped when the agent's copy is it)
    c = None
    release_ref = settings.reference_python is not None  # a history case: the maintainers' release is the reference
    if release_ref:
        fixed = {}  # fixed/ is the oracle's own edit there, not the reference
        c = work / "judge" / "c" / "project"
        _write_tree(files, "project/", c)
    elif fixed and manifest.digest(fixed) != manifest.digest(agent_files):
        c = work / "judge" / "c" / "project"
        _write_tree(files, "fixed/", c)
    from ..probe import measure
    from ..probe.compare.multiarm import Arm, multiarm_compare

    arms: dict[str, ArmRuns] = {}
    say(f"case {case.id}: measure original, agent's copy{' and reference' if c else ''}, {settings.pairs} rounds")
    run_sample = measure.run_sample
    if case.cuda_arch:  # a CUDA case is judged on its CUDA compile clock too (the replay, no device needed)
        run_sample = functools.partial(measure.run_sample, cuda_arch=case.cuda_arch)
    command = bind_python(case.command, settings.python)
    original, agent = Arm("original", a, command), Arm("agent", b, command)
    ref = None
    if c is not None:
        ref = Arm("reference", c, bind_python(case.command, settings.reference_python) if release_ref else command)
        if release_ref:
            ref.acts_through = "unknown"  # another release: judged on its clocks, whatever it changed
    from ..probe.fix.engine import SCHEDULING_MECHANISMS

    # a fix can act only through what Warp compiles, unless the case is about when modules build (a preload, a
    # worker count): identical work then reads NO_EFFECT instead of a timing verdict of noise (the A/A control)
    acts = "scheduling" if set(case.expected.mechanisms) & SCHEDULING_MECHANISMS else "compiled"
    if case.history is not None:  # a release can change how modules load, not only what compiles
        acts = "unknown"
    multiarm_compare(original, [agent] + ([ref] if ref else []), rounds=settings.pairs, until_decided=False,
                     settle_up_to=2 * settings.pairs,
                     timeout_s=settings.timeout_s, run_sample=recording(run_sample, arms),
                     build_report=measure.build_report, warmup=1, acts_through=acts)
    comparison = agent.comparison
    assert comparison is not None
    _keep(keep, "comparison.json", comparison.model_dump_json(indent=1))
    # compare itself sets a verdict of the medians alone aside (INCONCLUSIVE, see multiarm); the eval credits that,
    # and keeps what the medians said for the A/A control
    il = comparison.interleaved
    fix.raw_verdict = (il.by_medians if il is not None else None) or comparison.verdict
    fix.verdict, fix.reason = comparison.verdict, comparison.reason
    fix.pairs = il.pairs if il is not None else 0
    fix.saving_pct, fix.saving_clock = saving(comparison)
    if case.history is not None:  # a history case is judged on the clock it is about, whatever else moved
        fix.saving_pct, fix.saving_clock = saving_on(comparison, case.history.clock), case.history.clock
        fix.clock_judged = _judged(comparison, case.history.clock)
    if ref is not None and ref.comparison is not None:
        _keep(keep, "reference_comparison.json", ref.comparison.model_dump_json(indent=1))
        fix.reference_saving_pct = saving_on(ref.comparison, fix.saving_clock)
        fix.reference_clock, fix.reference_source = fix.saving_clock, "same run"
        fix.reference_verdict = ref.comparison.verdict
        if case.history is not None:
            fix.reference_clock_judged = _judged(ref.comparison, case.history.clock)
    elif fixed and c is None:  # the agent's copy is the reference: the same measurement prices both
        fix.reference_saving_pct, fix.reference_clock = fix.saving_pct, fix.saving_clock
        fix.reference_source, fix.reference_verdict = "same run", fix.verdict
    elif case.reference is not None:
        fix.reference_source = "recorded"
    ok, flags, note = judge(case.expected_output, arms.get(str(a), ArmRuns()), arms.get(str(b), ArmRuns()))
    bypassed = entry_bypassed(case.command, base, agent_files)
    if bypassed:
        ok, note = False, "; ".join(x for x in (note, bypassed) if x)
        flags.append("entry_bypassed")
    kept = _must_keep(case, b, settings.timeout_s, original=a, python=settings.python) if ok else []
    for keep_ok, keep_note in kept:
        if not keep_ok:
            ok, note = False, "; ".join(x for x in (note, keep_note) if x)
            flags.append("must_keep_broken")
    fix.behaviour_ok, fix.behaviour = ok, note
    fix.credit = fix_credit(case, fix, settings.warp_version)
    return fix, flags


def _must_keep(case: Case, copy: Path, timeout_s: float, original: Path | None = None,
               python: str | None = None) -> list[tuple[bool, str]]:
    """Run each other invocation the case says must keep working (a flag, a plugin path) once in the agent's copy.

    Where the copy's output differs from the recorded one, the same invocation runs once in the original too: if
    the original prints what the copy prints, the recording is what is stale here (another Warp version), not the
    agent's change."""
    from ..probe.sandbox import Sandbox

    def run_in(where: Path, keep: MustKeep) -> tuple[int | None, list[str]]:
        with Sandbox() as box:
            run = box.run(bind_python(keep.command, python), where, timeout_s)
        return run.exit_code, app_lines(run.stdout)

    out = []
    for keep in case.must_keep:
        code, lines = run_in(copy, keep)
        diff = first_difference(keep.expected_output, lines)
        if code != 0:
            diff = f"exited with code {code}"
        elif diff and original is not None:
            base_code, base_lines = run_in(original, keep)
            if base_code == 0 and base_lines == lines:
                diff = None
        out.append((diff is None, f"`{' '.join(keep.command)}` no longer works: {diff}" if diff else ""))
    return out


def _fix_flags(case: Case, fix: FixScore, behaviour_flags: list[str]) -> list[str]:
    flags = list(behaviour_flags)
    if fix.verdict == "UNVERIFIED" and (case.launches or 0) > 0:
        flags.append("unverified")
    if fix.verdict == "INVALID" or (fix.verdict == "REGRESSION" and fix.credit is not None):
        flags.append(fix.verdict.lower())
    if fix.changed and case.kind == "fix" and fix.verdict not in ("IMPROVED", None) and fix.credit == 0.0 \
            and not flags:
        flags.append("no_measured_gain")
    return flags
