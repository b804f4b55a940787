"""CS-10's estimate: what backward code costs in a CPU build, from the size-dependent part of its native compile.

Native compile time is close to a line per module, fixed + per-byte x source bytes; only the size-dependent part
shrinks with the adjoint code. The fixed part comes from a fit over the run's own builds when they allow one, else
from this project's calibration (knowledge/CS-10.md), scaled to the machine by the run's own precompiled header.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..fmt import fmt_ms
from ..models import Build
from ..models.scan import KernelDef, TapeFact
from ..stats import overlap_factor
from .helpers import is_cpu, pch_off

if TYPE_CHECKING:
    from .context import RuleContext

@dataclass
class BackwardModule:
    """One Warp module as CS-10 sees it: its builds, kernels, adjoint launches and the tapes that reach it."""

    name: str
    builds: list[Build] = field(default_factory=list)  # the builds that remain once rebuilds are fixed
    superseded: list[Build] = field(default_factory=list)  # earlier compiled builds a rebuild replaced
    keys: set[str] = field(default_factory=set)
    defs: list[KernelDef] = field(default_factory=list)
    adjoint_launches: int = 0
    tapes: list[TapeFact] = field(default_factory=list)
    taped_kernels: set[str] = field(default_factory=set)
    unreached_tapes: list[TapeFact] = field(default_factory=list)  # tapes in files this command never imported
    tapes_measured: bool = False  # reachability of the tapes came from the hook's record, not the scan alone
    late: bool = False

    @property
    def seqs(self) -> list[int]:
        return sorted(b.seq for b in self.builds)

    @property
    def ms(self) -> float:
        return sum(b.ms for b in self.builds)


# The fixed per-module part of a CPU native compile, measured by this project (knowledge/CS-10.md, Figures) on a
# 2-core x86_64 VM: first Warp version a row applies to, then (fixed ms, native ms of the smallest module measured:
# one one-line kernel, forward only) with the precompiled header and with the header off. Before warp 1.13 the CPU
# has no precompiled header, so every module pays the header parse. Last: one CPU header build on that VM (the
# project's notes, knowledge/CS-12.md: median 1.59 s on warp 1.19), None where the version builds none.
_CPU_FIXED_MS: list[tuple[tuple[int, int], str, tuple[float, float], tuple[float, float], float | None]] = [
    ((1, 13), "warp 1.19.0", (55.0, 79.0), (750.0, 801.0), 1590.0),
    ((0, 0), "warp 1.10.1", (1060.0, 1091.0), (1060.0, 1091.0), None),
]
# An in-run fit is used when it rests on at least _FIT_MIN builds of one kind whose sizes span _FIT_SPREAD x and lie on
# a line (r^2 >= _FIT_R2) with a fixed part between 0 and the smallest build's native time.
_FIT_MIN = 3
_FIT_SPREAD = 2.0
_FIT_R2 = 0.8


def _version(text: str | None) -> tuple[int, int] | None:
    m = re.match(r"(\d+)\.(\d+)", text or "")
    return (int(m.group(1)), int(m.group(2))) if m else None


def build_kind(b: Build) -> tuple[str, bool]:
    """Builds that share a fixed part: same backend, same precompiled-header setting."""
    return ("cpu" if is_cpu(b.device) else "cuda", pch_off(b))


def _kind_text(kind: tuple[str, bool]) -> str:
    if kind[0] == "cpu":
        return "CPU, precompiled header off" if kind[1] else "CPU"
    return "CUDA"


def _line_fit(points: list[tuple[float, float]]) -> tuple[float, float, float] | None:
    """Least squares y = a + b x: (a, b, r^2), or None when x does not vary."""
    n = len(points)
    mx = sum(x for x, _ in points) / n
    my = sum(y for _, y in points) / n
    sxx = sum((x - mx) ** 2 for x, _ in points)
    if sxx <= 0:
        return None
    b = sum((x - mx) * (y - my) for x, y in points) / sxx
    a = my - b * mx
    st = sum((y - my) ** 2 for _, y in points)
    ss = sum((y - a - b * x) ** 2 for x, y in points)
    return a, b, (1.0 - ss / st) if st > 0 else 1.0


@dataclass
class Fixed:
    """The fixed per-module part of native compile for one kind of build, and where it came from."""

    ms: float
    basis: str


def fixed_parts(ctx: RuleContext) -> dict[tuple[str, bool], Fixed]:
    """Per kind of build: a fit over the run's own compiled builds when they support one, else the calibration."""
    by_kind: dict[tuple[str, bool], list[Build]] = {}
    for b in ctx.compiled:
        if b.native_ms > 0 and b.source_bytes > 0:
            by_kind.setdefault(build_kind(b), []).append(b)
    out: dict[tuple[str, bool], Fixed] = {}
    version = _version(ctx.report.warp_version)
    for kind, builds in by_kind.items():
        smallest = min(b.native_ms for b in builds)
        sizes = [b.source_bytes for b in builds]
        fit = None
        if len(builds) >= _FIT_MIN and concurrency(builds) <= 1.05:  # concurrent builds wait for each other
            fit = _line_fit([(b.source_bytes / 1000.0, b.native_ms) for b in builds])
        if fit is not None and max(sizes) >= _FIT_SPREAD * min(sizes):
            a, slope, r2 = fit
            if slope > 0 and r2 >= _FIT_R2 and 0 <= a <= smallest:
                out[kind] = Fixed(
                    a,
                    f"fitted on this run's {len(builds)} compiled {_kind_text(kind)} builds ({min(sizes):,}-"
                    f"{max(sizes):,} B: {fmt_ms(a)} + {slope:.1f} ms/KB, r^2 {r2:.2f})",
                )
                continue
        if kind[0] != "cpu":
            out[kind] = Fixed(
                0.0,
                "no fixed part: it is not calibrated for CUDA and this run's builds do not support a fit, so the "
                "share is applied to the whole native time (an upper bound)",
            )
            continue
        _, label, with_pch, without, cal_header = next(
            (row for row in _CPU_FIXED_MS if version is None or version >= row[0]), _CPU_FIXED_MS[-1]
        )
        ms, cal_smallest = without if kind[1] else with_pch
        header = "precompiled header off, " if kind[1] else ""
        basis = f"{fmt_ms(ms)} per module as calibrated ({label}, {header}2-core x86_64 VM)"
        run_header = min((p.ms for p in ctx.report.pch if p.ms > 0), default=None)
        if not kind[1] and cal_header and run_header and run_header > cal_header:  # a slower machine
            ms *= run_header / cal_header
            basis += (
                f", scaled to {fmt_ms(ms)} because this run's precompiled header took {fmt_ms(run_header)} against "
                f"the calibration's {fmt_ms(cal_header)}"
            )
        elif smallest < cal_smallest:  # a faster machine: scale the fixed part by the run's smallest build
            ms *= smallest / cal_smallest
            basis += (
                f", scaled to {fmt_ms(ms)} because this run's smallest build ({fmt_ms(smallest)} native) is faster "
                f"than the calibration's smallest module ({fmt_ms(cal_smallest)})"
            )
        out[kind] = Fixed(ms, basis)
    return out


