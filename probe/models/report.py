"""The measurement report: the contract that compare, diagnose, the MCP server, the evals and outside scripts read.

Field names are part of the public schema (`schema_version`); add fields, never rename them.
Every duration is in milliseconds; every aggregate says over what it was taken.
"""

from __future__ import annotations

import json
import os
import statistics
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, ValidationError, computed_field, model_validator

from ..errors import ReportError, UsageError
from .base import Model as _Model
from .warnings import WarningCode, warning_text

SCHEMA_VERSION = 1
REPORT_KIND = "warp-compile-report"
# what every `measure` report carries (the contract named in the README); a file without one of them was damaged
# or hand-made, and judging it would silently read defaults as measurements
CONTRACT_FIELDS = (
    "command", "cwd", "label", "warp_version", "python", "platform", "samples", "failed_samples",
    "cold_module_ms", "warm_module_ms", "native_compile_ms", "codegen_ms", "pch_ms", "cold_wall_ms", "warm_wall_ms",
    "compile_elapsed_ms", "overlap_factor", "generated_source_bytes", "lto_artifacts", "identities", "modules",
    "builds", "warm_builds", "launches", "launch_count", "cache", "sample_results", "warnings", "hook",
)  # fmt: skip

BuildStatus = Literal["compiled", "cached", "error", "error_no_build", "skipped_failed_build"]


class Warn(_Model):
    """One warning: a code plus its parameters; `message` is the rendered text, kept in the JSON for readers."""

    code: WarningCode
    params: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="before")
    @classmethod
    def _from_text(cls, data: Any) -> Any:
        # schema_version 1 reports written before warnings were typed hold plain strings
        return {"code": WarningCode.TEXT, "params": {"text": data}} if isinstance(data, str) else data

    @computed_field  # type: ignore[prop-decorator]
    @property
    def message(self) -> str:
        return warning_text(self.code, self.params)


def warn(code: WarningCode, **params: Any) -> Warn:
    return Warn(code=code, params=params)


class Stat(_Model):
    """A clock: median and raw MAD (ms) over the successful samples."""

    median: float | None = None
    mad: float | None = None
    values: list[float] = Field(default_factory=list)

    def middle(self) -> float | None:
        """The median, computed from the values when the field is missing (an older or hand-made report); None when
        there is neither. Here, not in probe/stats.py, so a renderer reads it without the statistics."""
        if self.median is not None:
            return float(self.median)
        return float(statistics.median(self.values)) if self.values else None


class Site(_Model):
    """A place in the user's code (never inside Warp or the standard library)."""

    file: str
    line: int
    function: str = ""


class WarpSite(_Model):
    """A line inside Warp: where a Warp function the app called did something for it (made a kernel)."""

    file: str
    line: int
    function: str = ""


class Trigger(Site):
    """The user line that caused a module load, and the Warp API it came through (launch, force_load, ...)."""

    api: str = ""
    via: str | None = None  # e.g. "force_load" when the load ran in a worker thread
    stack: list[Site] = Field(default_factory=list)  # user frames, innermost first (the first equals file:line)
    # when every frame kept is an installed library's (a deep call inside it): the program's own caller beyond them
    outer: Site | None = None


class KernelInfo(_Model):
    key: str
    signature: str | None = None  # argument types of a generic overload, e.g. "float32,array(float32)"
    generic_parent: str | None = None
    hash: str = ""
    file: str | None = None  # where the kernel's Python function is defined
    line: int | None = None
    closure: dict[str, str] | None = None  # captured name -> the type of its value (a closure kernel), e.g. float
    enable_backward: bool | None = None  # the kernel's own option where its decorator sets one (None: the module's)


class PhaseSpan(_Model):
    """One phase of a build on the hook's clock (hash, codegen, native, native_load), for the timeline."""

    phase: str
    start_ms: float
    end_ms: float


