"""`warp-compile fix`: every finding's edits applied to a scratch copy, measured against one shared baseline, checked.

The planning is pure (`plan`: which findings have something to try, under which key, on which clock) and separate
from the I/O (`run_fix`: copy the project, apply, measure, check behaviour, write). A fix counts as proven only when
its copy measured IMPROVED against the original on the shared baseline arm and still behaved like the original:
the same printed output (numbers within the eval's tolerance), the same launch topology, and every must-keep
invocation (a `--rebuild` flag, a plugin path) printing what the original prints. `--write` applies exactly those
fixes to the project, after checking that the files still hold what was copied, and nothing else.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..compare.multiarm import PER_CALL_CLOCKS, Arm, multiarm_compare
from ..errors import RunFailed, UsageError
from ..models.comparison import Comparison
from ..models.diagnosis import Diagnosis, Edit, Finding
from ..models.fix import Behaviour, CandidateFix, ClockSaving, Costs, FixResult, KeptPath
from .checks import failure_cause, parse_problem, stderr_tail
from .edits import EditConflict, apply_edits, merge_edits, new_texts, unified_diff
from .keys import object_keys
from .policy import (
    finding_keys,
    fix_clock,
    fix_findings,
    held_back,
    improved,
    keep_best_realisation,
    layers_to_write,
    plan,
    pointing_right,
    realised,
    summarize,
    tentative_base,
    to_write,
)

Progress = Callable[[str], None]

SKIP_DIRS = {".git", ".hg", ".svn", "__pycache__", ".venv", "venv", ".tox", ".nox", ".mypy_cache", ".pytest_cache",
             ".ruff_cache", "node_modules", ".warp-compile", ".cache", "build", "dist", ".eggs"}
SKIP_SUFFIXES = (".pyc", ".pyo")
MAX_COPY_BYTES = 200_000_000
TOLERANCE = ("numbers equal within two units of their last printed digit plus 1e-4 relative (probe/fix/behaviour.py); "
             "Warp's banner and module-load lines ignored")


# ------------------------------------------------------------------------------------------------ scratch copies


class Scratch:
    """A private temp root for the copies, registered with the sandbox so shutdown and Ctrl-C remove it."""

    def __init__(self) -> None:
        from .. import sandbox

        base = os.environ.get("TMPDIR") or tempfile.gettempdir()
        self.root = Path(tempfile.mkdtemp(prefix="warp-compile-fix-", dir=base))
        self.arms: dict[str, Any] = {}  # candidate key -> its measured arm (a next round diagnoses the kept one)
        self.trees: dict[str, Path] = {}  # candidate key -> the copy it ran in
        with sandbox._registry_lock:
            sandbox._open_roots.add(self.root)

    def __enter__(self) -> Scratch:
        return self

    def __exit__(self, *exc: object) -> None:
        from .. import sandbox

        shutil.rmtree(self.root, ignore_errors=True)
        with sandbox._registry_lock:
            sandbox._open_roots.discard(self.root)


def _skip_dir(path: Path) -> bool:
    return path.name in SKIP_DIRS or (path / "pyvenv.cfg").is_file() or path.name.endswith(".egg-info")


def project_files(root: Path) -> dict[str, bytes]:
    """The project's files as the copies get them (VCS, venvs, bytecode and caches left out)."""
    out: dict[str, bytes] = {}
    total = 0
    for dirpath, dirnames, filenames in os.walk(root):
        here = Path(dirpath)
        dirnames[:] = sorted(d for d in dirnames if not _skip_dir(here / d) and not (here / d).is_symlink())
        for name in sorted(filenames):
            p = here / name
            if name.endswith(SKIP_SUFFIXES) or not p.is_file():
                continue
            data = p.read_bytes()
            total += len(data)
            if total > MAX_COPY_BYTES:
                raise UsageError(f"fix: the project under {root} holds more than {MAX_COPY_BYTES // 1_000_000} MB "
                                 "of files to copy; point --source at the project's own code")
            out[p.relative_to(root).as_posix()] = data
    return out


def write_tree(files: dict[str, bytes], dest: Path) -> None:
    dest.mkdir(parents=True, exist_ok=True)
    for rel, data in files.items():
        p = dest / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data)


def map_command(command: list[str], cwd: Path, root: Path, copy: Path) -> list[str]:
    """The argv for a copy: absolute paths inside the project point into the copy; the interpreter stays the real
    one (a relative interpreter path is made absolute, since a venv is never copied)."""
    out = []
    for i, arg in enumerate(command):
        p = Path(arg)
        if i == 0:
            out.append(str((cwd / p).resolve()) if ("/" in arg and not p.is_absolute()) else arg)
            continue
        if p.is_absolute():
            try:
                out.append(str(copy / p.resolve().relative_to(root)))
                continue
            except (ValueError, OSError):
                pass
        out.append(arg)
    return out


