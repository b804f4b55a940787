"""Turn one run's hook output (JSON lines) into report models. Pure: text in, models out."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .models import (
    ApiCall,
    Build,
    CudaBuild,
    CudaConcurrent,
    CudaReplay,
    HookInfo,
    KernelCreation,
    KernelInfo,
    Launch,
    ModuleCreation,
    PchBuild,
    PhaseSpan,
    Rebuild,
    Site,
    Trigger,
    WarpSite,
)


@dataclass
class RunEvents:
    """Everything the hook saw in one process run (all processes of the run, in event order)."""

    hello: bool = False
    warp_imported: bool = False
    warp_version: str | None = None
    python: str | None = None
    executable: str | None = None  # sys.executable of the first process the hook started in
    warp_missing: bool = False  # `import warp` found no package in that interpreter
    builds: list[Build] = field(default_factory=list)
    pch: list[PchBuild] = field(default_factory=list)
    launches: list[Launch] = field(default_factory=list)
    launch_total: int = 0
    launches_truncated: bool = False
    calls: list[ApiCall] = field(default_factory=list)
    module_creations: list[ModuleCreation] = field(default_factory=list)
    kernel_creations: list[KernelCreation] = field(default_factory=list)
    config_at_import: dict[str, str] = field(default_factory=dict)
    experiment: dict[str, str] = field(default_factory=dict)  # setting -> applied / unsupported (try)
    tapes: list[Site] = field(default_factory=list)  # where a wp.Tape was first created (per call site)
    imported_files: list[str] = field(default_factory=list)  # module files the process imported (not stdlib/warp)
    main_file: str | None = None  # __main__.__file__ of the first process that imported warp
    main_module: str | None = None  # its module name under `python -m`
    config_at_exit: dict[str, str] = field(default_factory=dict)
    kernel_cache_dir: str | None = None
    cache_kernels: bool | None = None
    cuda_cache_disable: str | None = None
    hook: HookInfo = field(default_factory=HookInfo)
    malformed_lines: int = 0
    cuda_builds: list[CudaBuild] = field(default_factory=list)
    cuda_concurrent: CudaConcurrent | None = None
    cuda_replay: CudaReplay | None = None
    # the hook's own work at exit (replay, rebuilds), on both clocks; None: the hook did not time it
    exit_work_ms: float | None = None
    exit_work_cpu_ms: float | None = None
    rebuild: Rebuild | None = None
    app_end_ms: float | None = None  # the first process's app finished (its hook's exit work begins), hook clock
    app_end_cpu_ms: float | None = None  # the first process's CPU time at that moment (its exit work's start)

    @property
    def steady_ms(self) -> float | None:
        """The run after its last module load, up to the app's end: the calls it repeats once everything is built
        (the per-call clock of WC-1: a kernel made again at every call costs here, a module built once does not).
        None without an exit record or a load."""
        ends = [b.end_ms for b in self.builds if b.status in ("compiled", "cached") and b.end_ms > 0]
        if self.app_end_ms is None or not ends:
            return None
        return round(max(0.0, self.app_end_ms - max(ends)), 3)

    @property
    def steady_cpu_ms(self) -> float | None:
        """steady_ms on the first process's CPU clock: its CPU time from the end of the run's last module load to the
        app's end. None where the last load was another process's, or either reading is missing (an older hook)."""
        loads = [b for b in self.builds if b.status in ("compiled", "cached") and b.end_ms > 0]
        if self.app_end_cpu_ms is None or not loads:
            return None
        last = max(loads, key=lambda b: b.end_ms)
        if last.proc_cpu_end_ms is None:
            return None
        return round(max(0.0, self.app_end_cpu_ms - last.proc_cpu_end_ms), 3)

    @property
    def cuda_replay_ms(self) -> float:
        """Time the --cuda-arch replay took at exit: not part of the app's run."""
        return self.cuda_replay.ms if self.cuda_replay is not None else 0.0

    @property
    def hook_exit_ms(self) -> float:
        """Wall time of everything the hook added at exit (the replay and the rebuilds included)."""
        return self.exit_work_ms if self.exit_work_ms is not None else self.cuda_replay_ms

    def totals(self) -> dict[str, Any]:
        """The run's clocks, summed over its builds (ms): module work, native compile, codegen, headers; and the
        same on the building threads' CPU clocks where every build and header recorded one (else None)."""
        def cpu(values: list[float | None]) -> float | None:
            return None if any(v is None for v in values) else round(sum(v or 0.0 for v in values), 3)

        return {
            "module_ms": round(sum(b.ms for b in self.builds), 3),
            "native_ms": round(sum(b.native_ms for b in self.builds), 3),
            "codegen_ms": round(sum(b.codegen_ms for b in self.builds), 3),
            "pch_ms": round(sum(p.ms for p in self.pch), 3),
            "module_cpu_ms": cpu([b.cpu_ms for b in self.builds]),
            "native_cpu_ms": cpu([b.native_cpu_ms for b in self.builds]),
            "pch_cpu_ms": cpu([p.cpu_ms for p in self.pch]),
            "work": self.work(),
        }

    def work(self) -> dict[str, list[float | None]]:
        """Each compiled build and header of the run by what it built (a module's name, hash, device and block_dim;
        a header's file name) -> [wall ms, CPU ms]: two runs that list the same key did that work identically, so a
        comparison can leave it out of the clock it decides on."""
        out: dict[str, list[float | None]] = {}
        for b in self.builds:
            if b.status != "compiled":
                continue
            key = f"{b.module}@{b.hash}@{b.device}@{b.block_dim}"
            wall, cpu = out.get(key, [0.0, 0.0])
            out[key] = [round((wall or 0.0) + b.ms, 3), None if cpu is None or b.cpu_ms is None
                        else round(cpu + b.cpu_ms, 3)]
        for h in self.pch:
            key = "header:" + h.file.replace("\\", "/").rsplit("/", 1)[-1]
            wall, cpu = out.get(key, [0.0, 0.0])
            out[key] = [round((wall or 0.0) + h.ms, 3), None if cpu is None or h.cpu_ms is None
                        else round(cpu + h.cpu_ms, 3)]
        return out

    def count(self, status: str) -> int:
        return sum(1 for b in self.builds if b.status == status)