class Build(_Model):
    """One real module load (the fast path of an already-loaded module is not a build)."""

    seq: int
    module: str
    hash: str
    hash_short: str
    device: str
    block_dim: int | None = None
    status: BuildStatus
    ms: float  # wall of the load, PCH excluded
    hash_ms: float = 0.0
    codegen_ms: float = 0.0
    native_ms: float = 0.0  # native compile (clang / NVRTC), PCH excluded
    native_load_ms: float = 0.0
    other_ms: float = 0.0
    pch_ms: float = 0.0  # PCH built during this load; already subtracted from ms and native_ms
    # CPU time of the loading thread (the CPU build runs LLVM on it), PCH excluded by its share of the native call's
    # CPU time; None: not recorded (older hook, log fallback, no per-thread clock)
    cpu_ms: float | None = None
    native_cpu_ms: float | None = None  # of which the native compile
    source_bytes: int = 0
    backward_in_source: bool | None = None  # the generated source holds adjoint (backward) kernels
    backward_source_bytes: int | None = None  # bytes of that adjoint code (None: not generated in this run)
    kernels: list[KernelInfo] = Field(default_factory=list)
    functions: dict[str, str] = Field(default_factory=dict)  # wp.func key -> hash
    options: dict[str, str] = Field(default_factory=dict)  # resolved module options that were hashed
    options_source: str = ""
    config_shadow: dict[str, list[str]] = Field(default_factory=dict)  # option -> [module value, wp.config value]
    trigger: Trigger | None = None
    thread: int = 0
    start_ms: float = 0.0  # since the hook started in this process
    end_ms: float = 0.0
    # the process's CPU time (user + system, ms) when the load ended; None: an older hook or no rusage
    proc_cpu_end_ms: float | None = None
    error: str | None = None
    path: str = "wrap"  # "wrap" (structured hook) or "log" (parsed from Warp's log lines)
    spans: list[PhaseSpan] = Field(default_factory=list)  # outermost phase calls in order (empty: not recorded)


class PchBuild(_Model):
    """A precompiled header built during a load; kept apart so no module is charged for it."""

    ms: float
    file: str = ""
    thread: int = 0
    during_module: str | None = None
    during_seq: int | None = None
    start_ms: float | None = None  # on the hook's clock (the PCH is built first, at the start of the native phase)
    # CPU time of the building thread spent on it: its wall time times the CPU share of the native call it was built
    # in (one call into LLVM builds header and module, so the clock cannot be read in between); None: not recorded
    cpu_ms: float | None = None


class Launch(_Model):
    """One kernel launch, or a run of identical consecutive launches (`count`)."""

    kernel: str
    module: str
    dim: list[int] = Field(default_factory=list)
    device: str = ""
    dtypes: list[str] = Field(default_factory=list)
    block_dim: int | None = None
    adjoint: bool = False
    tiled: bool = False
    site: Site | None = None
    count: int = 1
    first_ms: float | None = None  # the first launch of this record, on the hook's clock of its process
    thread: int = 0


class ApiCall(_Model):
    """A cache- or lifecycle-affecting Warp call made by the app (clear_kernel_cache, Module.unload, ...)."""

    api: str
    seq: int = 0
    module: str | None = None
    site: Site | None = None
    detail: dict[str, str] = Field(default_factory=dict)


class ModuleCreation(_Model):
    """Options a module copied from wp.config when it was created (they never follow later config changes)."""

    module: str
    options: dict[str, str] = Field(default_factory=dict)
    site: Site | None = None
    start_ms: float = 0.0


class KernelCreation(_Model):
    """One kernel made by the app (hook_kernels.py): where, by which function, with that call's arguments.

    `args` maps each parameter of the making function to its value as source can write it: {"kind": "int" |
    "float" | "bool" | "str" | "none", "text": "4"}, {"kind": "type" | "function", "module": ..., "name": ...},
    {"kind": "global", "module": ..., "name": ...} (an object bound at module level of the app's own package),
    {"kind": "tuple", "items": [...]}, or {"kind": "other", "type": "ndarray"} (a value no source can write)."""

    key: str
    module: str = ""  # the Warp module the kernel joined
    file: str = ""
    line: int = 0  # the line of the making function that ran the decorator
    function: str = ""  # that function's qualname ("<module>" at import)
    args: dict[str, dict[str, Any]] = Field(default_factory=dict)
    at_import: bool = False  # the making call ran while a module was imported (module or class body code)
    caller: Site | None = None  # the code that called the making function
    made_by: str = "kernel"  # "kernel": a Kernel made; "overload": a generic kernel's instance added
    signature: str = ""  # an instance's type signature
    # the app's frames above the making one, innermost first (up to 3), each with its call's arguments: a wrapper
    # (`_renamed(fn, name)`) is made by the factory that called it (`make_stretch(coord_dim, simplex_dim)`)
    outer: list[dict[str, Any]] = Field(default_factory=list)
    # the Warp function the app called that made the kernel for it (wp.map at every call): the line inside Warp; the
    # app's frame above (file, line, function) is the call that asked for it. None: the app made the kernel itself
    via: WarpSite | None = None
    # what wp.map was making it of (hook_kernels._mapped): {"key", "function": an encoded function, "inputs": [{"array":
    # family, "dtype", "ndim", "ones": dims of size 1} | {"value": type name, "module"}], "out": families given}; None:
    # not made by wp.map, or not recorded (an older hook, a map without those locals)
    mapped: dict[str, Any] | None = None
    start_ms: float = 0.0
    # the wall time Kernel.__init__ took (its source read and parsed); None: not recorded (an older hook)
    init_ms: float | None = None
    # the wall time the whole decorator took (wp.kernel: Kernel.__init__ plus, from 1.19, the unique module's hash and
    # reuse lookup); None: not made through wp.kernel, or an older hook
    made_ms: float | None = None

    @property
    def cost_ms(self) -> float | None:
        """What making this kernel object cost: the decorator's whole time where recorded, else Kernel.__init__."""
        return self.made_ms if self.made_ms is not None else self.init_ms