def _build_saving(b: Build, fixed: dict[tuple[str, bool], Fixed]) -> float | None:
    if b.backward_source_bytes is None or not b.source_bytes:
        return None
    f = fixed.get(build_kind(b))
    variable = max(b.native_ms - (f.ms if f else 0.0), 0.0)
    return (variable + b.codegen_ms) * b.backward_source_bytes / b.source_bytes


def estimate_saving(targets: list[BackwardModule], fixed: dict[tuple[str, bool], Fixed]) -> float | None:
    """Compile time attributable to adjoint code: per remaining build, the adjoint share of its source times the
    size-dependent part of its native compile plus its codegen."""
    total = 0.0
    if not any(b.status == "compiled" for m in targets for b in m.builds):
        return None
    for m in targets:
        for b in m.builds:
            if b.status != "compiled":
                continue
            part = _build_saving(b, fixed)
            if part is None:
                return None
            total += part
    return total


def bytes_share(targets: list[BackwardModule]) -> str:
    back = sum(b.backward_source_bytes or 0 for m in targets for b in m.builds if b.status == "compiled")
    src = sum(b.source_bytes for m in targets for b in m.builds if b.status == "compiled")
    return f"{back:,} of {src:,} bytes, {back / src:.0%}" if src else "unknown"


def concurrency(builds: list[Build]) -> float:
    """Summed duration over the union of the builds' intervals when they ran on more than one thread, else 1."""
    if len({b.thread for b in builds}) < 2:
        return 1.0
    return overlap_factor([(b.start_ms, b.end_ms) for b in builds]) or 1.0
