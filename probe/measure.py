"""`measure`: cold run then warm re-run per sample, each sample in a fresh sandbox; statistics into a Report."""

from __future__ import annotations

import math
import os
import platform
import threading
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from .. import __version__
from .contention import is_contended, typical
from .errors import UsageError
from .events import RunEvents, read_events
from .interpreter import missing_warp, no_warp_hint, resolve_interpreter
from .live import LiveProgress
from .logparse import builds_from_log
from .models import Build, CacheFacts, Report, RunResult, SampleResult, Warn, WarningCode, warn
from .ownership import OwnerQuery
from .sandbox import RunOutcome, Sandbox, last_lines
from .stats import median, overlap_factor, stat_of

Progress = Callable[[str], None]
CUDA_ARCH_ENV = "WARP_COMPILE_CUDA_ARCH"  # read by the hook: replay the run's modules for sm_N at exit


@dataclass
class RunData:
    result: RunResult
    events: RunEvents
    stdout: str = ""  # the app's captured stdout (capped), which the evals compare with the expected output


@dataclass
class SampleData:
    """One sample: a cold run on empty caches and a warm re-run against the cache it filled."""

    index: int
    cold: RunData
    warm: RunData | None
    ok: bool
    failure: str | None
    lto_artifacts: int
    sandbox_cache_dir: str

    def to_result(self) -> SampleResult:
        return SampleResult(
            index=self.index,
            ok=self.ok,
            cold=self.cold.result,
            warm=self.warm.result if self.warm else None,
            failure=self.failure,
        )


def check_inputs(command: list[str], cwd: Path, samples: int, timeout_s: float) -> Path:
    """Validate before anything runs; returns the resolved cwd."""
    if not command:
        raise UsageError("no command given: put the command to measure after `--`, e.g. `-- python -m app`")
    if isinstance(command, str) or not all(isinstance(a, str) for a in command):
        raise UsageError("the command must be a list of arguments (argv), not a shell string")
    if samples < 1:
        raise UsageError(f"--samples must be at least 1 (got {samples})")
    if not math.isfinite(timeout_s) or timeout_s <= 0:
        raise UsageError(f"--timeout must be a positive, finite number of seconds (got {timeout_s})")
    cwd = Path(cwd).expanduser()
    if not cwd.is_dir():
        raise UsageError(f"working directory does not exist or is not a directory: {cwd}")
    return cwd.resolve()


def _run_data(phase: str, outcome: RunOutcome) -> RunData:
    events = read_events(outcome.events_path)
    if (events.warp_imported and events.hook.mode == "log") or (not events.hello and "Module " in outcome.stdout):
        events.builds = builds_from_log(outcome.stdout)
    exit_cpu = events.exit_work_cpu_ms if events.exit_work_ms is not None else 0.0
    cpu = outcome.cpu_ms
    result = RunResult(
        phase=phase,  # type: ignore[arg-type]
        wall_ms=round(outcome.wall_ms - events.hook_exit_ms, 3),  # the replay and rebuilds ran after the app
        exit_work_ms=round(events.hook_exit_ms, 3),
        cpu_ms=round(cpu - exit_cpu, 3) if cpu is not None and exit_cpu is not None else None,
        user_ms=round(outcome.user_ms, 3) if outcome.user_ms is not None else None,
        sys_ms=round(outcome.sys_ms, 3) if outcome.sys_ms is not None else None,
        other_share=outcome.other_share,
        exit_code=outcome.exit_code,
        timed_out=outcome.timed_out,
        **events.totals(),
        compiled=events.count("compiled"),
        cached=events.count("cached"),
        errors=sum(1 for b in events.builds if b.status.startswith("error")),
        launches=events.launch_total,
        stderr_tail=last_lines(outcome.stderr) if outcome.exit_code != 0 else "",
    )
    return RunData(result=result, events=events, stdout=outcome.stdout)