class CacheFacts(_Model):
    cache_kernels: bool | None = None
    kernel_cache_dir: str | None = None
    sandbox_cache_dir: str | None = None
    left_sandbox: bool = False  # the app pointed kernel_cache_dir outside the sandbox's private cache
    cuda_cache_disable: str | None = None
    calls: list[ApiCall] = Field(default_factory=list)  # clear_kernel_cache / clear_lto_cache / Module.unload

    @property
    def outside_sandbox(self) -> bool:
        """kernel_cache_dir lies outside the sample's whole `warp-compile-*` temp root, not just outside its private
        Warp cache: a directory the app made under the TMPDIR it was given (tempfile) is fresh per sample."""
        if not self.left_sandbox or not self.kernel_cache_dir or not self.sandbox_cache_dir:
            return self.left_sandbox
        root = os.path.realpath(os.path.dirname(self.sandbox_cache_dir.rstrip("/\\")))
        try:
            return os.path.commonpath([os.path.realpath(self.kernel_cache_dir), root]) != root
        except ValueError:  # another drive
            return True


class HookInfo(_Model):
    """Which hook path ran: structured wrappers, or Warp's log lines as a fallback."""

    hook_version: str = ""
    mode: Literal["wrap", "log", "none"] = "none"
    targets: dict[str, str] = Field(default_factory=dict)  # target -> "wrapped" | "missing" | "fallback:<how>"
    errors: list[str] = Field(default_factory=list)  # exceptions caught inside the hook (never raised into the app)


class LtoArtifacts(_Model):
    count: int = 0
    bytes: int = 0


class CudaForward(_Model):
    """The same (module, block_dim) rebuilt with enable_backward False (replay of a backward MathDx tile module)."""

    ms: float = 0.0
    phases: dict[str, float] = Field(default_factory=dict)
    source_bytes: int = 0
    lto_artifacts: LtoArtifacts = Field(default_factory=LtoArtifacts)
    link_inputs: int = 0
    status: str = "compiled"
    error: str | None = None
    warm_cache: bool = False  # built in-process after the serial pass (no fork), NVRTC's header cache warm


class CudaHeader(_Model):
    """NVRTC's precompiled header during one CUDA build (warp's wheels below toolkit 13 use one)."""

    dir: bool = False  # Warp gave NVRTC somewhere to write a header (False: toolkit >= 13, or no header support)
    files: int = 0  # header files this build wrote (0 with a dir: it reused one, or NVRTC chose not to)
    bytes: int = 0
    ms: float = 0.0  # from the header file's mtime: the part of the NVRTC build spent before the header was written


class CudaNoHeader(_Model):
    """The same (module, block_dim) rebuilt with NVRTC's precompiled header off, in a fresh process, same order."""

    ms: float = 0.0
    cpu_ms: float | None = None
    phases: dict[str, float] = Field(default_factory=dict)
    status: str = "compiled"
    error: str | None = None
    warm_cache: bool = False  # built in-process after the serial pass (no fork): NVRTC's state warm