def _site(d: object) -> Site | None:
    if not isinstance(d, dict) or "file" not in d or "line" not in d:
        return None
    return Site(file=str(d["file"]), line=int(d["line"]), function=str(d.get("function", "")))


def _warp_site(d: object) -> WarpSite | None:
    if not isinstance(d, dict) or "file" not in d or "line" not in d:
        return None
    return WarpSite(file=str(d["file"]), line=int(d["line"]), function=str(d.get("function", "")))


def _trigger(d: object) -> Trigger | None:
    if not isinstance(d, dict) or "file" not in d or "line" not in d:
        return None
    return Trigger(
        file=str(d["file"]),
        line=int(d["line"]),
        function=str(d.get("function", "")),
        api=str(d.get("api", "") or ""),
        via=d.get("via"),
        stack=[s for s in (_site(x) for x in d.get("stack") or []) if s is not None],
        outer=_site(d.get("outer")),
    )


def _num(v: object) -> float | None:
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def _build(e: dict) -> Build:
    h = str(e.get("hash", ""))
    return Build(
        seq=int(e.get("seq", 0)),
        module=str(e.get("module", "")),
        hash=h,
        hash_short=h[:7],
        device=str(e.get("device", "")),
        block_dim=e.get("block_dim"),
        status=e.get("status", "cached"),
        ms=float(e.get("ms", 0.0)),
        hash_ms=float(e.get("hash_ms", 0.0)),
        codegen_ms=float(e.get("codegen_ms", 0.0)),
        native_ms=float(e.get("native_ms", 0.0)),
        native_load_ms=float(e.get("native_load_ms", 0.0)),
        other_ms=float(e.get("other_ms", 0.0)),
        pch_ms=float(e.get("pch_ms", 0.0)),
        cpu_ms=_num(e.get("cpu_ms")),
        native_cpu_ms=_num(e.get("native_cpu_ms")),
        source_bytes=int(e.get("source_bytes") or 0),
        backward_in_source=e.get("backward_in_source"),
        backward_source_bytes=e.get("backward_source_bytes"),
        kernels=[KernelInfo(**k) for k in e.get("kernels", []) if isinstance(k, dict) and "key" in k],
        functions={str(k): str(v) for k, v in (e.get("functions") or {}).items()},
        options={str(k): str(v) for k, v in (e.get("options") or {}).items()},
        options_source=str(e.get("options_source", "")),
        config_shadow={str(k): [str(x) for x in v] for k, v in (e.get("config_shadow") or {}).items()},
        trigger=_trigger(e.get("trigger")),
        thread=int(e.get("tid", 0)),
        start_ms=float(e.get("start_ms", 0.0)),
        end_ms=float(e.get("end_ms", 0.0)),
        proc_cpu_end_ms=_num(e.get("proc_cpu_end_ms")),
        error=e.get("error"),
        spans=[
            PhaseSpan(phase=str(x[0]), start_ms=float(x[1]), end_ms=float(x[2]))
            for x in e.get("spans") or []
            if isinstance(x, list) and len(x) == 3
        ],
    )


