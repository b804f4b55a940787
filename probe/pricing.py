"""Savings on the CPU clock, priced by what the run measured: the settings rebuilds, else the builds' own CPU time.

`diagnose` asks its first cold run to rebuild, at exit, the CPU modules it compiled with a setting changed
(probe/hook_rebuild.py): each module with adjoint code as it is and with enable_backward False, and with few modules
each one with the precompiled header off and on. Those are measured differences on the building thread's CPU clock,
the clock `compare`, `fix` and `diagnose --verify` decide CPU compile work on. Here they replace the rules' modelled
estimates for CS-10 and CS-12; the model stays where nothing was rebuilt, and says so. Every other estimate that sums
the run's builds (the superseded builds of CS-1, CS-3, CS-6, ...) is put on the same clock by those builds' own CPU
share. Pure: a Report and its findings in, the findings' estimates and bases changed in place.
"""

from __future__ import annotations

import json
import time

from .contention import is_contended
from .fmt import fmt_ms
from .models import Build, Report
from .models.diagnosis import Evidence, Finding
from .models.report import Rebuild, RebuildEntry
from .stats import stat_median

# estimates that sum the run's own builds (the superseded ones), and modelled ones over build times: both restated on
# the builds' CPU time; the scheduling mechanisms (CS-8, CS-13) save waiting, not CPU work, and the CUDA-only ones
# (CS-5, CS-7) and the cache fix (CS-2) are about other runs' builds: they keep their clocks
BUILD_SUMS = frozenset({"CS-1", "CS-3", "CS-6"})
MODELLED = frozenset({"CS-4", "CS-9", "CS-10", "CS-11", "CS-12"})
REBUILD_ENV = "WARP_COMPILE_REBUILD"  # read by the hook (hook_clocks.load_rebuild)
DEFAULT_LIMIT_S = 60.0  # CPU seconds the rebuilds may take by default; 0 turns them off
CPU_CLOCK = "compile_cpu"


def rebuild_env(limit_s: float | None, timeout_s: float | None = None) -> dict[str, str]:
    """The environment that asks a cold run for the settings rebuilds (empty: none asked for). With `timeout_s` (the
    run's, starting about now) the rebuilds also stop short of it: they never make a run time out."""
    if not limit_s or limit_s <= 0:
        return {}
    ask: dict[str, float] = {"limit_s": float(limit_s)}
    if timeout_s:
        ask["deadline"] = time.time() + 0.9 * float(timeout_s)
    return {REBUILD_ENV: json.dumps(ask)}


def _cpu(b: Build) -> float | None:
    return b.cpu_ms if b.status == "compiled" else None


def _share(builds: list[Build]) -> float | None:
    """CPU time over wall time of these compiled builds (None when one of them has no CPU clock)."""
    done = [b for b in builds if b.status == "compiled"]
    if not done or any(b.cpu_ms is None for b in done):
        return None
    wall = sum(b.ms for b in done)
    return sum(b.cpu_ms or 0.0 for b in done) / wall if wall > 0 else None


def _one_sample(r: Rebuild, report: Report, step_name: str) -> str:
    limit = f", limit {r.limit_s:g} s" if r.limit_s else ""
    share = report.other_share
    busy = (f"; other work used {share:.0%} of the machine meanwhile, and CPU time runs high on shared cores"
            if is_contended(share) else "")
    step = r.steps.get(step_name)
    n = max((e.samples for e in step.entries), default=1) if step is not None else 1
    each = "one sample of each side per module" if n == 1 else f"each side the lesser of {n} builds per module"
    return (
        f"measured at exit of the first cold run: {r.builds} rebuild(s) into a private cache, {each}, the order "
        f"alternating, {fmt_ms(r.cpu_ms or 0.0)} of CPU time{limit}{busy}"
    )


def _skipped(r: Rebuild, step: str, modules: list[str]) -> list[str]:
    return [s.module for s in r.skipped if s.step in (step, "any") and s.module in modules]


def _price_backward(f: Finding, report: Report, r: Rebuild) -> bool:
    step = r.steps.get("backward")
    if step is None:
        return False
    mine = [e for e in step.entries if e.module in f.modules and e.saving_cpu_ms is not None]
    if not mine:
        return False
    measured = sum(e.saving_cpu_ms or 0.0 for e in mine)
    done = {e.module for e in mine}
    rest = [m for m in f.modules if m not in done]
    model = f.estimated_saving_ms
    per = "; ".join(f"{e.module} {fmt_ms(e.as_is.cpu_ms)} -> {fmt_ms(e.changed.cpu_ms)}" for e in mine)
    fact = (f"rebuilt with enable_backward False at exit (CPU time of the building thread, as built -> forward-only): "
            f"{per}; saves {fmt_ms(measured)}")
    f.evidence.append(Evidence(fact=fact + ".", builds=[], ms=round(measured, 1)))
    how = _one_sample(r, report, "backward")
    basis = f"{fmt_ms(measured)} measured: each module rebuilt as built and forward-only ({how})"
    if rest:
        unmeasured = [b for b in report.builds if b.module in rest and b.status == "compiled"]
        allb = [b for b in report.builds if b.module in f.modules and b.status == "compiled"]
        part = sum(_cpu(b) or b.ms for b in unmeasured) / max(1e-9, sum(_cpu(b) or b.ms for b in allb))
        extra = (model or 0.0) * part * (_share(allb) or 1.0)
        skipped = _skipped(r, "backward", rest)
        why = f"skipped by the rebuild limit ({', '.join(skipped)})" if skipped else "not rebuilt"
        basis += (f"; {len(rest)} module(s) {why}: the model's share for them, {fmt_ms(extra)} ({part:.0%} of the "
                  "modules' build time), is added")
        measured += extra
    if model is not None:
        basis += f"; the model (adjoint share of the source, below) gave {fmt_ms(model)}"
    f.saving_basis = basis + ("; model: " + f.saving_basis if f.saving_basis else "")
    f.estimated_saving_ms = round(measured, 1)
    f.saving_source = "rebuild" if not rest else "rebuild+model"
    return True


