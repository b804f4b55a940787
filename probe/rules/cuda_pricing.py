"""CUDA prices for CS-10, CS-11 and CS-12, added to what those rules found on the measured run.

The rules judge the builds the run made (often CPU ones); when the report also holds CUDA builds (a `--cuda-arch`
replay or a run on a device) each of them gets the matching CUDA figure, and every sentence names where the figure
comes from ("sm_90 via NVRTC, no device", or the device). Nothing here changes what a rule decided on the CPU,
except that CS-10 is not called small when its measured CUDA cost is material (see `backward_pays`).
"""

from __future__ import annotations

import functools
import re
import statistics
from collections.abc import Callable
from dataclasses import dataclass

from ..fmt import fmt_ms
from ..models import CudaBuild, Report
from ..models.diagnosis import Evidence, NotReached, RuledOut, RuleResult
from .context import RuleContext
from .helpers import MEDIUM_SHARE, severity_of_share

_SEVERITY = ["info", "low", "medium", "high"]


def builds(report: Report) -> list[CudaBuild]:
    return [b for b in report.cuda_builds if b.status == "compiled"]


def where(report: Report) -> str:
    """Where the CUDA figures come from: the replay's label, or the device they were measured on."""
    devices = sorted({b.device for b in report.cuda_builds if b.origin == "device" and b.device})
    if devices and not any(b.origin == "replay" for b in report.cuda_builds):
        return "measured on " + ", ".join(devices)
    if report.cuda_replay is not None:
        tk = f", toolkit {report.cuda_replay.toolkit}" if report.cuda_replay.toolkit else ""
        return report.cuda_replay.label + tk
    arch = next((b.arch for b in report.cuda_builds if b.arch), None)
    return f"sm_{arch} via NVRTC, no device" if arch else "NVRTC replay, no device"


def toolkit_major(report: Report) -> int | None:
    m = re.match(r"(\d+)", report.cuda_replay.toolkit if report.cuda_replay is not None else "")
    return int(m.group(1)) if m else None


# ---------------------------------------------------------------------------------------------- start-up


@dataclass
class Startup:
    """NVRTC's start-up per block_dim: what the first build at a block_dim pays and a later build skips."""

    ms: float
    how: str  # how it was obtained, for the basis text


def _nvrtc(b: CudaBuild) -> float:
    return b.phases.get("nvrtc", b.ms)


def startup(report: Report) -> Startup | None:
    """The per-build start-up of NVRTC at a new set of options (block_dim among them), from the replay's builds.

    NVRTC keeps an in-process header cache per set of options: the first build at each block_dim pays for it, a
    later one skips it (the replay's serial pass runs in one process). Measured two ways, best first:
    - a build the replay repeated at once (`repeat_ms`): its first time less the repeat is the start-up itself;
    - builds that were not the first at their block_dim give NVRTC's rate per source byte without the start-up;
      each first build's NVRTC time less that rate times its source is its start-up (median over block_dims).
    None when the replay holds neither (one module, each block_dim built once): the start-up is then not
    separable from the kernel work.
    """
    builds = [b for b in report.cuda_builds if b.status == "compiled" and b.origin == "replay"]
    reps = [b.ms - b.repeat_ms for b in builds if b.repeat_ms is not None and 0 < b.repeat_ms <= b.ms]
    if reps:
        return Startup(
            ms=statistics.median(reps),
            how=f"measured: the first build at a block_dim against the same build repeated at once, "
            f"median of {len(reps)}",
        )
    firsts: dict[int | None, CudaBuild] = {}
    later_ms = later_bytes = 0.0
    for b in builds:
        if b.block_dim not in firsts:
            firsts[b.block_dim] = b
        elif b.source_bytes > 0:
            later_ms += _nvrtc(b)
            later_bytes += b.source_bytes
    if later_bytes <= 0 or not firsts:
        return None
    rate = later_ms / later_bytes
    vals = [max(0.0, _nvrtc(f) - rate * f.source_bytes) for f in firsts.values()]
    return Startup(
        ms=statistics.median(vals),
        how=f"measured: the first build's NVRTC time at each block_dim less the rate of the later builds at the "
        f"same block_dim ({rate * 1000:.1f} ms per kB of source), median of {len(vals)}",
    )


