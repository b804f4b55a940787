"""The compact measurement summary as text: a few lines for people and for clients that show only text."""

from __future__ import annotations

from ..fmt import stat_text, warp_text
from ..models.summary import ClockSummary, MeasureSummary


def _c(c: ClockSummary) -> str:
    return stat_text(c.median_ms, c.mad_ms, c.n)


def render_summary(s: MeasureSummary, builds: int = 5) -> str:
    """A few lines for people and for clients that show only text."""
    head = f"measured: {' '.join(s.command)}" + (f"  [{s.label}]" if s.label else "")
    out = [head, f"  {warp_text(s.warp_version)} · {s.ok_samples}/{s.samples} samples ok · median ± MAD"]
    c = s.clocks
    out.append(f"  compile elapsed {_c(c.compile_elapsed)} · cold wall {_c(c.cold_wall)} · warm wall {_c(c.warm_wall)}")
    out.append(
        f"  cold module work {_c(c.cold_module)} · native {_c(c.native_compile)} · warm module {_c(c.warm_module)}"
    )
    out.append(
        f"  identities {s.identities} · modules {s.modules} · builds {s.builds} ({s.compiled} compiled,"
        f" {s.cached} cached, {s.errors} errors) · launches {s.launch_count}"
    )
    for b in s.largest_builds[:builds]:
        bd = "" if b.block_dim is None else f" bd={b.block_dim}"
        out.append(f"    {b.ms:>9.1f} ms  {b.status:<9} {b.module} {b.hash_short} {b.device}{bd}  {b.trigger or '-'}")
    if s.warm_recompiled_modules:
        out.append(f"  warm re-run compiled again: {', '.join(s.warm_recompiled_modules)}")
    for f in s.sample_failures:
        out.append(f"  failed: {f}")
    for w in s.warnings:
        out.append(f"  warning: {w.message}")
    if s.report_uri:
        out.append(f"  full report: {s.report_uri}" + (f" (also written to {s.json_path})" if s.json_path else ""))
    elif s.json_path:
        out.append(f"  full report written to {s.json_path}")
    return "\n".join(out)
