"""Readable summary of a measurement Report: clocks first, then one row per build, largest first."""

from __future__ import annotations

import os
from collections.abc import Callable

from warp_compile.probe.models import Build, PchBuild, Report, Stat


def _ms(x: float | None) -> str:
    return "-" if x is None else f"{x:,.0f} ms" if x >= 10 else f"{x:.1f} ms"


def warp_text(version: str | None) -> str:
    """`warp 1.19.0`, or what an empty version means: the command never imported warp."""
    return f"warp {version}" if version else "warp not imported"


def stat_text(median: float | None, mad: float | None, n: int) -> str:
    """`median ± MAD (n=N)`; one sample has no spread, so none is shown for it."""
    if median is None:
        return "-"
    if n < 2:
        return f"{_ms(median)} (n={n}, no spread)"
    return f"{_ms(median)} ± {_ms(mad or 0.0)} (n={n})"


def _stat(s: Stat) -> str:
    return stat_text(s.median, s.mad, len(s.values))


def short_path(path: str, cwd: str) -> str:
    """`path` relative to `cwd` (posix separators) when it lies inside it; otherwise as recorded."""
    if not cwd or not os.path.isabs(path):
        return path
    try:
        rel = os.path.relpath(path, cwd)
    except ValueError:
        return path
    return path if rel.startswith("..") else rel.replace(os.sep, "/")


def trigger_text(build: Build, rel: Callable[[str], str]) -> str:
    """`file:line (api via ...)` of the user line that triggered a build; empty when it is unknown."""
    t = build.trigger
    if t is None:
        return ""
    via = f" via {t.via}" if t.via else ""
    return f"{rel(t.file)}:{t.line} ({t.api or '?'}{via})"


def _site(b: Build, cwd: str) -> str:
    return trigger_text(b, lambda f: short_path(f, cwd)) or "-"


def pch_count(pch: list[PchBuild]) -> str:
    """Several headers are summed, not elapsed: say how many, and on how many threads (they may overlap)."""
    threads = len({p.thread for p in pch})
    return f"sum of {len(pch)} header builds on {threads} thread{'s' if threads != 1 else ''}"


def _before_cpu_pch(r: Report) -> bool:
    """Warp added the CPU precompiled header in 1.13."""
    try:
        major, minor = (int(x) for x in r.warp_version.split(".")[:2])
    except (ValueError, AttributeError):
        return False
    return (major, minor) < (1, 13)


def render_report(r: Report) -> str:
    lines = []
    head = f"warp-compile measure: {' '.join(r.command)}"
    if r.label:
        head += f"  [{r.label}]"
    lines.append(head)
    ok = r.samples - r.failed_samples
    lines.append(
        f"  {warp_text(r.warp_version)} · python {r.python or '?'} · {ok}/{r.samples} samples ok"
        f" · medians ± MAD over the successful samples"
    )
    if r.interpreter or r.python_executable:
        lines.append(f"  interpreter {r.python_executable or r.interpreter}")
    lines.append("")
    for name, s in (
        ("cold wall", r.cold_wall_ms),
        ("warm wall", r.warm_wall_ms),
        ("compile elapsed (cold - warm)", r.compile_elapsed_ms),
        ("cold module work (sum of loads)", r.cold_module_ms),
        ("  native compile", r.native_compile_ms),
        ("  python codegen", r.codegen_ms),
        ("precompiled header (not in any module)", r.pch_ms),
        ("warm module work", r.warm_module_ms),
    ):
        text = _stat(s)
        if s is r.compile_elapsed_ms and s.median is not None and not any(b.status == "compiled" for b in r.builds):
            text += ", nothing compiled: the difference of two walls is noise around zero"
        if s is r.pch_ms:
            if s.median == 0 and not r.pch:
                text = "none built" + (" (this Warp has no CPU precompiled header)" if _before_cpu_pch(r) else "")
            elif len(r.pch) > 1:
                text += f", {pch_count(r.pch)}"
        lines.append(f"  {name:<40} {text}")
    ov = "-" if r.overlap_factor is None else f"{r.overlap_factor:.2f}"
    lines.append(
        f"  identities {r.identities} · modules {r.modules} · generated source {r.generated_source_bytes:,} B"
        f" · LTO artifacts {r.lto_artifacts} · overlap {ov} · launches {r.launch_count}"
    )
    if r.builds:
        lines.append("")
        lines.append(f"  cold builds (sample {(r.reference_sample or 0) + 1}), largest first:")
        lines.append(f"    {'ms':>9}  {'native':>8}  {'status':<9} {'module':<28} {'hash':<7} {'dev':<6} bd  trigger")
        for b in sorted(r.builds, key=lambda b: -b.ms):
            bd = "-" if b.block_dim is None else str(b.block_dim)
            lines.append(
                f"    {b.ms:>9.1f}  {b.native_ms:>8.1f}  {b.status:<9} {b.module[:28]:<28} {b.hash_short:<7} "
                f"{b.device[:6]:<6} {bd:<3} {_site(b, r.cwd)}"
            )
        for p in r.pch:
            what = f"precompiled header {p.file} (during {p.during_module})"
            lines.append(f"    {p.ms:>9.1f}  {'':>8}  {'pch':<9} {what}")
    warm_compiled = [b for b in r.warm_builds if b.status == "compiled"]
    if warm_compiled:
        lines.append(f"  warm re-run compiled again: {', '.join(sorted({b.module for b in warm_compiled}))}")
    if r.warnings:
        lines.append("")
        for w in r.warnings:
            lines.append(f"  warning: {w}")
    return "\n".join(lines)