def parse_lines(lines: list[str]) -> RunEvents:
    """Launch records arrive at their first launch (count 1) and get their counts from the process's exit event;
    a process that died before exiting keeps count 1 per record."""
    run = RunEvents()
    launch_index: dict[tuple[object, object], int] = {}  # (pid, launch id) -> index in run.launches
    created_at: dict[tuple[object, object], int] = {}  # (pid, seq) -> index in run.kernel_creations
    main_pid: object = None  # the first process the hook started in
    for raw in lines:
        raw = raw.strip()
        if not raw:
            continue
        try:
            e = json.loads(raw)
        except json.JSONDecodeError:
            run.malformed_lines += 1  # e.g. a line cut short by a killed process
            continue
        if not isinstance(e, dict):
            run.malformed_lines += 1
            continue
        kind = e.get("kind")
        if kind == "hello":
            main_pid = e.get("pid") if main_pid is None else main_pid
            run.hello = True
            run.python = run.python or e.get("python")
            run.executable = run.executable or e.get("executable")
            run.hook.hook_version = str(e.get("hook_version", ""))
            env = e.get("env") or {}
            run.cuda_cache_disable = run.cuda_cache_disable or env.get("CUDA_CACHE_DISABLE")
        elif kind == "warp_missing":
            run.warp_missing = True
        elif kind == "warp_import":
            if not run.warp_imported:
                run.warp_imported = True
                run.warp_version = e.get("warp_version")
                run.config_at_import = {str(k): str(v) for k, v in (e.get("config") or {}).items()}
                run.experiment = {str(k): str(v) for k, v in (e.get("experiment") or {}).items()}
                run.hook.mode = e.get("mode", "none")
                run.hook.targets = {str(k): str(v) for k, v in (e.get("targets") or {}).items()}
        elif kind == "load":
            run.builds.append(_build(e))
            if main_pid not in (None, e.get("pid")):
                run.builds[-1].proc_cpu_end_ms = None  # another process's CPU clock: no span of the first's
            run.kernel_cache_dir = e.get("kernel_cache_dir") or run.kernel_cache_dir
            if e.get("cache_kernels") is not None:
                run.cache_kernels = bool(e.get("cache_kernels"))
        elif kind == "pch":
            run.pch.append(
                PchBuild(
                    ms=float(e.get("ms", 0.0)),
                    file=str(e.get("file", "")),
                    thread=int(e.get("tid", 0)),
                    during_module=e.get("during_module"),
                    during_seq=e.get("during_seq"),
                    start_ms=e.get("start_ms"),
                    cpu_ms=_num(e.get("cpu_ms")),
                )
            )
        elif kind == "launch":
            if "lid" in e:
                launch_index[(e.get("pid"), e.get("lid"))] = len(run.launches)
            run.launches.append(
                Launch(
                    kernel=str(e.get("kernel", "")),
                    module=str(e.get("module", "")),
                    dim=[int(x) for x in e.get("dim") or []],
                    device=str(e.get("device", "")),
                    dtypes=[str(x) for x in e.get("dtypes") or []],
                    block_dim=e.get("block_dim"),
                    adjoint=bool(e.get("adjoint", False)),
                    tiled=bool(e.get("tiled", False)),
                    site=_site(e.get("site")),
                    count=int(e.get("count", 1)),
                    first_ms=float(e.get("t_ms", 0.0)),
                    thread=int(e.get("tid", 0)),
                )
            )
        elif kind == "api":
            run.calls.append(
                ApiCall(
                    api=str(e.get("api", "")),
                    seq=int(e.get("seq", 0)),
                    module=e.get("module"),
                    site=_site(e.get("site")),
                    detail={str(k): str(v) for k, v in (e.get("detail") or {}).items()},
                )
            )
        elif kind == "tape":
            site = _site(e.get("site"))
            if site is not None:
                run.tapes.append(site)
        elif kind == "module_created":
            run.module_creations.append(
                ModuleCreation(
                    module=str(e.get("module", "")),
                    options={str(k): str(v) for k, v in (e.get("options") or {}).items()},
                    site=_site(e.get("site")),
                    start_ms=float(e.get("t_ms", 0.0)),
                )
            )
        elif kind == "kernel_made":  # the decorator's whole time, for the creation it completed
            i = created_at.get((e.get("pid"), e.get("of_seq")))
            if i is not None:
                run.kernel_creations[i].made_ms = _num(e.get("ms"))
        elif kind == "kernel_created":
            created_at[(e.get("pid"), e.get("seq"))] = len(run.kernel_creations)
            run.kernel_creations.append(
                KernelCreation(
                    key=str(e.get("key", "")), module=str(e.get("module", "")), file=str(e.get("file", "")),
                    line=int(e.get("line", 0) or 0), function=str(e.get("function", "")),
                    args={str(k): v for k, v in (e.get("args") or {}).items() if isinstance(v, dict)},
                    at_import=bool(e.get("at_import")), caller=_site(e.get("caller")),
                    made_by=str(e.get("made_by", "kernel")), signature=str(e.get("signature", "")),
                    outer=[f for f in (e.get("outer") or []) if isinstance(f, dict)],
                    start_ms=float(e.get("t_ms", 0.0)), init_ms=_num(e.get("init_ms")), via=_warp_site(e.get("via")),
                    mapped=e.get("mapped") if isinstance(e.get("mapped"), dict) else None,
                )
            )
        elif kind in ("cuda_build", "cuda_concurrent", "cuda_replay"):
            _cuda_event(run, kind, e)
        elif kind == "exit_work":
            # CPU: every process's (its rusage reaches the parent's); wall: the first process's only (a child's
            # exit work overlaps its parent's run)
            if main_pid in (None, e.get("pid")):
                run.exit_work_ms = (run.exit_work_ms or 0.0) + (_num(e.get("wall_ms")) or 0.0)
                end = _num(e.get("t_ms"))
                if end is not None:  # its exit work ended at t_ms: the app itself ended that long before
                    run.app_end_ms = round(end - (_num(e.get("wall_ms")) or 0.0), 3)
                run.app_end_cpu_ms = _num(e.get("cpu_at_start_ms"))
            cpu = _num(e.get("cpu_ms"))
            run.exit_work_cpu_ms = None if cpu is None else (run.exit_work_cpu_ms or 0.0) + cpu
        elif kind == "rebuild":
            try:
                run.rebuild = Rebuild.model_validate(e)
            except ValueError:
                run.malformed_lines += 1
        elif kind == "hook_error":
            run.hook.errors.append(f"{e.get('where')}: {e.get('error')}")
        elif kind == "exit":
            if main_pid in (None, e.get("pid")) and run.app_end_ms is None:
                run.app_end_ms = _num(e.get("t_ms"))  # replaced by the exit-work bracket's start where there is one
            run.launch_total += int(e.get("launch_total", 0))
            for lid, n in enumerate(e.get("launch_counts") or []):
                i = launch_index.get((e.get("pid"), lid))
                if i is not None:
                    run.launches[i].count = int(n)
            run.kernel_cache_dir = e.get("kernel_cache_dir") or run.kernel_cache_dir
            if e.get("cache_kernels") is not None:
                run.cache_kernels = bool(e.get("cache_kernels"))
            run.config_at_exit = {str(k): str(v) for k, v in (e.get("config") or {}).items()}
            targets = e.get("targets") or {}
            if targets:
                run.hook.targets = {str(k): str(v) for k, v in targets.items()}
            env = e.get("env") or {}
            run.cuda_cache_disable = env.get("CUDA_CACHE_DISABLE") or run.cuda_cache_disable
            for key, state in (e.get("experiment_final") or {}).items():
                if run.experiment.get(str(key)) == "applied":
                    run.experiment[str(key)] = f"{state} by the application after import"
            main = e.get("main") or {}
            if isinstance(main, dict) and run.main_file is None:
                run.main_file = main.get("file") or None
                run.main_module = main.get("module") or None
            files = e.get("imported_files") or []
            if isinstance(files, list):
                run.imported_files = sorted(set(run.imported_files) | {str(f) for f in files})
    recorded = sum(lc.count for lc in run.launches)
    if run.launch_total == 0:
        run.launch_total = recorded  # the process died before its exit event
    run.launches_truncated = recorded < run.launch_total
    return run


def _cuda_event(run: RunEvents, kind: str, e: dict) -> None:
    try:
        if kind == "cuda_build":
            run.cuda_builds.append(CudaBuild.model_validate(e))
        elif kind == "cuda_concurrent":
            run.cuda_concurrent = CudaConcurrent.model_validate(e)
        else:
            run.cuda_replay = CudaReplay.model_validate(e)
    except ValueError:
        run.malformed_lines += 1


def read_events(path: Path) -> RunEvents:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return RunEvents()
    return parse_lines(text.splitlines())