class CudaBuild(_Model):
    """One (module, block_dim) built for a CUDA architecture: by the `--cuda-arch` replay, or on a device."""

    module: str
    hash: str = ""
    block_dim: int | None = None
    arch: int | None = None
    ms: float = 0.0
    cpu_ms: float | None = None  # CPU time of the building thread (replay): wall time stretched by load, not this
    phases: dict[str, float] = Field(default_factory=dict)  # codegen, lto (MathDx generation), nvrtc (+ link), other
    source_bytes: int = 0
    backward: bool | None = None  # built with the module's enable_backward True
    backward_source_bytes: int | None = None  # adjoint code in the generated CUDA source
    forward: CudaForward | None = None  # the forward-only rebuild, measured for backward MathDx tile modules
    # the same build repeated at once in the replay's process (NVRTC's header cache for these options warm), taken
    # for the first build at each block_dim: ms - repeat_ms is NVRTC's start-up at that block_dim
    repeat_ms: float | None = None
    lto_artifacts: LtoArtifacts = Field(default_factory=LtoArtifacts)  # .lto files this build added to the cache
    link_inputs: int = 0  # LTO-IR / fatbin inputs handed to the link inside the NVRTC build
    binary: str = ""
    output: str = ""  # "cubin" | "ptx": what the build produced
    nvrtc_header: CudaHeader | None = None  # the replay's record of NVRTC's precompiled header for this build
    no_header: CudaNoHeader | None = None  # the rebuild without it, when this build wrote one (CS-12 on CUDA)
    status: str = "compiled"  # "compiled" | "error"
    error: str | None = None
    kernels: list[str] = Field(default_factory=list)  # kernels launched at this block_dim
    via: list[str] = Field(default_factory=list)  # what asked for it: launch, preload, loaded
    origin: Literal["replay", "device"] = "replay"
    device: str | None = None  # the device, when measured on one


class CudaConcurrent(_Model):
    """The same CUDA builds run on `workers` threads (one task per module), against the serial sum."""

    workers: int = 0
    tasks: int = 0
    wall_ms: float = 0.0
    serial_ms: float = 0.0
    summed_ms: float = 0.0
    errors: int = 0
    warm_cache: bool = False  # ran after the serial pass (no fork): NVRTC's header cache was already warm
    error: str | None = None
    cpus: int = 0  # os.cpu_count() of the measuring machine
    cpu_ms: float | None = None  # CPU time of the concurrent pass (all threads): cpu_ms / wall_ms = cores it had
    serial_cpu_ms: float | None = None  # CPU time of the serial pass, against serial_ms
    load_avg: float | None = None  # 1-minute load average when the concurrent pass ended


class CudaReplay(_Model):
    """How the CUDA builds were obtained: sm_<arch> through NVRTC after the app ran, without a device."""

    arch: int
    ms: float = 0.0  # the whole replay, taken out of the cold run's wall time
    toolkit: str = ""
    nvrtc_pch: bool | None = None  # NVRTC wrote a precompiled header in some replay build (None: nothing compiled)
    driver: bool = False
    error: str | None = None

    @property
    def label(self) -> str:
        return f"sm_{self.arch} via NVRTC, no device" if not self.driver else f"sm_{self.arch} via NVRTC"


class RebuildSide(_Model):
    """One timed rebuild of a module: its thread's CPU time and its wall time."""

    cpu_ms: float | None = None
    ms: float = 0.0


class RebuildEntry(_Model):
    """One module rebuilt at exit both ways: as the run built it, and with the setting changed."""

    module: str
    block_dim: int | None = None
    hash: str = ""  # the identity rebuilt (16 hex digits): the module's last build in the run
    as_is: RebuildSide = Field(default_factory=RebuildSide)
    changed: RebuildSide = Field(default_factory=RebuildSide)
    order: str = ""  # "AB" (as is first) or "BA": the order alternates from module to module
    samples: int = 1  # builds of each side (backward step: 2 where the limit allows, each side the lesser of them)
    run_header: bool | None = None  # header step: the run built it with the precompiled header on

    @property
    def saving_cpu_ms(self) -> float | None:
        a, b = self.as_is.cpu_ms, self.changed.cpu_ms
        return None if a is None or b is None else a - b


class RebuildStep(_Model):
    """One rebuild step: a setting changed for the modules it applies to."""

    setting: dict[str, Any] = Field(default_factory=dict)
    entries: list[RebuildEntry] = Field(default_factory=list)
    headers: list[RebuildSide] = Field(default_factory=list)  # headers the step built (their own cost)
    run_headers: int | None = None  # header builds the run itself made (threads x keys)


