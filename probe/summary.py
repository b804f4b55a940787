"""A compact view of a measurement Report, sized for an agent's context: clocks, counts, the largest builds.

The full Report (kernel lists, launches, every build) stays where it is: in the JSON file or, under the MCP
server, behind `warp-compile://reports/{report_id}`. This model is a projection of a Report and nothing more.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from warp_compile.probe.models import Build, Report, Stat, Warn
from warp_compile.probe.models.base import Model as _Model
from warp_compile.probe.render.fmt import short_path, trigger_text

LARGEST_BUILDS = 10


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


def _clock(s: Stat) -> ClockSummary:
    return ClockSummary(median_ms=s.median, mad_ms=s.mad, n=len(s.values))


def _trigger(b: Build, cwd: str) -> str | None:
    return trigger_text(b, lambda f: short_path(f, cwd)) or None


def summarize(
    report: Report,
    report_id: str | None = None,
    report_uri: str | None = None,
    json_path: str | None = None,
    largest: int = LARGEST_BUILDS,
) -> MeasureSummary:
    builds = sorted(report.builds, key=lambda b: (-b.ms, b.seq))
    failures = [
        f"sample {s.index + 1}: {s.failure}" + (f": {_last_line(s.cold.stderr_tail)}" if s.cold.stderr_tail else "")
        for s in report.sample_results
        if not s.ok and s.failure
    ]
    return MeasureSummary(
        report_id=report_id,
        report_uri=report_uri,
        json_path=json_path,
        command=list(report.command),
        cwd=report.cwd,
        label=report.label,
        warp_version=report.warp_version,
        python=report.python,
        samples=report.samples,
        ok_samples=report.samples - report.failed_samples,
        failed_samples=report.failed_samples,
        clocks=Clocks(
            cold_wall=_clock(report.cold_wall_ms),
            warm_wall=_clock(report.warm_wall_ms),
            compile_elapsed=_clock(report.compile_elapsed_ms),
            cold_module=_clock(report.cold_module_ms),
            native_compile=_clock(report.native_compile_ms),
            codegen=_clock(report.codegen_ms),
            pch=_clock(report.pch_ms),
            warm_module=_clock(report.warm_module_ms),
        ),
        identities=report.identities,
        modules=report.modules,
        builds=len(report.builds),
        compiled=sum(1 for b in report.builds if b.status == "compiled"),
        cached=sum(1 for b in report.builds if b.status == "cached"),
        errors=sum(1 for b in report.builds if b.status.startswith("error")),
        generated_source_bytes=report.generated_source_bytes,
        lto_artifacts=report.lto_artifacts,
        overlap_factor=report.overlap_factor,
        launch_count=report.launch_count,
        largest_builds=[
            BuildSummary(
                seq=b.seq,
                module=b.module,
                hash_short=b.hash_short,
                device=b.device,
                block_dim=b.block_dim,
                status=b.status,
                ms=b.ms,
                native_ms=b.native_ms,
                codegen_ms=b.codegen_ms,
                kernels=len(b.kernels),
                trigger=_trigger(b, report.cwd),
            )
            for b in builds[:largest]
        ],
        more_builds=max(0, len(builds) - largest),
        warm_recompiled_modules=sorted({b.module for b in report.warm_builds if b.status == "compiled"}),
        sample_failures=failures,
        warnings=list(report.warnings),
    )


def _last_line(text: str) -> str:
    lines = [ln.strip() for ln in text.strip().splitlines() if ln.strip()]
    return lines[-1][:200] if lines else ""
