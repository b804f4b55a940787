"""CS-12 on CUDA below toolkit 13: NVRTC's precompiled header priced from the replay's two measured passes.

Warp's wheels below toolkit 13 let NVRTC write one precompiled header (~72 MB) in the first build of a process and
thread and read it in the later ones. The `--cuda-arch` replay records, per build, whether Warp gave NVRTC a header
directory and what NVRTC wrote there; when a header was written it rebuilds every such build with the header off,
in a process forked before any CUDA build and in the same order, so each pair differs by the header alone. The
header pays when the later builds gain more than the first one spends writing it; with few small modules it does
not (the seed's figure: five small modules on 12.9, 2.38 s with the header, 1.94 s without). Only measured figures
are quoted; the verdict needs the difference to clear MIN_SHARE of the header-on total, in wall time and in the
building threads' CPU time alike (one sample each side, on a machine that may be busy).
"""

from __future__ import annotations

from ..fmt import fmt_ms
from ..models import CudaBuild, Report
from ..models.diagnosis import Evidence, Finding, NotReached, RuledOut, RuleResult
from . import cuda_pricing
from .context import RuleContext
from .helpers import severity_of_share

MECHANISM = "CS-12"
MIN_SHARE = 0.10  # one sample per side: a difference below a tenth of the header-on total is not a verdict


def pairs(report: Report) -> list[CudaBuild]:
    """Replay builds measured both ways (with the header, and rebuilt without it)."""
    return [
        b
        for b in report.cuda_builds
        if b.status == "compiled" and b.no_header is not None and b.no_header.status == "compiled" and b.no_header.ms
    ]


def _cpu(both: list[CudaBuild]) -> tuple[float, float] | None:
    """(CPU ms with the header, without), summed, when every build of both passes recorded it."""
    if any(b.cpu_ms is None or b.no_header is None or b.no_header.cpu_ms is None for b in both):
        return None
    return sum(b.cpu_ms or 0.0 for b in both), sum(b.no_header.cpu_ms or 0.0 for b in both if b.no_header)


def _verdict(on: float, off: float, cpu: tuple[float, float] | None) -> int:
    """+1: the header costs more than it saves; -1: it pays; 0: no verdict. Wall time and, where recorded, CPU
    time must agree: a loaded machine stretches one pass's wall time, not the CPU time its builds needed (NVRTC's
    header is also written to disk, which wall time alone shows, so CPU time cannot decide on its own)."""
    sides = [(on, off)] + ([cpu] if cpu is not None else [])
    if all(a - b >= MIN_SHARE * a for a, b in sides):
        return 1
    if all(b - a >= MIN_SHARE * a for a, b in sides):
        return -1
    return 0


def _fact(report: Report, both: list[CudaBuild], src: str) -> tuple[str, float, float]:
    on = sum(b.ms for b in both)
    off = sum(b.no_header.ms for b in both if b.no_header is not None)
    writers = [b for b in both if b.nvrtc_header is not None and b.nvrtc_header.files]
    mb = sum(b.nvrtc_header.bytes for b in writers if b.nvrtc_header is not None) / 1e6
    wrote = ", ".join(
        f"{b.module} (block_dim {b.block_dim}, ~{fmt_ms(b.nvrtc_header.ms)} until it was written)"
        for b in writers
        if b.nvrtc_header is not None
    )
    per = "; ".join(
        f"{b.module}: {fmt_ms(b.ms)} -> {fmt_ms(b.no_header.ms)}" for b in both if b.no_header is not None
    )
    modules = len({b.module for b in both})
    cpu = _cpu(both)
    fact = (
        f"on CUDA ({src}): {len(both)} build(s) of {modules} module(s) measured both ways: {fmt_ms(on)} with "
        f"NVRTC's precompiled header ({len(writers)} header file(s), {mb:.0f} MB, written by {wrote or 'none'}), "
        f"{fmt_ms(off)} rebuilt without it in a fresh process, same order (per build, with -> without: {per})"
    )
    if cpu is not None:
        fact += f"; CPU time of the building threads {fmt_ms(cpu[0])} with, {fmt_ms(cpu[1])} without"
    if any(b.no_header is not None and b.no_header.warm_cache for b in both):
        fact += "; the header-off builds ran in-process after the others (no fork), NVRTC's state warm"
    return fact, on, off