class RebuildSkip(_Model):
    step: str  # "backward", "header", or "any" (not rebuilt at all)
    module: str
    block_dim: int | None = None
    predicted_ms: float = 0.0  # CPU time the step was expected to take
    why: str = ""


class Rebuild(_Model):
    """`diagnose`'s settings rebuilds, run at exit of its first cold run into a private cache (hook_rebuild.py)."""

    limit_s: float | None = None  # the user's bound on their CPU time
    steps: dict[str, RebuildStep] = Field(default_factory=dict)  # "backward" (CS-10), "header" (CS-12)
    skipped: list[RebuildSkip] = Field(default_factory=list)
    errors: list[str] = Field(default_factory=list)
    cpu_ms: float | None = None  # what the rebuilds cost, CPU time of the building thread
    ms: float = 0.0  # and wall time (taken out of the run's clocks with the rest of the hook's exit work)
    builds: int = 0


class RunResult(_Model):
    """One process run (cold or warm) of one sample."""

    phase: Literal["cold", "warm"]
    wall_ms: float
    exit_code: int | None
    timed_out: bool = False
    module_ms: float = 0.0
    native_ms: float = 0.0
    codegen_ms: float = 0.0
    pch_ms: float = 0.0
    # CPU clocks (None: not measured)
    cpu_ms: float | None = None  # user + system time of the run and the descendants it waited for, exit work out
    user_ms: float | None = None  # as os.wait4 reported it (exit work included)
    sys_ms: float | None = None  # as os.wait4 reported it (exit work included)
    module_cpu_ms: float | None = None  # summed thread CPU time of the run's builds, headers excluded
    native_cpu_ms: float | None = None  # of which native compile
    pch_cpu_ms: float | None = None  # the headers' share of their builds' thread CPU time
    exit_work_ms: float = 0.0  # wall time of the hook's own exit work (replay, rebuilds), taken out of wall_ms
    # the share (0..1) of the machine's CPU time other processes used while this run ran (probe/contention.py);
    # None where the platform does not say (not Linux) or the run was too short to read
    other_share: float | None = None
    # each compiled build and header by what it built ("module@hash@device@block_dim", "header:<file>") -> [wall ms,
    # CPU ms]: what a comparison leaves out of its deciding clock where both arms did the same (probe/compare/same.py)
    work: dict[str, list[float | None]] = Field(default_factory=dict)
    compiled: int = 0
    cached: int = 0
    errors: int = 0
    launches: int = 0
    stderr_tail: str = ""


class FileOwner(_Model):
    """Who owns a file the report points at, from the installed metadata of the app's interpreter."""

    owner: Literal["project", "dependency"]
    distribution: str | None = None  # e.g. "warp-lang"
    version: str | None = None
    editable: bool = False  # an editable install (its files may still be the user's to change)


class EntryPoint(_Model):
    """Where the measured command enters Python (see probe/entry.py): the place for a process-wide setting."""

    kind: Literal["script", "module", "console_script", "unknown"]
    name: str = ""  # the script as given, the module name, or "pkg.mod:func" of a console script
    file: str | None = None  # the source file that runs first (absolute)
    launcher: str | None = None  # a console script's generated launcher
    owner: Literal["project", "dependency"] | None = None
    distribution: str | None = None
    detail: str = ""


class SampleResult(_Model):
    index: int
    ok: bool
    cold: RunResult
    warm: RunResult | None = None
    failure: str | None = None