def _failure(phase: str, outcome: RunOutcome, timeout_s: float, events: RunEvents | None = None,
             interpreter: str | None = None, cwd: Path | None = None) -> str | None:
    if outcome.timed_out:
        return f"{phase} run timed out after {timeout_s:g} s"
    if outcome.exit_code != 0:
        text = f"{phase} run exited with code {outcome.exit_code}"
        if events is not None and cwd is not None and missing_warp(events, outcome.stderr):
            text += ": " + no_warp_hint(events.executable or interpreter, cwd)
        return text
    return None


def _ticker(progress: Progress | None, label: str, expected: int | None) -> Callable[[Path], None] | None:
    return LiveProgress(progress, label, expected).poll if progress else None


def run_sample(
    command: list[str],
    cwd: Path,
    index: int,
    timeout_s: float = 900.0,
    progress: Progress | None = None,
    cancel: threading.Event | None = None,
    expected_compiles: int | None = None,
    extra_env: dict[str, str] | None = None,
    cuda_arch: int | None = None,
    on_cold: Callable[[RunData], None] | None = None,
    cold_env: dict[str, str] | None = None,
) -> SampleData:
    """One cold + one warm run in a fresh sandbox (removed afterwards, whatever happens).

    With `progress`, each module build is reported while the run goes (see probe/live.py);
    `expected_compiles` (an earlier sample's count) fills in the "3 of N" of those lines. `extra_env` carries an
    experiment's settings to the hook (`warp-compile try`); `cuda_arch` asks the cold run for the NVRTC replay.
    `on_cold` sees the cold run before the warm run starts (measure starts the ownership query there).
    `cold_env` is extra environment for the cold run only (diagnose's settings rebuilds, see probe/pricing.py).
    """
    n = index + 1
    with Sandbox(extra_env) as box:
        if progress:
            progress(f"sample {n}: cold run")
        cuda_env = {CUDA_ARCH_ENV: str(cuda_arch)} if cuda_arch else {}  # only the cold run replays
        cuda_env = {**cuda_env, **(cold_env or {})} or None
        cold_out = box.run(
            command, cwd, timeout_s, cancel, _ticker(progress, f"sample {n} cold", expected_compiles),
            extra_env=cuda_env,
        )
        cold = _run_data("cold", cold_out)
        if on_cold is not None:
            on_cold(cold)
        interpreter = resolve_interpreter(command, cwd)
        failure = _failure("cold", cold_out, timeout_s, cold.events, interpreter, cwd)
        warm = None
        if failure is None:
            if progress:
                progress(f"sample {n}: warm run")
            warm_out = box.run(command, cwd, timeout_s, cancel, _ticker(progress, f"sample {n} warm", None))
            warm = _run_data("warm", warm_out)
            failure = _failure("warm", warm_out, timeout_s, warm.events, interpreter, cwd)
        return SampleData(
            index=index,
            cold=cold,
            warm=warm,
            ok=failure is None,
            failure=failure,
            lto_artifacts=box.lto_artifacts(),
            sandbox_cache_dir=str(box.warp_cache),
        )