def _header_keys(report: Report) -> int:
    """Headers the default would build: one per compiling thread and block_dim (as the CS-12 rule counts them)."""
    cpu = [b for b in report.builds if b.status == "compiled" and b.device.startswith("cpu")]
    return len({(b.thread, b.block_dim) for b in cpu})


def _price_header(f: Finding, report: Report, r: Rebuild) -> bool:
    step = r.steps.get("header")
    setting = (f.experiment or {}).get("use_precompiled_headers")
    if step is None or setting is None or not step.entries or not step.headers:
        return False
    entries: list[RebuildEntry] = step.entries
    if any(e.as_is.cpu_ms is None or e.changed.cpu_ms is None for e in entries):
        return False
    header = sum(h.cpu_ms or 0.0 for h in step.headers) / len(step.headers)
    on = sum((e.as_is if e.run_header else e.changed).cpu_ms or 0.0 for e in entries)
    off = sum((e.changed if e.run_header else e.as_is).cpu_ms or 0.0 for e in entries)
    if setting is False:  # the header is on: turning it off saves its builds and costs every module the parse
        n = step.run_headers or 1
        saving = n * header + on - off
        how = f"{n} header build(s) of {fmt_ms(header)} + {fmt_ms(on)} of modules with it - {fmt_ms(off)} without it"
    else:  # the header is off: turning it on costs one header per thread and key, and saves the parse
        n = _header_keys(report)
        saving = off - on - n * header
        how = f"{fmt_ms(off)} of modules without the header - {fmt_ms(on)} with it - {n} header build(s) of " \
              f"{fmt_ms(header)}"
    per = "; ".join(f"{e.module} {fmt_ms(e.as_is.cpu_ms)} as built, {fmt_ms(e.changed.cpu_ms)} toggled"
                    for e in entries)
    f.evidence.append(Evidence(fact=f"rebuilt at exit with the precompiled header off and on (CPU time of the "
                                    f"building thread): {per}; a fresh header took {fmt_ms(header)}.",
                               ms=round(saving, 1)))
    model = f.estimated_saving_ms
    basis = f"{fmt_ms(saving)} measured: {how} ({_one_sample(r, report, 'header')})"
    if model is not None:
        basis += f"; the model gave {fmt_ms(model)}"
    f.saving_basis = basis + ("; model: " + f.saving_basis if f.saving_basis else "")
    f.estimated_saving_ms = round(saving, 1) if saving > 0 else None
    if saving <= 0:
        f.caveats.insert(0, f"Measured by rebuilding, the change would cost {fmt_ms(-saving)} more CPU time, not save "
                            "it: keep the current setting unless another workload says otherwise.")
    f.saving_source = "rebuild"
    return True


def _on_cpu_clock(f: Finding, report: Report) -> bool:
    """An estimate over the run's builds, restated on their CPU time (their own CPU share of wall time)."""
    seqs = {s for ev in f.evidence for s in ev.builds}
    builds = [b for b in report.builds if b.seq in seqs] or [b for b in report.builds if b.module in f.modules]
    share = _share(builds)
    if share is None or f.estimated_saving_ms is None:
        return False
    wall = f.estimated_saving_ms
    f.estimated_saving_ms = round(wall * share, 1)
    f.saving_basis += (f"; on the CPU clock: {fmt_ms(wall)} of build wall time x {share:.2f}, those builds' CPU time "
                       "over their wall time in this run")
    f.saving_source = f.saving_source or ("builds" if f.mechanism in BUILD_SUMS else "model")
    return True


def price(findings: list[Finding], report: Report) -> None:
    """Every estimate on the CPU clock where the report has one: rebuild-measured for CS-10 and CS-12, the builds'
    CPU share for the rest; a finding whose report has no CPU clocks keeps its wall-time estimate."""
    if not report.cold_module_cpu_ms.values and not any(b.cpu_ms is not None for b in report.builds):
        return
    r = report.rebuild
    for f in findings:
        if f.mechanism not in BUILD_SUMS | MODELLED:
            continue
        priced = False
        if r is not None and f.mechanism == "CS-10":
            priced = _price_backward(f, report, r)
        elif r is not None and f.mechanism == "CS-12":
            priced = _price_header(f, report, r)
        if not priced and _on_cpu_clock(f, report) and f.mechanism in ("CS-10", "CS-12"):
            f.saving_basis += ("; modelled: nothing was rebuilt to measure it (no rebuild was asked for)" if r is None
                               else "; modelled: the rebuild at exit did not cover these modules (see its skips)")
        if priced or f.estimated_saving_ms is None or f.saving_source:
            f.saving_clock = CPU_CLOCK


def as_shares(findings: list[Finding], report: Report) -> None:
    """Each estimate on the CPU clock as a share of the run's own compile CPU (the clock --verify and fix measure it
    on): CPU time on a loaded machine stretches a saving and the compile it belongs to alike, so the share is the
    figure that compares across runs and with the measurement (MeasuredSaving.saving_pct). A wall-time estimate may
    be about another clock than compile elapsed (the warm repeat's, a cache fix's), so it gets none."""
    whole = stat_median(report.compile_cpu_ms)
    if whole is None or whole <= 0:
        return
    for f in findings:
        if f.estimated_saving_ms is not None and f.saving_clock == CPU_CLOCK:
            f.estimated_saving_pct = round(100.0 * f.estimated_saving_ms / whole, 1)
