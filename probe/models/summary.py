"""A compact view of a measurement Report, sized for an agent's context: clocks, counts, the largest builds."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from .base import Model as _Model
from .report import Warn


class ClockSummary(_Model):
    """One clock over the successful samples: median and median absolute deviation (ms), and over how many."""

    median_ms: float | None = None
    mad_ms: float | None = None
    n: int = 0


class Clocks(_Model):
    cold_wall: ClockSummary = Field(description="wall time of the cold run (empty caches)")
    warm_wall: ClockSummary = Field(description="wall time of the warm re-run (caches filled by the cold run)")
    compile_elapsed: ClockSummary = Field(description="cold wall - warm wall: what the user waited for compiles")
    cold_module: ClockSummary = Field(description="summed module load time in the cold run")
    native_compile: ClockSummary = Field(description="native compile (clang / NVRTC) in the cold run")
    codegen: ClockSummary = Field(description="Python code generation in the cold run")
    pch: ClockSummary = Field(description="precompiled header builds (not charged to any module)")
    warm_module: ClockSummary = Field(description="summed module load time in the warm run")


class BuildSummary(_Model):
    """One module load of the reference sample's cold run."""

    seq: int
    module: str
    hash_short: str
    device: str
    block_dim: int | None = None
    status: str
    ms: float
    native_ms: float = 0.0
    codegen_ms: float = 0.0
    kernels: int = 0
    trigger: str | None = Field(default=None, description="user line that caused the load: 'file:line (api)'")


class MeasureSummary(_Model):
    """What `measure` found, in a few KB; the full report is at `report_uri` (and `json_path` when written)."""

    kind: Literal["warp-compile-measure-summary"] = "warp-compile-measure-summary"
    report_id: str | None = None
    report_uri: str | None = None
    json_path: str | None = None
    command: list[str]
    cwd: str
    label: str = ""
    warp_version: str | None = None
    python: str | None = None
    samples: int = Field(description="samples requested (one sample = a cold run plus a warm re-run)")
    ok_samples: int = 0
    failed_samples: int = 0
    clocks: Clocks
    identities: int = Field(0, description="distinct (module, hash, device, block_dim) loaded in the cold run")
    modules: int = 0
    builds: int = Field(0, description="module loads in the reference cold run")
    compiled: int = 0
    cached: int = 0
    errors: int = 0
    generated_source_bytes: int = 0
    lto_artifacts: int = 0
    overlap_factor: float | None = None
    launch_count: int = 0
    largest_builds: list[BuildSummary] = Field(default_factory=list, description="largest first")
    more_builds: int = Field(0, description="builds not listed in largest_builds")
    warm_recompiled_modules: list[str] = Field(
        default_factory=list, description="modules the warm re-run compiled again (cache not reused)"
    )
    sample_failures: list[str] = Field(default_factory=list)
    warnings: list[Warn] = Field(default_factory=list)
