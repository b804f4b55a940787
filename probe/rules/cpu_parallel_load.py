"""CS-8: concurrent first CPU loads race Warp's native JIT (a correctness hazard, not a speed-up).

Fires on any of:
- scan: `wp.force_load` / `wp.load_module` whose device can be the CPU (absent, None, "cpu", a mixed list, a
  non-literal) and whose `max_workers` is > 1, or is absent while `wp.config.load_module_max_workers` is set to
  None / > 1 in the sources;
- measurement: a `force_load` call recorded with max_workers > 1 and a CPU-capable device, or CPU builds on
  different threads whose [start_ms, end_ms] intervals overlap (typically worker threads of a parallel preload).
The fix is `max_workers=1` for every load that can reach the CPU; no saving is claimed.
"""

from __future__ import annotations

import re

from ..fix.place import cuda_edits as ce
from ..fmt import fmt_ms, fmt_span
from ..models import ApiCall, Build
from ..models.diagnosis import Edit, Evidence, Finding, Location, RuleResult, UpstreamReport
from ..models.scan import LoadCallFact, SettingFact
from . import helpers
from .context import RuleContext, dedupe_locations
from .helpers import is_cpu, parallel_value, ruled_out

MECHANISM = "CS-8"


def overlapping_cpu_builds(builds: list[Build]) -> list[tuple[Build, Build]]:
    """Pairs of CPU builds on different threads whose load intervals overlap (in seq order)."""
    cpu = [
        b for b in builds if is_cpu(b.device) and b.end_ms > b.start_ms and b.status not in ("skipped_failed_build",)
    ]
    cpu.sort(key=lambda b: (b.start_ms, b.seq))
    pairs: list[tuple[Build, Build]] = []
    for i, a in enumerate(cpu):
        for b in cpu[i + 1 :]:
            if b.start_ms >= a.end_ms:
                break
            if a.thread != b.thread:
                pairs.append((a, b) if a.seq <= b.seq else (b, a))
    return pairs


def _measured_parallel_calls(calls: list[ApiCall]) -> list[tuple[ApiCall, bool]]:
    """force_load calls recorded with a parallel max_workers and a device that can be the CPU."""
    out: list[tuple[ApiCall, bool]] = []
    for c in calls:
        if c.api != "force_load":
            continue
        mw = c.detail.get("max_workers")
        if mw is None:
            continue
        parallel, certain = parallel_value(mw)
        if not parallel:
            continue
        if not _device_repr_cpu_possible(c.detail.get("device")):
            continue
        out.append((c, certain))
    return out


def _device_repr_cpu_possible(dev: str | None) -> bool:
    """A recorded device argument (repr) can reach the CPU unless every device it names is a CUDA device."""
    if dev is None:
        return True
    names = re.findall(r"\b(cpu|cuda(?::\d+)?)\b", dev)
    return not names or any(n == "cpu" for n in names)


def _unsafe_setting(settings: list[SettingFact]) -> SettingFact | None:
    for s in settings:
        if s.name == "load_module_max_workers" and parallel_value(s.value)[0]:
            return s
    return None


def _scan_hazards(ctx: RuleContext) -> tuple[list[tuple[LoadCallFact, bool, str]], SettingFact | None]:
    """CPU-capable load calls that may run in parallel: (call, certain, why)."""
    scan = ctx.scan
    if scan is None:
        return [], None
    setting = _unsafe_setting(scan.settings)
    out: list[tuple[LoadCallFact, bool, str]] = []
    for lc in scan.load_calls:
        if not lc.cpu_possible:
            continue
        if lc.max_workers is not None:
            parallel, certain = parallel_value(lc.max_workers)
            if parallel:
                why = f"max_workers={lc.max_workers}"
                out.append((lc, certain, why))
        elif setting is not None:
            out.append((lc, True, f"no max_workers, so wp.config.load_module_max_workers = {setting.value} applies"))
    return out, setting


def _call_text(lc: LoadCallFact) -> str:
    args = ", ".join(f"{k}={v}" for k, v in lc.kwargs.items())
    return f"wp.{lc.api}({args})" if args else f"wp.{lc.api}(...)"