# ---------------------------------------------------------------------------------------------- CS-10


def backward_cost(b: CudaBuild) -> tuple[float, str] | None:
    """(ms the adjoint code costs this CUDA build, how that figure was obtained), or None without adjoint code.

    Measured when the replay rebuilt the module forward-only (it does for every build with backward code); else
    (a device run, a failed rebuild) estimated: the adjoint share of the generated CUDA source applied to its
    codegen and NVRTC time, an upper bound, since NVRTC's fixed per-build cost does not shrink with the source
    (heat_field: estimated 1.95 s, measured 0.92-1.4 s) and a low one for MathDx tile modules, whose adjoint
    GEMMs add LTO work the source does not show.
    """
    if not b.backward and not b.backward_source_bytes:
        return None
    f = b.forward
    if f is not None and f.status == "compiled" and f.ms > 0:
        lto = (
            f", MathDx LTO generation {b.phases.get('lto', 0.0):.0f} -> {f.phases.get('lto', 0.0):.0f} ms, "
            f"{b.link_inputs} -> {f.link_inputs} LTO link input(s), {b.lto_artifacts.count} -> "
            f"{f.lto_artifacts.count} .lto artifact(s)"
        )
        warm = "; the forward-only build ran with NVRTC's header cache warm" if f.warm_cache else ""
        how = f"measured: {b.ms:.0f} ms with backward code, {f.ms:.0f} ms rebuilt forward-only{lto}{warm}"
        return max(0.0, b.ms - f.ms), how
    if not b.source_bytes or b.backward_source_bytes is None:
        return None
    share = b.backward_source_bytes / b.source_bytes
    work = b.phases.get("codegen", 0.0) + b.phases.get("nvrtc", 0.0)
    return share * work, (
        f"estimated (upper bound): the adjoint share of the generated CUDA source ({b.backward_source_bytes:,} of "
        f"{b.source_bytes:,} B, {share:.0%}) applied to codegen + NVRTC ({work:.0f} of {b.ms:.0f} ms)"
    )


def _backward_total(report: Report, modules: list[str]) -> tuple[float, list[str]]:
    total, facts = 0.0, []
    for b in builds(report):
        if b.module not in modules:
            continue
        cost = backward_cost(b)
        if cost is not None:
            total += cost[0]
            facts.append(f"{b.module} (block_dim {b.block_dim}): backward code costs {fmt_ms(cost[0])}, {cost[1]}")
    return total, facts


_Adjust = Callable[[RuleContext, RuleResult, str], RuleResult]  # (ctx, the rule's result, where the builds came from)


def _on_cuda(adjust: _Adjust) -> Callable[[RuleContext, RuleResult], RuleResult]:
    """The rule's CUDA adjustment runs only when the report holds CUDA builds; `src` says where they came from."""

    @functools.wraps(adjust)
    def run(ctx: RuleContext, result: RuleResult) -> RuleResult:
        if not builds(ctx.report):
            return result
        return adjust(ctx, result, where(ctx.report))

    return run


def backward_pays(ctx: RuleContext, modules: list[str]) -> bool:
    """Whether the CUDA builds show a material backward cost for these modules (share of all CUDA build time)."""
    total = sum(b.ms for b in builds(ctx.report))
    cost, _facts = _backward_total(ctx.report, modules)
    return total > 0 and cost / total >= MEDIUM_SHARE  # the share CS-10 asks of the CPU compile


