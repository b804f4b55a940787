"""`measure` as text: the clocks first, then one row per build of the reference cold run, largest first."""

from __future__ import annotations

from ..fmt import pch_count, short_path, stat_text, trigger_text, warp_text
from ..models import Build, Report, Stat


def _stat(s: Stat) -> str:
    return stat_text(s.median, s.mad, len(s.values))


def _site(b: Build, cwd: str) -> str:
    return trigger_text(b, lambda f: short_path(f, cwd)) or "-"


def _before_cpu_pch(r: Report) -> bool:
    """Warp added the CPU precompiled header in 1.13."""
    try:
        major, minor = (int(x) for x in r.warp_version.split(".")[:2])
    except (ValueError, AttributeError):
        return False
    return (major, minor) < (1, 13)


def render_report(r: Report) -> str:
    """The measurement for people: what ran, its clocks (median ± MAD), counts, then the builds."""
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
                text += f", {pch_count(len(r.pch), len({p.thread for p in r.pch}))}"
        lines.append(f"  {name:<40} {text}")
    if r.compile_cpu_ms.values:  # CPU time: what the work needed, whatever else ran (compare decides on it)
        for name, s in (
            ("compile CPU (cold CPU - warm CPU)", r.compile_cpu_ms),
            ("cold module CPU (builds' threads)", r.cold_module_cpu_ms),
            ("precompiled header CPU", r.pch_cpu_ms),
        ):
            if s.values:
                lines.append(f"  {name:<40} {_stat(s)}")
    ov = "-" if r.overlap_factor is None else f"{r.overlap_factor:.2f}"
    lines.append(
        f"  identities {r.identities} · modules {r.modules} · generated source {r.generated_source_bytes:,} B"
        f" · LTO artifacts {r.lto_artifacts} · overlap {ov} · launches {r.launch_count}"
    )
    if r.builds:
        lines.append("")
        lines.append(f"  cold builds (sample {(r.reference_sample or 0) + 1}), largest first:")
        cpu = any(b.cpu_ms is not None for b in r.builds)
        lines.append(f"    {'ms':>9}  {'native':>8}  " + (f"{'cpu':>8}  " if cpu else "")
                     + f"{'status':<9} {'module':<28} {'hash':<7} {'dev':<6} bd  trigger")
        for b in sorted(r.builds, key=lambda b: -b.ms):
            bd = "-" if b.block_dim is None else str(b.block_dim)
            c = (f"{b.cpu_ms:>8.1f}  " if b.cpu_ms is not None else f"{'-':>8}  ") if cpu else ""
            lines.append(
                f"    {b.ms:>9.1f}  {b.native_ms:>8.1f}  {c}{b.status:<9} {b.module[:28]:<28} {b.hash_short:<7} "
                f"{b.device[:6]:<6} {bd:<3} {_site(b, r.cwd)}"
            )
        for p in r.pch:
            what = f"precompiled header {p.file} (during {p.during_module})"
            c = (f"{p.cpu_ms:>8.1f}  " if p.cpu_ms is not None else f"{'-':>8}  ") if cpu else ""
            lines.append(f"    {p.ms:>9.1f}  {'':>8}  {c}{'pch':<9} {what}")
    if r.cuda_replay is not None:
        lines.extend(_cuda_lines(r))
    warm_compiled = [b for b in r.warm_builds if b.status == "compiled"]
    if warm_compiled:
        lines.append(f"  warm re-run compiled again: {', '.join(sorted({b.module for b in warm_compiled}))}")
    if r.warnings:
        lines.append("")
        for w in r.warnings:
            lines.append(f"  warning: {w.message}")
    return "\n".join(lines)


def _cuda_lines(r: Report) -> list[str]:
    """The --cuda-arch replay: each (module, block_dim) built for sm_N after the run, on its own clock."""
    rp = r.cuda_replay
    assert rp is not None
    out = ["", f"  CUDA builds, {rp.label} (after the run, {rp.ms:,.0f} ms, not in the clocks above):"]
    if rp.error:
        out.append(f"    replay failed: {rp.error}")
    out.append(f"    {'ms':>9}  {'nvrtc':>8}  {'lto gen':>8}  {'status':<9} {'module':<28} {'hash':<7} bd   lto files")
    for b in sorted(r.cuda_builds, key=lambda b: -b.ms):
        bd = "-" if b.block_dim is None else str(b.block_dim)
        lto = f"{b.lto_artifacts.count} ({b.lto_artifacts.bytes / 1e6:.1f} MB)" if b.lto_artifacts.count else "-"
        out.append(
            f"    {b.ms:>9.1f}  {b.phases.get('nvrtc', 0.0):>8.1f}  {b.phases.get('lto', 0.0):>8.1f}  {b.status:<9} "
            f"{b.module[:28]:<28} {b.hash[:7]:<7} {bd:<4} {lto}"
        )
    c = r.cuda_concurrent
    if c is not None and not c.error:
        out.append(
            f"    concurrently on {c.workers} threads: {c.wall_ms:,.0f} ms wall vs {c.serial_ms:,.0f} ms one after "
            f"another ({c.serial_ms / c.wall_ms:.2f}x)" if c.wall_ms else "    concurrent pass: no timing"
        )
    return out