def evaluate(ctx: RuleContext) -> RuleResult:
    scan_calls, setting = _scan_hazards(ctx)
    overlaps = overlapping_cpu_builds(ctx.report.builds)
    measured_calls = _measured_parallel_calls(ctx.report.cache.calls)

    if not scan_calls and not overlaps and not measured_calls:
        signal = (
            "no wp.force_load / wp.load_module with max_workers > 1 that can target the CPU, "
            "and no CPU builds overlapping on different threads"
        )
        if setting is not None:
            signal += (
                f" (wp.config.load_module_max_workers = {setting.value} at {setting.file}:{setting.line} "
                "is set, but no load call in the sources uses it; lazy launches load serially)"
            )
        return ruled_out(MECHANISM, signal)

    evidence: list[Evidence] = []
    locations: list[Location] = []

    for lc, certain, why in scan_calls:
        dev = lc.device if lc.device is not None else "None (all devices, CPU included)"
        evidence.append(
            Evidence(
                fact=(
                    f"{lc.file}:{lc.line}: {_call_text(lc)} can target the CPU (device={dev}) and may load in "
                    f"parallel ({why}{'' if certain else ', value not known statically'})."
                ),
                source="scan",
            )
        )
        locations.append(ctx.loc(lc.file, lc.line, f"{lc.api}: pass max_workers=1 when the device can be the CPU"))
    if setting is not None and any("load_module_max_workers" in why for _lc, _c, why in scan_calls):
        evidence.append(
            Evidence(
                fact=(
                    f"{setting.file}:{setting.line}: wp.config.load_module_max_workers = {setting.value} makes "
                    "every load call without max_workers parallel (None means min(cpu_count, 4))."
                ),
                source="scan",
            )
        )
        locations.append(
            ctx.loc(setting.file, setting.line, "set load_module_max_workers back to 0 (serial) while CPU loads exist")
        )

    for c, _certain in measured_calls:
        dev = c.detail.get("device", "None (all devices)")
        evidence.append(
            Evidence(
                fact=(
                    f"measured: force_load was called with max_workers={c.detail.get('max_workers')} and "
                    f"device={dev}" + (f" at {ctx.rel(c.site.file)}:{c.site.line}" if c.site else "") + "."
                ),
            )
        )
        if c.site is not None:
            locations.append(
                ctx.loc(c.site.file, c.site.line, "force_load: pass max_workers=1 when the device can be the CPU")
            )

    modules: list[str] = []
    if overlaps:
        seqs = sorted({b.seq for pair in overlaps for b in pair})
        threads = sorted({b.thread for pair in overlaps for b in pair})
        by_seq = {b.seq: b for pair in overlaps for b in pair}
        parts = []
        for a, b in overlaps[:4]:
            lo, hi = max(a.start_ms, b.start_ms), min(a.end_ms, b.end_ms)
            parts.append(
                f"build {a.seq} ({a.module}, thread {a.thread}, {fmt_span(a.start_ms, a.end_ms)}) overlaps "
                f"build {b.seq} ({b.module}, thread {b.thread}, {fmt_span(b.start_ms, b.end_ms)}) "
                f"for {fmt_ms(hi - lo)}"
            )
        via = {by_seq[s].trigger.via for s in seqs if by_seq[s].trigger is not None}
        evidence.append(
            Evidence(
                fact=(
                    f"measured: {len(seqs)} CPU first loads ran concurrently on {len(threads)} threads"
                    + (" (worker threads of force_load)" if "force_load" in via else "")
                    + ": "
                    + "; ".join(parts)
                    + "."
                ),
                builds=seqs,
            )
        )
        for s in seqs:
            b = by_seq[s]
            if b.module not in modules:
                modules.append(b.module)
            if b.trigger is not None and b.trigger.file:
                at = helpers.own_frame(ctx, b.trigger)
                what = f"{b.trigger.api or 'load'} that started the parallel CPU load"
                locations.append(ctx.loc(at.file, at.line, what))
        pch_threads = {p.thread for p in ctx.report.pch}
        if len(pch_threads) > 1:
            total = sum(p.ms for p in ctx.report.pch)
            evidence.append(
                Evidence(
                    fact=(
                        f"measured: {len(ctx.report.pch)} precompiled headers were built on {len(pch_threads)} "
                        f"threads ({fmt_ms(total)} in total): each worker thread pays its own."
                    ),
                    ms=round(total, 1),
                )
            )

    certain = bool(overlaps) or any(c for _lc, c, _w in scan_calls) or any(c for _c, c in measured_calls)
    confidence = "high" if certain else "medium"

    call_sites = ", ".join(f"{lc.file}:{lc.line}" for lc, _c, _w in scan_calls) or "the parallel load call"
    fix = (
        f"Load serially whenever the target can be the CPU: pass max_workers=1 to the load call at {call_sites} "
        "(device=None and mixed device lists include the CPU). If CUDA devices should still be preloaded in "
        "parallel, make a separate call for them, e.g. "
        "wp.force_load(device=d, modules=[...], max_workers=N if wp.get_device(d).is_cuda else 1)."
    )
    if setting is not None:
        fix += (
            f" Also set wp.config.load_module_max_workers back to 0 (serial) at {setting.file}:{setting.line}, "
            "or drop the assignment, unless every load in the process is CUDA-only."
        )
    fix += " Do not hide the race behind launch retries or a JIT warm-up."

    finding = Finding(
        **_edit_fields(ctx, scan_calls, setting, measured_calls),  # type: ignore[arg-type]
        mechanism=MECHANISM,
        title="Parallel first loads can target the CPU, where Warp's native JIT is not thread-safe",
        severity="high",
        confidence=confidence,
        modules=modules,
        evidence=evidence,
        locations=dedupe_locations(locations),
        fix=fix,
        estimated_saving_ms=None,
        saving_basis=(
            "not a speed fix: concurrent first CPU loads can report success and then lose kernels "
            '("Failed to find module" / "Failed to find forward kernel"), intermittently'
        ),
        caveats=[
            "CUDA-only parallel loads are not affected; gate the parallel path on device.is_cuda.",
            "The race is timing dependent: a run that succeeded proves nothing; retries do not make it safe.",
            "Serial loading also builds one precompiled header per process instead of one per worker thread.",
        ],
        samples=ctx.samples,
    )
    return RuleResult(findings=[finding])