def _launcher(edits: Sequence[Edit]) -> tuple[str, str] | None:
    """(file, how it starts the app) of a launcher an edit creates (see `edits.launcher_text`), else None."""
    for e in edits:
        if not e.create:
            continue
        m = re.search(r'runpy\.run_module\("([^"]+)"', e.new)
        if m:
            return e.file, "module:" + m.group(1)
        m = re.search(r"runpy\.run_path\((['\"])(.+?)\1", e.new)
        if m:
            return e.file, "path:" + m.group(2)
        m = re.search(r"^from (\S+) import (\w+)$", e.new, flags=re.M)
        if m and "sys.exit(" in e.new:
            return e.file, "console:" + m.group(2)
    return None


def _interpreter_of(script: str) -> str | None:
    try:
        with open(script, "rb") as fh:
            first = fh.readline(512).decode("utf-8", "replace").strip()
    except OSError:
        return None
    return first[2:].strip().split()[0] if first.startswith("#!") and first[2:].strip() else None


def launcher_command(command: list[str], edits: Sequence[Edit], cwd: Path, root: Path) -> list[str] | None:
    """The argv that starts the app through a launcher the edits create (an installed entry point cannot take a
    setting at its top): `python -m pkg.mod ARGS` -> `python run_mod.py ARGS`. None when no launcher is created;
    the unchanged command when it cannot be rewritten (the candidate then fails visibly, not silently)."""
    hit = _launcher(edits)
    if hit is None:
        return None
    rel, how = hit
    path = root / rel
    try:
        arg = os.path.relpath(path, cwd)
    except ValueError:
        arg = str(path)
    kind, _, name = how.partition(":")
    if kind == "module" and "-m" in command:
        i = command.index("-m")
        if i + 1 < len(command) and command[i + 1] == name:
            return command[:i] + [arg] + command[i + 2:]
    if kind == "path":
        for i, a in enumerate(command[1:], 1):
            if a == name or (cwd / a).resolve() == Path(name).resolve():
                return command[:i] + [arg] + command[i + 1:]
    if kind == "console" and command:
        python = _interpreter_of(command[0] if os.path.isabs(command[0]) else shutil.which(command[0]) or "")
        if python:
            return [python, arg, *command[1:]]
    return list(command)


# ------------------------------------------------------------------------------------------------ running


@dataclass
class Engine:
    """The I/O side: a run_sample / build_report pair (tests inject a mock) and the counters."""

    run_sample: Callable[..., Any]
    build_report: Callable[..., Any]
    # one plain run (a must-keep invocation): (argv, cwd, timeout_s, extra env) -> (exit code, stdout)
    run_once: Callable[[list[str], Path, float, dict[str, str]], tuple[int | None, str]] | None = None
    runs: int = 0
    outputs: dict[str, Any] = field(default_factory=dict)  # arm name -> evals.behaviour.ArmRuns

    def record(self, arm: Arm, sample: Any) -> None:
        from .behaviour import ArmRuns

        runs = self.outputs.setdefault(arm.name, ArmRuns())
        for run in (getattr(sample, "cold", None), getattr(sample, "warm", None)):
            if run is not None:
                self.runs += 1
                if hasattr(run, "result"):
                    runs.add(run)


def real_engine(cancel: threading.Event | None) -> Engine:
    from .. import measure
    from ..sandbox import Sandbox

    def sample(*args: Any, **kw: Any) -> Any:
        return measure.run_sample(*args, cancel=cancel, **kw)

    def once(command: list[str], cwd: Path, timeout_s: float, env: dict[str, str]) -> tuple[int | None, str]:
        with Sandbox(env) as box:
            out = box.run(command, cwd, timeout_s, cancel)
        return out.exit_code, out.stdout

    return Engine(run_sample=sample, build_report=measure.build_report, run_once=once)


def _saved(k: Any) -> float:
    """What a clock says the fix saved. Paired: the mean of the pairs' differences, the centre of its interval and of
    its share (a median move beside an interval about the mean read 1,314 ms in 1,054 to 2,434 on the fem example
    under load). Else its median move, with the work both arms did identically taken out where the comparison did
    (compare/same.py), or the difference of the whole clock's medians."""
    iv = k.interval
    if iv is not None and iv.method == "paired t":
        return -iv.mean_ms
    if k.basis_before is not None and k.delta_ms is not None:
        return -k.delta_ms
    return k.before.median - k.after.median