class Report(_Model):
    """The result of `warp-compile measure`."""

    schema_version: Literal[1] = SCHEMA_VERSION
    kind: Literal["warp-compile-report"] = "warp-compile-report"
    tool_version: str = ""
    command: list[str]
    cwd: str
    label: str = ""
    warp_version: str | None = None
    python: str | None = None  # the child's interpreter (may differ from the tool's)
    interpreter: str | None = None  # the command's argv[0] resolved to an absolute path (PATH, cwd), after `env`
    python_executable: str | None = None  # sys.executable of the measured process, as the hook saw it
    platform: str = ""
    machine: str = ""
    created_at: str = ""
    samples: int  # samples requested
    failed_samples: int = 0
    reference_sample: int | None = None  # the sample whose builds and launches are listed below
    cold_module_ms: Stat = Field(default_factory=Stat)
    warm_module_ms: Stat = Field(default_factory=Stat)
    native_compile_ms: Stat = Field(default_factory=Stat)
    codegen_ms: Stat = Field(default_factory=Stat)
    pch_ms: Stat = Field(default_factory=Stat)
    cold_wall_ms: Stat = Field(default_factory=Stat)
    warm_wall_ms: Stat = Field(default_factory=Stat)
    # the cold run after its last module load, to the app's end (RunEvents.steady_ms): the repeated calls once all is
    # built, the clock a cost paid at every call (WC-1) is judged on; empty where a sample has no exit record
    steady_ms: Stat = Field(default_factory=Stat)
    # the same span on the process's CPU clock (RunEvents.steady_cpu_ms): the calls' own work, which a machine shared
    # with other jobs stretches in wall time but not in CPU time; empty where a sample has no CPU reading
    steady_cpu_ms: Stat = Field(default_factory=Stat)
    compile_elapsed_ms: Stat = Field(default_factory=Stat)
    overlap_factor: float | None = None  # summed load time / union of load intervals (1.0 = one at a time)
    generated_source_bytes: int = 0
    lto_artifacts: int = 0
    identities: int = 0  # distinct (module, hash, device, block_dim) loaded in the cold run
    modules: int = 0  # distinct module names loaded in the cold run
    builds: list[Build] = Field(default_factory=list)  # reference sample, cold run
    warm_builds: list[Build] = Field(default_factory=list)  # reference sample, warm run
    pch: list[PchBuild] = Field(default_factory=list)  # reference sample, cold run
    launches: list[Launch] = Field(default_factory=list)  # reference sample, cold run
    launch_count: int = 0
    launches_truncated: bool = False
    cache: CacheFacts = Field(default_factory=CacheFacts)
    config_at_import: dict[str, str] = Field(default_factory=dict)  # wp.config right after `import warp`
    experiment: dict[str, str] = Field(default_factory=dict)  # `try` settings: key -> applied / unsupported
    owners: dict[str, FileOwner] = Field(default_factory=dict)  # absolute file -> owner (files the report names)
    tapes: list[Site] = Field(default_factory=list)  # where the measured process created a wp.Tape (first per site)
    imported_files: list[str] = Field(default_factory=list)  # module files it imported (not stdlib, not Warp)
    entry: EntryPoint | None = None  # where the command enters Python, resolved when measuring
    module_creations: list[ModuleCreation] = Field(default_factory=list)
    kernel_creations: list[KernelCreation] = Field(default_factory=list)  # reference sample's cold run
    sample_results: list[SampleResult] = Field(default_factory=list)
    warnings: list[Warn] = Field(default_factory=list)
    hook: HookInfo = Field(default_factory=HookInfo)
    cuda_compile_ms: Stat = Field(default_factory=Stat)  # summed --cuda-arch replay builds per sample
    cuda_builds: list[CudaBuild] = Field(default_factory=list)  # reference sample, cold run (--cuda-arch)
    cuda_concurrent: CudaConcurrent | None = None
    cuda_replay: CudaReplay | None = None
    # CPU clocks, over the successful samples (empty when a sample did not measure one): what the work needed,
    # whatever else ran on the machine. Compare decides CPU compile work on them (docs/ci.md)
    cold_cpu_ms: Stat = Field(default_factory=Stat)  # the cold run's user + system time (os.wait4), exit work out
    warm_cpu_ms: Stat = Field(default_factory=Stat)  # the warm run's user + system time
    compile_cpu_ms: Stat = Field(default_factory=Stat)  # cold CPU - warm CPU: what compiling cost, header included
    cold_module_cpu_ms: Stat = Field(default_factory=Stat)  # summed thread CPU time of the cold run's builds
    native_compile_cpu_ms: Stat = Field(default_factory=Stat)  # of which native compile (LLVM), header excluded
    pch_cpu_ms: Stat = Field(default_factory=Stat)  # the precompiled headers' share of their builds' CPU time
    cuda_compile_cpu_ms: Stat = Field(default_factory=Stat)  # summed thread CPU time of the --cuda-arch builds
    # the median share (0..1) of the machine's CPU time other processes used during the successful samples' runs
    # (probe/contention.py): from half of it, a CONTENDED warning says the CPU clocks read high
    other_share: float | None = None
    rebuild: Rebuild | None = None  # diagnose's settings rebuilds (first sample that ran them)

    @property
    def all_failed(self) -> bool:
        """The measured command failed in every sample it was asked for: nothing was measured."""
        return self.samples > 0 and self.failed_samples >= self.samples

    def last_failure(self) -> tuple[str, str]:
        """(why the last sample failed, the tail of its stderr): what a front end shows when all failed."""
        last = self.sample_results[-1] if self.sample_results else None
        if last is None:
            return "failed", ""
        tail = last.cold.stderr_tail or (last.warm.stderr_tail if last.warm else "")
        return last.failure or "failed", tail

    @classmethod
    def load(cls, path: str | Path) -> Report:
        """Read a measurement report. Any problem raises `ReportError`: one line naming the file and the cause."""
        return _load(Path(path), str(path))

    def save(self, path: str | Path) -> None:
        """Write the report as JSON (the file `load` reads); the directory must exist, none is created."""
        try:
            Path(path).expanduser().write_text(self.model_dump_json(indent=2) + "\n", encoding="utf-8")
        except OSError as exc:
            raise UsageError(f"cannot write {path}: {exc.strerror or exc}") from None