def measure(
    command: list[str],
    cwd: Path,
    samples: int = 3,
    timeout_s: float = 900.0,
    label: str = "",
    progress: Progress | None = None,
    cancel: threading.Event | None = None,
    extra_env: dict[str, str] | None = None,
    cuda_arch: int | None = None,
    first_cold_env: dict[str, str] | None = None,
) -> Report:
    """`samples` cold + warm samples into a Report; `first_cold_env` goes to the first cold run only (diagnose's
    settings rebuilds run there once, not in every sample)."""
    cwd = check_inputs(command, cwd, samples, timeout_s)
    data: list[SampleData] = []
    owners: list[OwnerQuery] = []

    def ask_owners_early(cold: RunData) -> None:
        """The app's interpreter and files are known after the first cold run: ask who owns them now, while the
        warm run goes (on the other core, at a low priority), not after the last sample."""
        ev = cold.events
        if ev.executable and (os.cpu_count() or 1) > 1:  # on one core it would slow the warm run: ask at the end
            owners.append(OwnerQuery(ev.executable, _place_files(command, cwd, ev), str(cwd), background=True))

    try:
        for i in range(samples):
            expected = data[-1].cold.result.compiled if data and data[-1].ok else None
            data.append(
                run_sample(
                    command, cwd, i, timeout_s, progress, cancel, expected, extra_env=extra_env, cuda_arch=cuda_arch,
                    on_cold=ask_owners_early if i == 0 else None, cold_env=first_cold_env if i == 0 else None,
                )
            )
        report = build_report(command, cwd, data, label=label, requested=samples)
        ref = next((s for s in data if s.ok), data[-1] if data else None)
        if ref is not None:
            attach_places(report, ref.cold.events, owners[0] if owners else None)
    finally:
        for query in owners:
            query.close()  # collected by now, or stopped: no child process outlives the measurement
    return report


def _place_files(command: list[str], cwd: Path, ev: RunEvents) -> set[str]:
    """The files a report built from these events will name (the builds', launches', calls' ... and the entry's)."""
    from .entry import find_entry
    from .ownership import report_files

    entry = find_entry(command, cwd, ev.main_file, ev.imported_files)
    items = (*ev.builds, *ev.launches, *ev.calls, *ev.tapes, *ev.module_creations, *ev.cuda_builds)
    return report_files([m.model_dump(mode="json") for m in items]) | {f for f in (entry.file, entry.launcher) if f}


def attach_places(report: Report, ev: RunEvents, pending: OwnerQuery | None = None) -> None:
    """The entry point, and who owns each file the report names (asked of the interpreter that ran the app;
    `pending` is a query already started for it, see `measure`)."""
    from .entry import find_entry, with_owner
    from .ownership import ask_interpreter, owners_from_answer, report_files

    entry = find_entry(report.command, Path(report.cwd), ev.main_file, ev.imported_files)
    if ev.executable:
        files = report_files(report.model_dump(mode="json")) | {f for f in (entry.file, entry.launcher) if f}
        answer = ask_interpreter(ev.executable, files, report.cwd, pending=pending)
        if answer is not None:
            report.owners = owners_from_answer(answer, report.cwd)
    report.entry = with_owner(entry, report.owners, report.cwd)


def _overlap(builds: list[Build]) -> float | None:
    factor = overlap_factor([(b.start_ms, b.end_ms) for b in builds])
    return round(factor, 3) if factor is not None else None


def _reference(ok: list[SampleData]) -> SampleData | None:
    """The sample whose cold module work is closest to the median: typical, not lucky."""
    if not ok:
        return None
    m = median([s.cold.result.module_ms for s in ok])
    return min(ok, key=lambda s: (abs(s.cold.result.module_ms - m), s.index))


def _is_inside(path: str | None, root: str) -> bool:
    if not path:
        return True
    try:
        return os.path.commonpath([os.path.realpath(path), os.path.realpath(root)]) == os.path.realpath(root)
    except ValueError:
        return False


def machine_share(ok: list[SampleData]) -> float | None:
    """The median share of the machine other work used over the successful samples' runs, cold and warm."""
    return typical([r.other_share for s in ok for r in (s.cold.result, s.warm.result if s.warm else None) if r])