def _clock_saving(c: CandidateFix, comparison: Comparison) -> None:
    from ..clocks import finding_clock, saving_interval

    name = finding_clock(comparison, c.clock or "compile_elapsed")  # the one clock diagnose --verify reads too
    k = comparison.clock(name)
    c.clock = name
    c.other_share = comparison.other_share
    if k is not None and k.before.median is not None and k.after.median is not None:
        c.saving_ms = round(_saved(k), 3)
        c.band_ms = k.band_ms
        iv = k.interval
        if iv is not None and iv.method == "paired t" and iv.mean_pct is not None:
            c.saving_pct = round(-iv.mean_pct, 2)  # pair by pair, as its interval (probe/compare/verdict.py)
        else:
            c.saving_pct = round(-k.delta_pct, 2) if k.delta_pct is not None else None
        c.saving_low_ms, c.saving_high_ms = saving_interval(k)
    c.savings = [
        ClockSaving(name=k.name, band_ms=k.band_ms, outcome=k.outcome, decisive=k.decisive,
                    saving_ms=round(_saved(k), 3)
                    if k.before.median is not None and k.after.median is not None else None,
                    saving_low_ms=saving_interval(k)[0], saving_high_ms=saving_interval(k)[1])
        for k in comparison.clocks
    ]


def _per_call_verdict(c: CandidateFix, comparison: Comparison) -> None:
    """A fix of a cost paid at every call (WC-1) is judged on the run after its last load alone (the arm's comparison
    is already that view, on its CPU twin where the comparison decides on CPU time: compare/multiarm.on_clock); where
    no sample recorded that clock it proves nothing."""
    if c.clock not in PER_CALL_CLOCKS or comparison.verdict == "INVALID":
        return
    k = comparison.clock(c.clock)
    if k is None or k.before.median is None or k.after.median is None:
        c.verdict, c.verdict_reason = "INCONCLUSIVE", "the per-call clock (run after last load) was not measured"


def _kept_paths(engine: Engine, variants: list[list[str]], base: Arm, arm: Arm, timeout_s: float) -> list[KeptPath]:
    from .behaviour import app_lines, first_difference

    out = []
    if engine.run_once is None:
        return [KeptPath(argv=v, ok=False, note="no executor for single runs") for v in variants]
    for argv in variants:
        code_a, out_a = engine.run_once(base.command + argv, base.cwd, timeout_s, base.env)
        code_b, out_b = engine.run_once(arm.command + argv, arm.cwd, timeout_s, arm.env)
        engine.runs += 2
        diff = first_difference(app_lines(out_a), app_lines(out_b))
        if code_b != code_a:
            out.append(KeptPath(argv=argv, ok=False, note=f"exit code {code_a} in the original, {code_b} fixed"))
        elif diff:
            out.append(KeptPath(argv=argv, ok=False, note=f"output differs from the original's: {diff}"))
        else:
            out.append(KeptPath(argv=argv, ok=True, note="same exit code and output as the original"))
    return out


def _explain_failure(b: Behaviour, before: Any, after: Any, edits: Sequence[Edit]) -> None:
    """A failed run of the fixed copy: the last lines of its stderr, and whether the tool's own edit caused it."""
    tail = next((t for t in after.errors if t), "")
    if "run_failed" not in b.flags and not tail:
        return
    b.error_tail = stderr_tail(tail)
    b.cause = failure_cause(tail, edits, bool(before.exit_codes) and all(x in (0, None) for x in before.exit_codes))


def _behaviour(engine: Engine, base: Arm, arm: Arm, comparison: Comparison, must_keep: list[list[str]],
               timeout_s: float, check_kept: bool, edits: Sequence[Edit] = ()) -> Behaviour:
    from .behaviour import ArmRuns, judge_runs

    seen = judge_runs(None, engine.outputs.get(base.name, ArmRuns()), engine.outputs.get(arm.name, ArmRuns()),
                      who="the fixed copy")
    ok, flags, note = seen.ok, seen.flags, seen.note
    topo = comparison.equivalence.status
    if topo == "changed":
        ok = False
        flags.append("launches_changed")
        div = comparison.equivalence.first_divergence
        note = "; ".join(x for x in (note, f"launch topology changed{': ' + div.description if div else ''}") if x)
    b = Behaviour(ok=ok, output="same" if "output_changed" not in flags else note, topology=topo, flags=flags,
                  tolerance=TOLERANCE, note=note, volatile=seen.volatile)
    _explain_failure(b, engine.outputs.get(base.name, ArmRuns()), engine.outputs.get(arm.name, ArmRuns()), edits)
    if ok and must_keep and check_kept:
        b.kept = _kept_paths(engine, must_keep, base, arm, timeout_s)
        if not all(k.ok for k in b.kept):
            b.ok = False
            b.flags.append("must_keep_broken")
    elif must_keep and not check_kept:
        b.note = "; ".join(x for x in (b.note, "must-keep paths not run: the fix did not improve") if x)
    return b