LOAD_APIS = {"force_load", "load_module"}


def _serial_edit(ctx: RuleContext, file: str, line: int) -> Edit | None:
    """max_workers=1 in the load call at file:line (only where the call passes max_workers: a call without it may
    run on a Warp release whose force_load has no such keyword)."""
    calls = ce.calls_at(ctx.sources, file, line, LOAD_APIS)
    calls = [c for c in calls if ce.keyword_text(ctx.sources, file, c, "max_workers") is not None]
    return ce.keyword_edit(ctx.sources, file, calls[0], "max_workers", "1") if len(calls) == 1 else None


def _setting_edit(ctx: RuleContext, setting: SettingFact) -> Edit | None:
    """`wp.config.load_module_max_workers = N` -> `= 0` (serial), the assignment's value only."""
    st = ce.statement_at(ctx.sources, setting.file, setting.line)
    value = getattr(st, "value", None)
    if value is None or value.lineno != value.end_lineno or value.end_col_offset is None:
        return None
    return ce.splice(ctx.sources, setting.file, value.lineno, value.col_offset, value.end_col_offset, "0")


def _edit_fields(
    ctx: RuleContext,
    scan_calls: list[tuple[LoadCallFact, bool, str]],
    setting: SettingFact | None,
    measured: list[tuple[ApiCall, bool]],
) -> dict[str, object]:
    """Serial loads as edits: max_workers=1 at each CPU-capable parallel call, the global setting back to 0.

    A call in a dependency gets no edit; the finding then carries an upstream report for its maintainers."""
    edits: list[Edit] = []
    missing: list[str] = []
    foreign: list[Location] = []
    seen: set[tuple[str, int]] = set()
    sites = [(lc.file, lc.line, lc.max_workers is not None) for lc, _c, _w in scan_calls]
    sites += [(c.site.file, c.site.line, True) for c, _c in measured if c.site is not None]
    for file, line, has_kw in sites:
        if ce.is_dependency(ctx, file):
            foreign.append(ctx.loc(file, line, "parallel first load that can reach the CPU"))
            continue
        rel = ctx.sources.rel(file) or ctx.rel(file)
        if (rel, line) in seen or not has_kw:
            continue
        seen.add((rel, line))
        e = _serial_edit(ctx, rel, line)
        if e is None:
            missing.append(f"{rel}:{line}")
        else:
            edits.append(e)
    if setting is not None and any("load_module_max_workers" in why for _lc, _c, why in scan_calls):
        e = _setting_edit(ctx, setting)
        if e is None:
            missing.append(f"{setting.file}:{setting.line}")
        else:
            edits.append(e)
    out: dict[str, object] = {"edits": edits}
    if foreign and not edits:
        out["applicability"] = "manual"
        out["review"] = "the parallel load is a dependency's: no project edit changes it (see the upstream report)"
        out["upstream"] = UpstreamReport(
            places=foreign,
            change="pass max_workers=1 (or gate the parallel path on the device being CUDA) where the load can "
            "target the CPU",
            text=(
                "A parallel wp.force_load / wp.load_module can reach the CPU, where concurrent first loads race "
                "Warp's native JIT (kernels reported loaded, then not found, intermittently). Load serially when "
                "the device can be the CPU: max_workers=1, or max_workers=N only when the device is CUDA."
            ),
        )
    elif edits and not missing:
        out["applicability"] = "automatic"
        out["review"] = (
            "Serial CPU loads build the same modules with the same options: launches and results are unchanged. "
            "This removes a race, it is not a speed fix: with idle cores the serial preload can measure slightly "
            "slower (one thread builds what two built side by side)."
        )
    elif edits:
        out["applicability"] = "review"
        out["review"] = f"the load call at {', '.join(missing)} could not be rewritten: pass max_workers=1 by hand"
    else:
        out["applicability"] = "manual"
        out["review"] = (
            f"no edit: the load call at {', '.join(missing)} could not be read or rewritten; pass max_workers=1 "
            "there by hand"
            if missing
            else "no edit: the parallel loads pass no max_workers to rewrite (adding one breaks Warp releases "
            "whose force_load has no such keyword); pass max_workers=1 by hand where the release accepts it"
        )
    return out