def _warnings(data: list[SampleData], ok: list[SampleData], ref: SampleData | None, cwd: Path) -> list[Warn]:
    out: list[Warn] = []
    failed = [s for s in data if not s.ok]
    if failed and ok:
        each = [{"sample": s.index + 1, "failure": s.failure} for s in failed]
        out.append(warn(WarningCode.SAMPLES_FAILED, failed=len(failed), samples=len(data), failures=each))
    if ref is None:
        return out
    ev = ref.cold.events
    if not ref.cold.events.hello:
        out.append(warn(WarningCode.HOOK_NOT_STARTED))
    elif ev.warp_missing:
        out.append(warn(WarningCode.WARP_MISSING, hint=no_warp_hint(ev.executable, cwd)))
    elif not ev.warp_imported:
        out.append(warn(WarningCode.WARP_NOT_IMPORTED))
    elif not ev.builds:
        out.append(warn(WarningCode.NO_MODULE_LOADED))
    if ev.hook.mode == "log":
        out.append(warn(WarningCode.LOG_FALLBACK))
    for err in ev.hook.errors:
        out.append(warn(WarningCode.HOOK_ERROR, error=err))
    if ev.launches_truncated:
        recorded = sum(lc.count for lc in ev.launches)
        out.append(warn(WarningCode.LAUNCHES_TRUNCATED, recorded=recorded, total=ev.launch_total))
    facts = CacheFacts(kernel_cache_dir=ev.kernel_cache_dir, sandbox_cache_dir=ref.sandbox_cache_dir,
                       left_sandbox=not _is_inside(ev.kernel_cache_dir, ref.sandbox_cache_dir))
    if facts.outside_sandbox:
        out.append(warn(WarningCode.CACHE_DIR_OUTSIDE, path=ev.kernel_cache_dir))
    elif facts.left_sandbox:  # its own directory under the sandbox's temp root: not "outside the sandbox"
        out.append(warn(WarningCode.CACHE_DIR_OWN, path=ev.kernel_cache_dir))
    if ref.warm and ref.warm.result.compiled:
        out.append(warn(WarningCode.WARM_RECOMPILED, modules=ref.warm.result.compiled))
    share = machine_share(ok)
    if is_contended(share):
        out.append(warn(WarningCode.CONTENDED, share=share, side=""))
    if len(ok) >= 2:
        cw = [s.cold.result.wall_ms for s in ok]
        if max(cw) > 1.5 * min(cw):
            out.append(warn(WarningCode.COLD_WALL_VARIES))
    return out


def _cuda_cpu(s: SampleData) -> float | None:
    """Summed thread CPU time of a sample's --cuda-arch replay builds (None if one did not record it)."""
    done = [b.cpu_ms for b in s.cold.events.cuda_builds if b.status == "compiled"]
    return None if None in done else sum(v or 0.0 for v in done)