def imports_from(samples: Sequence[Any], root: Path) -> str | None:
    """A project file the copy's process imported from the real tree (an editable install, PYTHONPATH): then the
    copy's edits never ran, and its measurement would price the original."""
    for s in samples:
        events = getattr(getattr(s, "cold", None), "events", None)
        for f in getattr(events, "imported_files", None) or []:
            if not os.path.isabs(str(f)):  # e.g. "site:<finder>" entries: not a file of any tree
                continue
            try:
                Path(f).resolve().relative_to(root)
            except (ValueError, OSError):
                continue
            return str(f)
    return None


def _fill(c: CandidateFix, arm: Arm, engine: Engine, base: Arm, must_keep: list[list[str]], timeout_s: float,
          root: Path | None = None) -> None:
    comparison = arm.comparison
    if comparison is None:
        from .behaviour import ArmRuns

        c.status, c.reason = "failed", "no sample of this candidate completed"
        runs = engine.outputs.get(arm.name, ArmRuns())
        tail = next((t for t in runs.errors if t), "")
        if tail:
            base_runs = engine.outputs.get(base.name, ArmRuns())
            base_ok = bool(base_runs.exit_codes) and all(x in (0, None) for x in base_runs.exit_codes)
            c.reason += f": {failure_cause(tail, c.edits, base_ok)}; its stderr ends: " + " | ".join(stderr_tail(tail))
        return
    leaked = imports_from(arm.samples[:1], root) if root is not None else None
    if leaked is not None:
        c.status = "failed"
        c.reason = (f"the copy imported {leaked} from the project itself (an editable install or PYTHONPATH), so "
                    "its edits never ran; run fix from a checkout the interpreter does not import by path")
        return
    keyed = object_keys(c.edits, arm.samples[:1])
    if keyed:
        c.status, c.reason = "failed", keyed
        return
    c.verdict, c.verdict_reason = comparison.verdict, comparison.reason
    c.pairs, c.stopped_because, c.decided = len(arm.samples), arm.stopped_because, arm.decided
    _clock_saving(c, comparison)
    _per_call_verdict(c, comparison)
    c.behaviour = _behaviour(engine, base, arm, comparison, must_keep, timeout_s,
                             check_kept=comparison.verdict == "IMPROVED", edits=c.edits)
    c.improved = improved(c)


@dataclass
class FixOptions:
    wanted: list[str] = field(default_factory=list)
    write: bool = False
    unsafe_fixes: bool = False  # --write also writes fixes rated review
    rounds: int | None = None  # --pairs N: exactly N samples per candidate
    until_decided: bool = True
    min_rounds: int = 2
    max_rounds: int = 6
    timeout_s: float = 900.0
    combine: bool = True
    settings_arms: bool = False  # measure experiment-only findings too (diagnose --verify)
    acts_through: str | None = "compiled"  # passed to compare where it takes it (issue 17)
    compose: bool = True  # diagnose the kept tree again and measure what now applies on top of it
    precision: float | None = None  # IMPROVED arms go on until the saving is known to ±this share (diagnose --verify)
    below_line: bool = True  # also measure the edits diagnose ruled out as small (off for diagnose --verify)


def diagnose_with_sample(command: list[str], cwd: Path, source: Path | None, timeout_s: float,
                         progress: Progress | None, engine: Engine,
                         cuda_arch: int | None = None,
                         rebuild_limit_s: float | None = None) -> tuple[Any, Diagnosis, Any]:
    """Measure once (cold + warm) and diagnose: (report, diagnosis, sample); the sample can serve as the baseline's
    first. `rebuild_limit_s` asks its cold run for the settings rebuilds that price CS-10 / CS-12 (probe/pricing.py;
    they run after the app, outside its clocks)."""
    from ..diagnose import diagnose_sources
    from ..measure import attach_places
    from ..pricing import rebuild_env

    kw: dict[str, Any] = {"cuda_arch": cuda_arch} if cuda_arch else {}
    if rebuild_env(rebuild_limit_s):
        kw["cold_env"] = rebuild_env(rebuild_limit_s, timeout_s)
    data = engine.run_sample(command, cwd, 0, timeout_s=timeout_s, progress=progress, **kw)
    report = engine.build_report(command, cwd, [data], label="", requested=1)
    if report.all_failed:
        why, _ = report.last_failure()
        raise RunFailed(f"fix: the command failed before anything could be fixed ({why})")
    attach_places(report, data.cold.events)
    return report, diagnose_sources(report, source if source is not None else cwd, progress), data