def _finding(ctx: RuleContext, both: list[CudaBuild], fact: str, on: float, off: float) -> Finding:
    saving = on - off
    modules = sorted({b.module for b in both})
    total = sum(b.ms for b in cuda_pricing.builds(ctx.report))
    return Finding(
        mechanism=MECHANISM,
        title="NVRTC's precompiled header costs more than it saves for these few CUDA modules",
        severity=severity_of_share(saving / total if total > 0 else 0.0),
        confidence="medium",
        modules=modules,
        evidence=[Evidence(fact=fact + ".", ms=round(saving, 1))],
        locations=[],
        fix=(
            "Set wp.config.use_precompiled_headers = False at the application's entry point, before the first "
            "module loads (from warp 1.13 the option is in every module hash, so every module rebuilds once), and "
            "confirm it on the GPU with `warp-compile compare`. It matters only below CUDA toolkit 13: warp 1.18 "
            "and later ship toolkit 13, where Warp passes NVRTC no header. Never set it from library code."
        ),
        estimated_saving_ms=round(saving, 1),
        saving_basis=(
            f"measured: {fmt_ms(on)} with the header - {fmt_ms(off)} without, summed over the {len(both)} replayed "
            "CUDA build(s), one sample each side"
        ),
        caveats=[
            "The balance flips as modules are added: each later build reads the header for less than a cold "
            "parse; re-measure when the module set grows.",
            "Warp's header is per process and thread: parallel loading (CS-13) writes one per worker thread.",
            "On warp 1.13+ the same setting also turns off the CPU header, which pays there from the second module.",
        ],
        samples=ctx.samples,
    )


def price(ctx: RuleContext, result: RuleResult) -> RuleResult:
    """CS-12's result with the replay's header-on/header-off measurement: a finding when the header does not pay."""
    both = pairs(ctx.report)
    if not both:
        return result
    src = cuda_pricing.where(ctx.report)
    fact, on, off = _fact(ctx.report, both, src)
    saving = on - off
    verdict = _verdict(on, off, _cpu(both))
    if verdict > 0:
        mine = [f for f in result.findings if f.mechanism == MECHANISM]
        if mine:  # a CS-12 finding about the CPU side already stands: the CUDA figure joins it
            mine[0].evidence.append(Evidence(fact=fact + ": without the header the CUDA builds are faster.",
                                             ms=round(saving, 1)))
            return result
        result.findings.append(_finding(ctx, both, fact, on, off))
        result.ruled_out = [r for r in result.ruled_out if r.mechanism != MECHANISM]
        result.not_reached = [n for n in result.not_reached if n.mechanism != MECHANISM]
        return result
    said = (
        "the header pays for itself here"
        if verdict < 0
        else f"no verdict: the difference ({fmt_ms(-saving, sign=True)} without the header) is within "
        f"{MIN_SHARE:.0%} of the total, or wall and CPU time disagree"
    )
    note = f"{fact}: {said}"
    for f in result.findings:
        if f.mechanism == MECHANISM:
            f.evidence.append(Evidence(fact=note + "."))
    result.ruled_out = [
        RuledOut(mechanism=r.mechanism, signal=f"{r.signal}; {note}") if r.mechanism == MECHANISM else r
        for r in result.ruled_out
    ]
    result.not_reached = [
        NotReached(mechanism=n.mechanism, reason=f"{n.reason}; {note}") if n.mechanism == MECHANISM else n
        for n in result.not_reached
    ]
    return result