def build_report(
    command: list[str],
    cwd: Path,
    samples: list[SampleData],
    label: str = "",
    requested: int | None = None,
) -> Report:
    ok = [s for s in samples if s.ok]
    ref = _reference(ok)
    if ref is None and samples:
        ref_any: SampleData | None = samples[-1]
    else:
        ref_any = ref

    def clock(get: Callable[[SampleData], float]) -> object:
        return stat_of([round(get(s), 3) for s in ok])

    elapsed = [s.cold.result.wall_ms - s.warm.result.wall_ms for s in ok if s.warm]

    def cpu_clock(get: Callable[[SampleData], float | None]) -> object:
        """A CPU clock only where every successful sample measured it (a partial one would not compare)."""
        values = [get(s) for s in ok]
        return stat_of([round(v, 3) for v in values]) if values and None not in values else stat_of([])

    def compile_cpu(s: SampleData) -> float | None:
        cold, warm = s.cold.result.cpu_ms, s.warm.result.cpu_ms if s.warm else None
        return None if cold is None or warm is None else cold - warm
    report = Report(
        tool_version=__version__,
        command=list(command),
        cwd=str(cwd),
        interpreter=resolve_interpreter(command, cwd),
        label=label,
        platform=platform.platform(),
        machine=f"{platform.machine()} {os.cpu_count()} cpu",
        created_at=datetime.now(timezone.utc).isoformat(timespec="seconds"),
        samples=requested if requested is not None else len(samples),
        failed_samples=sum(1 for s in samples if not s.ok),
        reference_sample=ref_any.index if ref_any else None,
        cold_module_ms=clock(lambda s: s.cold.result.module_ms),
        warm_module_ms=clock(lambda s: s.warm.result.module_ms if s.warm else 0.0),
        native_compile_ms=clock(lambda s: s.cold.result.native_ms),
        codegen_ms=clock(lambda s: s.cold.result.codegen_ms),
        pch_ms=clock(lambda s: s.cold.result.pch_ms),
        cold_wall_ms=clock(lambda s: s.cold.result.wall_ms),
        warm_wall_ms=clock(lambda s: s.warm.result.wall_ms if s.warm else 0.0),
        compile_elapsed_ms=stat_of([round(x, 3) for x in elapsed]),
        cuda_compile_ms=clock(lambda s: sum(b.ms for b in s.cold.events.cuda_builds if b.status == "compiled"))
        if any(s.cold.events.cuda_builds for s in ok)
        else stat_of([]),
        sample_results=[s.to_result() for s in samples],
        warnings=_warnings(samples, ok, ref, Path(cwd)),
        cold_cpu_ms=cpu_clock(lambda s: s.cold.result.cpu_ms),
        warm_cpu_ms=cpu_clock(lambda s: s.warm.result.cpu_ms if s.warm else None),
        compile_cpu_ms=cpu_clock(compile_cpu),
        steady_ms=cpu_clock(lambda s: s.cold.events.steady_ms),
        steady_cpu_ms=cpu_clock(lambda s: s.cold.events.steady_cpu_ms),
        cold_module_cpu_ms=cpu_clock(lambda s: s.cold.result.module_cpu_ms),
        native_compile_cpu_ms=cpu_clock(lambda s: s.cold.result.native_cpu_ms),
        pch_cpu_ms=cpu_clock(lambda s: s.cold.result.pch_cpu_ms),
        cuda_compile_cpu_ms=cpu_clock(_cuda_cpu) if any(s.cold.events.cuda_builds for s in ok) else stat_of([]),
        other_share=machine_share(ok),
        rebuild=next((s.cold.events.rebuild for s in samples if s.cold.events.rebuild is not None), None),
    )
    if ref_any is not None:
        ev = ref_any.cold.events
        report.warp_version = ev.warp_version
        report.python = ev.python
        report.python_executable = ev.executable
        report.builds = ev.builds
        report.warm_builds = ref_any.warm.events.builds if ref_any.warm else []
        report.pch = ev.pch
        report.launches = ev.launches
        report.launch_count = ev.launch_total
        report.launches_truncated = ev.launches_truncated
        report.config_at_import = ev.config_at_import
        report.experiment = ev.experiment
        report.tapes = ev.tapes
        report.imported_files = ev.imported_files
        report.module_creations = ev.module_creations
        report.kernel_creations = ev.kernel_creations
        report.hook = ev.hook
        report.overlap_factor = _overlap(ev.builds)
        report.cuda_builds, report.cuda_concurrent = ev.cuda_builds, ev.cuda_concurrent
        report.cuda_replay = ev.cuda_replay
        report.generated_source_bytes = sum(b.source_bytes for b in ev.builds if b.status == "compiled")
        report.lto_artifacts = ref_any.lto_artifacts
        loaded = [b for b in ev.builds if b.status in ("compiled", "cached")]
        report.identities = len({(b.module, b.hash, b.device, b.block_dim) for b in loaded})
        report.modules = len({b.module for b in loaded})
        report.cache = CacheFacts(
            cache_kernels=ev.cache_kernels,
            kernel_cache_dir=ev.kernel_cache_dir,
            sandbox_cache_dir=ref_any.sandbox_cache_dir,
            left_sandbox=not _is_inside(ev.kernel_cache_dir, ref_any.sandbox_cache_dir),
            cuda_cache_disable=ev.cuda_cache_disable,
            calls=ev.calls,
        )
    return report