def run_fix(
    command: list[str],
    cwd: Path,
    options: FixOptions,
    *,
    diagnosis: Diagnosis | None = None,
    source: Path | None = None,
    progress: Progress | None = None,
    cancel: threading.Event | None = None,
    engine: Engine | None = None,
    cuda_arch: int | None = None,
    seed: Any = None,
) -> tuple[FixResult, Diagnosis]:
    """Diagnose (unless a diagnosis is given), then measure each finding's fix on a copy; write with options.write.

    `seed`: the sample a given diagnosis was measured from (`diagnose_with_sample`), reused as the baseline's first.
    """
    t0 = time.monotonic()
    say = progress or (lambda _m: None)
    engine = engine or real_engine(cancel)
    cwd = Path(cwd).resolve()
    seeds: list[Any] = []
    costs = Costs()
    if diagnosis is None:
        _, diagnosis, seed = diagnose_with_sample(command, cwd, source, options.timeout_s, progress, engine, cuda_arch)
    if seed is not None and getattr(seed, "ok", False):
        before = engine.runs
        engine.record(Arm(name="original", cwd=cwd, command=command), seed)
        costs.diagnosis_runs = engine.runs - before
        seeds = [seed]
    root = Path(diagnosis.source_root or source or cwd).resolve()
    try:
        rel_cwd = cwd.relative_to(root)
    except ValueError:
        raise UsageError(f"fix: the command's directory {cwd} is outside the project {root}") from None
    result = FixResult(command=list(command), cwd=str(cwd), source_root=str(root), write=options.write,
                       warnings=list(diagnosis.warnings))
    result.candidates = plan(diagnosis, options.wanted, options.settings_arms, options.below_line)
    measured = fix_findings(diagnosis, options.below_line)
    result.not_offered = [f"{r.mechanism}: {r.signal}" for r in diagnosis.ruled_out  # why not, even with no fix
                          if not any(r.candidate is f for f in measured)]
    findings = dict(zip(finding_keys(measured), measured, strict=True))
    findings.update({c.key: findings[c.alternative_of] for c in result.candidates if c.alternative_of})
    todo = [c for c in result.candidates if c.status == "measured"]
    if not todo:
        result.costs = _costs(costs, engine, seeds, t0, 0)
        result.summary = summarize(result)
        return result, diagnosis
    files = project_files(root)
    with Scratch() as scratch:
        base_dir = scratch.root / "original"
        write_tree(files, base_dir)
        base = Arm(name="original", cwd=base_dir / rel_cwd, command=map_command(command, cwd, root, base_dir),
                   samples=list(seeds))
        arms: list[tuple[CandidateFix, Arm]] = []
        for i, c in enumerate(todo, 1):
            if c.upstream:  # the library's change, on a patched copy of the library the original tree imports
                arm = upstream_arm(c, findings[c.key], base, scratch.root / f"upstream{i}")
                if arm is not None:
                    arms.append((c, arm))
                continue
            if c.settings is not None:  # the hook applies the experiment to the original tree
                from ..experiment import settings_env

                arms.append((c, Arm(name=c.key, cwd=base.cwd, command=base.command, env=settings_env(c.settings))))
                continue
            arm = _candidate_arm(c, files, root, rel_cwd, command, cwd, scratch.root / f"fix{i}")
            if arm is not None:
                arms.append((c, arm))
                scratch.arms[c.key], scratch.trees[c.key] = arm, scratch.root / f"fix{i}"
        for c, arm in arms:
            arm.clock = c.clock or ""  # the clock its saving is read on: where --verify's precision is judged
        say(f"fix: measuring {len(arms)} candidate(s) against the original, one shared baseline")
        _measure(base, [a for _, a in arms], options, engine, progress, skip_first=len(seeds), cuda_arch=cuda_arch)
        for c, arm in arms:
            _fill(c, arm, engine, base, findings[c.key].must_keep, options.timeout_s, root)
        keep_best_realisation(result.candidates)
        good = [c for c in result.candidates if c.improved and c.edits]
        parts = _parts_of_one_problem(good, result.candidates, findings)
        parts += [c for c in pointing_right(result.candidates) if c not in good and c not in parts]
        parts = _one_realisation_each(good, parts)
        # an undecided part joins only where the combination is judged on its own clock: a per-call fix (WC-1) saves
        # nothing on the compile clocks, so a combination decided there could never earn it
        mechs = [m for c in good for m in c.mechanisms]
        parts = [c for c in parts if fix_clock([*mechs, *c.mechanisms]) == (c.clock or fix_clock(c.mechanisms))]
        if options.combine and len(good) + len(parts) >= 2:
            result.combination = _combination(good + parts, findings, files, root, rel_cwd, command, cwd, scratch,
                                              base, options, engine, progress, cuda_arch)
        if options.compose:
            _next_round(result, diagnosis, files, root, rel_cwd, command, cwd, scratch, base, options, engine,
                        progress, cuda_arch)
        result.held_back = held_back(result, options.unsafe_fixes)
        if options.write:
            _write(result, root, files, options.unsafe_fixes)
    result.costs = _costs(costs, engine, seeds, t0, len(base.samples))
    result.summary = summarize(result)
    return result, diagnosis


