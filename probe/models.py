"""The measurement report: the contract that compare, diagnose, the MCP server, the evals and outside scripts read.

Field names are part of the public schema (`schema_version`); add fields, never rename them.
Every duration is in milliseconds; every aggregate says over what it was taken.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

SCHEMA_VERSION = 1

BuildStatus = Literal["compiled", "cached", "error", "error_no_build", "skipped_failed_build"]


class _Model(BaseModel):
    model_config = ConfigDict(extra="ignore")


class Stat(_Model):
    """A clock over the successful samples: median and median absolute deviation (both ms)."""

    median: float | None = None
    mad: float | None = None
    values: list[float] = Field(default_factory=list)


class Site(_Model):
    """A place in the user's code (never inside Warp or the standard library)."""

    file: str
    line: int
    function: str = ""


class Trigger(Site):
    """The user line that caused a module load, and the Warp API it came through (launch, force_load, ...)."""

    api: str = ""
    via: str | None = None  # e.g. "force_load" when the load ran in a worker thread
    stack: list[Site] = Field(default_factory=list)  # user frames, innermost first (the first equals file:line)


class KernelInfo(_Model):
    key: str
    signature: str | None = None  # argument types of a generic overload, e.g. "float32,array(float32)"
    generic_parent: str | None = None
    hash: str = ""
    file: str | None = None  # where the kernel's Python function is defined
    line: int | None = None


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


class CacheFacts(_Model):
    cache_kernels: bool | None = None
    kernel_cache_dir: str | None = None
    sandbox_cache_dir: str | None = None
    left_sandbox: bool = False  # the app pointed kernel_cache_dir outside the sandbox's private cache
    cuda_cache_disable: str | None = None
    calls: list[ApiCall] = Field(default_factory=list)  # clear_kernel_cache / clear_lto_cache / Module.unload


class HookInfo(_Model):
    """Which hook path ran: structured wrappers, or Warp's log lines as a fallback."""

    hook_version: str = ""
    mode: Literal["wrap", "log", "none"] = "none"
    targets: dict[str, str] = Field(default_factory=dict)  # target -> "wrapped" | "missing" | "fallback:<how>"
    errors: list[str] = Field(default_factory=list)  # exceptions caught inside the hook (never raised into the app)


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
    compiled: int = 0
    cached: int = 0
    errors: int = 0
    launches: int = 0
    stderr_tail: str = ""


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
    module_creations: list[ModuleCreation] = Field(default_factory=list)
    sample_results: list[SampleResult] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)
    hook: HookInfo = Field(default_factory=HookInfo)