def _load(p: Path, name: str) -> Report:
    if not p.exists():
        raise ReportError(f"{name}: no such file")
    if p.is_dir():
        raise ReportError(f"{name}: is a directory, not a report file")
    try:
        raw = p.read_bytes()
    except OSError as exc:
        raise ReportError(f"{name}: cannot read ({exc.strerror or exc})") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise ReportError(f"{name}: not a JSON report (the file is not UTF-8 text)") from None
    if not text.strip():
        raise ReportError(f"{name}: empty file, not a JSON report")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        body = text.strip()
        opened = body[:1] in "{["
        truncated = exc.pos >= len(text.rstrip()) or (opened and body[-1:] not in "}]")
        what = "truncated JSON (the file ends early)" if truncated and opened else "not valid JSON"
        raise ReportError(f"{name}: {what} ({exc.msg}: line {exc.lineno} column {exc.colno})") from None
    _check_header(data, name)
    try:
        return Report.model_validate(data)
    except ValidationError as exc:
        raise ReportError(f"{name}: invalid report ({_first_error(exc)})") from None


def _check_header(data: Any, name: str) -> None:
    """Kind, schema version and contract fields, each with its own line, before pydantic reads the rest."""
    if not isinstance(data, dict):
        raise ReportError(f"{name}: JSON {_json_type(data)}, not a warp-compile report object")
    kind = data.get("kind")
    if kind != REPORT_KIND:
        if kind is None:
            raise ReportError(f"{name}: not a warp-compile report (no 'kind' field)")
        if kind == "warp-compile-comparison":
            raise ReportError(f"{name}: a comparison result, not a measurement report (pass two `measure` reports)")
        raise ReportError(f"{name}: not a warp-compile report (kind {kind!r}, expected {REPORT_KIND!r})")
    version = data.get("schema_version")
    if version is None:
        raise ReportError(f"{name}: report has no schema_version")
    if isinstance(version, bool) or not isinstance(version, int) or version != SCHEMA_VERSION:
        raise ReportError(
            f"{name}: report schema_version {version!r}; this warp-compile reads schema_version {SCHEMA_VERSION}"
        )
    missing = [f for f in CONTRACT_FIELDS if f not in data]
    if missing:
        shown = ", ".join(missing[:4]) + (f" and {len(missing) - 4} more" if len(missing) > 4 else "")
        raise ReportError(f"{name}: damaged report (missing {shown})")


def _json_type(value: Any) -> str:
    if isinstance(value, list):
        return "array"
    if isinstance(value, str):
        return "string"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if value is None:
        return "null"
    return type(value).__name__


def _first_error(exc: ValidationError) -> str:
    errors = exc.errors()
    if not errors:
        return "validation failed"
    e = errors[0]
    loc = ".".join(str(x) for x in e.get("loc", ())) or "(root)"
    msg = f"{loc}: {e.get('msg', 'invalid')}"
    if "input" in e and e.get("type") != "missing":
        shown = repr(e["input"])
        if len(shown) > 40:
            shown = shown[:37] + "..."
        msg += f", got {shown}"
    if len(errors) > 1:
        msg += f"; and {len(errors) - 1} more error{'s' if len(errors) > 2 else ''}"
    return msg