@_on_cuda
def cs10(ctx: RuleContext, result: RuleResult, src: str) -> RuleResult:
    """CS-10's findings carry the CUDA cost of the backward code; a ruled-out says what the CUDA builds showed."""
    report = ctx.report
    cuda_total = sum(b.ms for b in builds(report))
    for f in result.findings:
        cost, facts = _backward_total(report, f.modules)
        if not facts:
            f.evidence.append(Evidence(fact=f"on CUDA ({src}): no build of {', '.join(f.modules)} holds adjoint code."))
            continue
        f.evidence.append(Evidence(fact=f"on CUDA ({src}): " + "; ".join(facts) + ".", ms=round(cost, 1)))
        f.saving_basis += (
            f"; on CUDA ({src}) the backward code costs {fmt_ms(cost)} of the {fmt_ms(cuda_total)} CUDA build time"
        )
        cuda_sev = severity_of_share(cost / cuda_total if cuda_total > 0 else 0.0)
        if _SEVERITY.index(cuda_sev) > _SEVERITY.index(f.severity):
            f.severity = cuda_sev
    no_adjoint = [b for b in builds(report) if backward_cost(b) is None]
    if not result.findings and len(no_adjoint) == len(builds(report)):
        names = ", ".join(sorted({f"{b.module} (block_dim {b.block_dim})" for b in no_adjoint}))
        note = f"; on CUDA ({src}) no adjoint code is built either: {names}"
        result.ruled_out = [
            RuledOut(mechanism=r.mechanism, signal=r.signal + note) if r.mechanism == "CS-10" else r
            for r in result.ruled_out
        ]
    return result


# ---------------------------------------------------------------------------------------------- CS-11


@_on_cuda
def cs11(ctx: RuleContext, result: RuleResult, src: str) -> RuleResult:
    """CS-11's findings name the CUDA source size and NVRTC time of the modules that unroll (no saving claimed)."""
    report = ctx.report
    for f in result.findings:
        mine = [b for b in builds(report) if b.module in f.modules]
        if not mine:
            continue
        fact = f"on CUDA ({src}): " + "; ".join(
            f"{b.module} (block_dim {b.block_dim}) generated {b.source_bytes:,} B of CUDA source, built in "
            f"{b.ms:.0f} ms (NVRTC {b.phases.get('nvrtc', 0.0):.0f} ms, codegen {b.phases.get('codegen', 0.0):.0f} ms)"
            for b in mine
        )
        f.evidence.append(
            Evidence(
                fact=fact + "; lowering max_unroll shrinks this source, re-measure with --cuda-arch to see "
                "whether NVRTC time follows.",
                ms=round(sum(b.ms for b in mine), 1),
            )
        )
    return result


# ---------------------------------------------------------------------------------------------- CS-12


@_on_cuda
def cs12(ctx: RuleContext, result: RuleResult, src: str) -> RuleResult:
    """CS-12 on CUDA: the NVRTC header exists only below toolkit 13; the replay records the toolkit."""
    report = ctx.report
    major = toolkit_major(report)
    nvrtc = sum(b.phases.get("nvrtc", 0.0) for b in builds(report))
    no_param = report.cuda_replay is not None and report.cuda_replay.nvrtc_pch is False
    if major is not None and major >= 13:
        note = (
            f"on CUDA ({src}): not applicable on toolkit >= 13, where Warp passes NVRTC no precompiled header "
            f"({len(builds(report))} build(s), NVRTC {fmt_ms(nvrtc)})"
        )
    elif no_param:
        note = (
            f"on CUDA ({src}): not applicable, warp {report.warp_version} has no NVRTC precompiled header (from "
            f"1.13) ({len(builds(report))} build(s), NVRTC {fmt_ms(nvrtc)})"
        )
    else:
        firsts: dict[int | None, CudaBuild] = {}
        for b in builds(report):
            firsts.setdefault(b.block_dim, b)
        tk = f"toolkit {major}" if major is not None else "toolkit unknown"
        note = (
            f"on CUDA ({src}, {tk}): NVRTC uses a precompiled header; {len(builds(report))} build(s), NVRTC "
            f"{fmt_ms(nvrtc)} in total; the first build at each block_dim ("
            + ", ".join(f"{bd}: {fmt_ms(b.phases.get('nvrtc', 0.0))}" for bd, b in firsts.items())
            + ") includes building that header"
        )
    for f in result.findings:
        f.evidence.append(Evidence(fact=note + "."))
    result.ruled_out = [
        RuledOut(mechanism=r.mechanism, signal=f"{r.signal}; {note}") if r.mechanism == "CS-12" else r
        for r in result.ruled_out
    ]
    result.not_reached = [
        NotReached(mechanism=n.mechanism, reason=f"{n.reason}; {note}") if n.mechanism == "CS-12" else n
        for n in result.not_reached
    ]
    return result