def _costs(costs: Costs, engine: Engine, seeds: list[Any], t0: float, baseline_samples: int) -> Costs:
    costs.program_runs = engine.runs
    costs.reused_diagnosis_sample = bool(seeds) and baseline_samples > 0
    costs.baseline_samples = baseline_samples
    costs.wall_s = round(time.monotonic() - t0, 3)
    return costs


def _prepare_candidate(c: CandidateFix, files: dict[str, bytes], root: Path, dest: Path) -> None:
    """The copy with the candidate's edits applied, and its diff; a conflict skips the candidate with the reason."""
    write_tree(files, dest)
    try:
        c.diff = unified_diff(dest, c.edits)
        written = apply_edits(dest, c.edits)
    except (EditConflict, OSError, UnicodeDecodeError) as exc:
        c.status, c.reason = "conflict", f"the edits do not apply: {exc}"
        return
    bad = parse_problem(files, {rel: (dest / rel).read_text(encoding="utf-8") for rel in written}, c.edits)
    if bad is not None:  # like cargo fix rebuilding: an edit that does not parse costs no program run
        c.status, c.reason = "invalid", bad


SCHEDULING_MECHANISMS = frozenset({"CS-8", "CS-13"})


def upstream_arm(c: CandidateFix, f: Finding, base: Arm, dest: Path) -> Arm | None:
    """The original tree run against a scratch copy of the library with its maintainers' change applied, first on
    PYTHONPATH: what the upstream report's diff would save. The installed files are only read."""
    up = f.upstream
    assert up is not None
    tops = sorted({e.file.split("/", 1)[0] for e in up.edits})
    try:
        for top in tops:
            src = Path(up.base_dir) / top
            if src.is_dir():
                shutil.copytree(src, dest / top, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
            else:
                dest.mkdir(parents=True, exist_ok=True)
                shutil.copy2(src, dest / top)
        apply_edits(dest, up.edits)
    except (EditConflict, OSError, UnicodeDecodeError) as exc:
        c.status, c.reason = "conflict", f"the library's change does not apply to a copy of it: {exc}"
        return None
    return Arm(name=c.key, cwd=base.cwd, command=base.command, env={"PYTHONPATH": str(dest)})


def _candidate_arm(c: CandidateFix, files: dict[str, bytes], root: Path, rel_cwd: Path, command: list[str],
                   cwd: Path, dest: Path) -> Arm | None:
    """The candidate's copy and the argv that runs it (through a launcher its edits create, if they do)."""
    _prepare_candidate(c, files, root, dest)
    if c.status != "measured":
        return None
    argv = map_command(command, cwd, root, dest)
    via = launcher_command(argv, c.edits, dest / rel_cwd, dest)
    if via is not None:
        c.command = launcher_command(command, c.edits, cwd, root)
    # a preload or a worker count changes when modules build, not what builds: identical work keeps a timing verdict
    acts = "scheduling" if set(c.mechanisms) & SCHEDULING_MECHANISMS else None
    arm = Arm(name=c.key, cwd=dest / rel_cwd, command=via or argv, acts_through=acts)
    _add_launch_args(arm, c.edits)
    return arm


def _add_launch_args(arm: Arm, edits: Sequence[Edit]) -> None:
    """The arguments `edits` add to launches (and where they sit), under the ones the arm already expects."""
    arm.launch_args = {**{k: v for e in edits for k, v in e.launch_args.items()}, **arm.launch_args}
    arm.launch_args_at = {**{k: v for e in edits for k, v in e.launch_args_at.items()}, **arm.launch_args_at}


def _measure(base: Arm, arms: list[Arm], options: FixOptions, engine: Engine, progress: Progress | None,
             skip_first: int, cuda_arch: int | None = None) -> None:
    """Every arm the same way as the diagnosis was measured: with `cuda_arch` each sample replays its modules
    through NVRTC, so a CUDA-only fix is judged on the CUDA compile clock it is about."""
    if not arms:
        return
    run_sample = engine.run_sample
    if cuda_arch:
        def run_sample(*args: Any, **kw: Any) -> Any:
            return engine.run_sample(*args, cuda_arch=cuda_arch, **kw)

    multiarm_compare(
        base, arms, rounds=options.rounds, until_decided=options.until_decided and options.rounds is None,
        min_rounds=options.min_rounds, max_rounds=options.max_rounds, timeout_s=options.timeout_s,
        progress=progress, run_sample=run_sample, build_report=engine.build_report,
        acts_through=options.acts_through, on_sample=engine.record, skip_baseline_rounds=skip_first,
        precision=options.precision,
    )


def _parts_of_one_problem(good: list[CandidateFix], candidates: list[CandidateFix],
                          findings: dict[str, Finding]) -> list[CandidateFix]:
    """Undecided fixes that go with an improved one: the same mechanism on a module an improved fix is about (two
    generic kernels of one module each registered late: either registration alone still leaves the module rebuilt
    by the other, so alone it can read no effect). They join the combination, which is judged as a whole; --write
    takes it only if it saves more than the best single fix."""
    mods = {(m, mod) for c in good for m in c.mechanisms for mod in findings[c.key].modules}
    out = []
    for c in candidates:
        if c in good or not c.edits or c.status != "measured" or c.behaviour_ok is not True:
            continue
        if c.verdict not in ("INCONCLUSIVE", "NO_EFFECT"):
            continue
        f = findings.get(c.key)
        if f is not None and any((m, mod) in mods for m in c.mechanisms for mod in f.modules):
            out.append(c)
    return out


def _one_realisation_each(good: list[CandidateFix], parts: list[CandidateFix]) -> list[CandidateFix]:
    """`parts` without a second realisation of a finding already among `good` or earlier parts: two realisations of
    one plan change the same lines, so a combination holds one."""
    taken = {c.alternative_of or c.key for c in good}
    out = []
    for c in parts:
        if (c.alternative_of or c.key) not in taken:
            taken.add(c.alternative_of or c.key)
            out.append(c)
    return out


def _combination(good: list[CandidateFix], findings: dict[str, Finding], files: dict[str, bytes], root: Path,
                 rel_cwd: Path, command: list[str], cwd: Path, scratch: Scratch, base: Arm, options: FixOptions,
                 engine: Engine, progress: Progress | None, cuda_arch: int | None = None) -> CandidateFix:
    keys = [c.key for c in good]
    mechs = [m for c in good for m in c.mechanisms]
    title = "the fixes that improved, together"
    if any(not c.improved for c in good):
        title = "the fixes that improved, with the undecided fixes of the same modules, together"
    combo = CandidateFix(key="+".join(keys), mechanisms=mechs, title=title,
                         edits=merge_edits([e for c in good for e in c.edits]), clock=fix_clock(mechs),
                         status="measured",
                         applicability="review" if any(c.applicability != "automatic" for c in good) else "automatic")
    arm = _candidate_arm(combo, files, root, rel_cwd, command, cwd, scratch.root / "combination")
    if arm is None:
        return combo
    scratch.arms[combo.key], scratch.trees[combo.key] = arm, scratch.root / "combination"
    _measure(base, [arm], options, engine, progress, skip_first=0, cuda_arch=cuda_arch)
    must_keep = [v for k in keys for v in findings[k].must_keep]
    _fill(combo, arm, engine, base, must_keep, options.timeout_s, root)
    return combo


def _kept(result: FixResult) -> CandidateFix | None:
    """The candidate --write would take from the first round (the combination, or the best single fix); with none
    proven, the undecided one a next round may stack on (`tentative_base`)."""
    keys, _edits = to_write(result, unsafe_fixes=True, next_round=False)  # every proven fix: a dry run measures all
    if not keys:
        return tentative_base(result)
    combo = result.combination
    if combo is not None and combo.key.split("+") == keys:
        return combo
    return next((c for c in result.candidates if c.key == keys[0]), None)


def _next_round(result: FixResult, diagnosis: Diagnosis, files: dict[str, bytes], root: Path, rel_cwd: Path,
                command: list[str], cwd: Path, scratch: Scratch, base: Arm, options: FixOptions, engine: Engine,
                progress: Progress | None, cuda_arch: int | None) -> None:
    """Diagnose the kept tree from its own samples; measure each new finding's edits on top of it."""
    from ..composition import PRICED
    from .rounds import diagnose_kept, layered, new_findings, stacked_candidate

    kept = _kept(result)
    arm = scratch.arms.get(kept.key) if kept is not None else None
    if kept is None or arm is None:
        return
    tree = scratch.trees[kept.key]
    again = diagnose_kept(arm, tree, engine, progress, options.below_line)
    priced = {r.mechanism for r in diagnosis.ruled_out if PRICED in r.signal}
    fresh, gone = new_findings(fix_findings(diagnosis, options.below_line), again, kept.mechanisms, priced)
    result.not_offered += gone
    if not fresh:
        return
    try:
        kept_files = layered(files, [kept.edits])
    except EditConflict:
        return
    arms = []
    for i, f in enumerate(fresh, 1):
        c = stacked_candidate(f, f"{f.mechanism}@{kept.key}", kept)
        a = _candidate_arm(c, kept_files, root, rel_cwd, command, cwd, scratch.root / f"next{i}")
        result.next_round.append(c)
        if a is not None:
            _add_launch_args(a, kept.edits)
            arms.append((c, a, f))
    if not arms:
        return
    (progress or (lambda _m: None))(f"fix: measuring {len(arms)} fix(es) found on the kept tree {kept.key}")
    _measure(base, [a for _c, a, _f in arms], options, engine, progress, skip_first=0, cuda_arch=cuda_arch)
    for c, a, f in arms:
        _fill(c, a, engine, base, f.must_keep, options.timeout_s, root)
        if c.improved and (c.saving_ms or 0.0) <= (kept.saving_ms or 0.0):
            c.improved = False
            c.reason = f"on top of {kept.key} it saves no more than {kept.key} alone"
    good = [(c, f) for c, _a, f in arms if c.improved]
    if options.combine and len(good) >= 2:  # the next round's fixes together, on top of the kept tree
        _next_combination(result, good, kept, kept_files, root, rel_cwd, command, cwd, scratch, base, options,
                          engine, progress, cuda_arch)


def _next_combination(result: FixResult, good: list[tuple[CandidateFix, Finding]], kept: CandidateFix,
                      kept_files: dict[str, bytes], root: Path, rel_cwd: Path, command: list[str], cwd: Path,
                      scratch: Scratch, base: Arm, options: FixOptions, engine: Engine, progress: Progress | None,
                      cuda_arch: int | None) -> None:
    """Measure the improved next-round fixes together on top of the kept tree; it is written instead of the best
    single one only when it saves more than that one."""
    from .policy import fix_clock

    edits = merge_edits([e for c, _f in good for e in c.edits])
    mechs = list(dict.fromkeys(m for c, _f in good for m in c.mechanisms))
    key = "+".join(c.key.split("@")[0] for c, _f in good) + f"@{kept.key}"
    combo = CandidateFix(key=key, mechanisms=mechs, title=f"the fixes found on the tree {kept.key} leaves, together",
                         applicability="review" if any(c.applicability != "automatic" for c, _f in good) else
                         "automatic", edits=edits, clock=fix_clock(mechs), status="measured", on_top_of=kept.key,
                         review="; ".join(dict.fromkeys(c.review for c, _f in good if c.review)))
    result.next_round.append(combo)
    arm = _candidate_arm(combo, kept_files, root, rel_cwd, command, cwd, scratch.root / "next-combination")
    if arm is None:
        return
    _add_launch_args(arm, kept.edits)
    (progress or (lambda _m: None))(f"fix: measuring {key}")
    _measure(base, [arm], options, engine, progress, skip_first=0, cuda_arch=cuda_arch)
    _fill(combo, arm, engine, base, [v for _c, f in good for v in f.must_keep], options.timeout_s, root)
    best = max((c.saving_ms or 0.0) for c, _f in good)
    if combo.improved and (combo.saving_ms or 0.0) <= best:
        combo.improved = False
        combo.reason = "together they save no more than the best of them alone"


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _write(result: FixResult, root: Path, files: dict[str, bytes], unsafe_fixes: bool = False) -> None:
    """Apply the proven edits to the project: every file they touch must still hold what was copied (all or
    nothing); the diff written is computed from the project's files before writing."""
    keys, edits = to_write(result, unsafe_fixes)
    if not edits:
        return
    layers = layers_to_write(result, unsafe_fixes)
    touched = {e.file for e in edits}
    for rel in sorted(touched):
        path = root / rel
        if rel in files:
            if not path.is_file() or _digest(path.read_bytes()) != _digest(files[rel]):
                raise UsageError(f"fix --write: {rel} changed since it was copied and measured; nothing was written")
        elif path.exists():
            raise UsageError(f"fix --write: {rel} appeared since the copy was made; nothing was written")
    if layers is not None:  # a next-round fix on top: its lines refer to the tree the first layer leaves
        from .rounds import layered, tree_diff

        before = {rel: files[rel] for rel in touched if rel in files}
        after = layered(before, layers[1])
        result.written_diff = tree_diff(before, after)
        for rel, data in after.items():
            if before.get(rel) != data:
                (root / rel).parent.mkdir(parents=True, exist_ok=True)
                (root / rel).write_bytes(data)
        result.written, result.applied = sorted(r for r in after if before.get(r) != after[r]), keys
        result.realised = realised(result)
        return
    new_texts(root, edits)  # every edit checked against the project before the first byte is written
    result.written_diff = unified_diff(root, edits)
    result.written = apply_edits(root, edits)
    result.applied = keys
    result.realised = realised(result)
