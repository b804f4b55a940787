"""A compact view of a measurement Report, sized for an agent's context: clocks, counts, the largest builds.

The full Report (kernel lists, launches, every build) stays where it is: in the JSON file or, under the MCP
server, behind `warp-compile://reports/{report_id}`. This model is a projection of a Report and nothing more.
"""

from __future__ import annotations

from .fmt import short_path, trigger_text
from .models import Build, Report, Stat
from .models.summary import BuildSummary, Clocks, ClockSummary, MeasureSummary

LARGEST_BUILDS = 10










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
                seq=b.seq, module=b.module, hash_short=b.hash_short, device=b.device, block_dim=b.block_dim,
                status=b.status, ms=b.ms, native_ms=b.native_ms, codegen_ms=b.codegen_ms, kernels=len(b.kernels),
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
