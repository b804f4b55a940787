"""CS-11: the unroll budget inflates generated source (a size and runtime knob, not a cold-start fix).

Fires (severity info, no saving claimed) when a compiled module's kernels hold constant-bound loops that are
unrolled beyond Warp's default budget of 16 iterations: either `max_unroll` was raised (the build's resolved option
or a setting in the sources) and a loop's trip count lies between 16 and the raised value, or a loop with a
`wp.static` bound is force-unrolled past 16. The module's generated source per kernel is the evidence. The study
behind this mechanism cut source ~39% by lowering the budget and measured no cold-time gain, so the finding presents
it as a source-size and runtime trade-off.
"""

from __future__ import annotations

import re

from warp_compile.probe.diagnosis_models import Evidence, Finding, Location, RuledOut, RuleResult
from warp_compile.probe.models import Build
from warp_compile.probe.rules.context import RuleContext, dedupe_locations
from warp_compile.probe.scan_models import LoopFact, ScanFacts, SettingFact

MECHANISM = "CS-11"
DEFAULT_MAX_UNROLL = 16
MIN_BYTES_PER_KERNEL = 8_000  # below this the source is not "large" whatever unrolled it


def warp_key(qualname: str) -> str:
    return re.sub("[^0-9a-zA-Z_]+", "", qualname.replace(".", "__"))


def _int(text: str | None) -> int | None:
    if text is None:
        return None
    try:
        return int(str(text).strip().strip("'\""))
    except ValueError:
        return None


def _loops_of(scan: ScanFacts, b: Build) -> list[LoopFact]:
    """Constant-bound loops in the kernels (and wp.funcs) compiled into this build."""
    keys = {k.key for k in b.kernels}
    kernel_names = {k.name for k in scan.kernels if warp_key(k.qualname) in keys or k.name in keys}
    func_keys = set(b.functions)
    func_names = {f.name for f in scan.functions if warp_key(f.qualname) in func_keys or f.name in func_keys}
    out = []
    for lp in scan.loops:
        if (lp.kind == "kernel" and lp.kernel in kernel_names) or (lp.kind == "func" and lp.kernel in func_names):
            out.append(lp)
    return out


def _unroll_settings(scan: ScanFacts | None) -> list[SettingFact]:
    return [] if scan is None else scan.settings_named("max_unroll")


def evaluate(ctx: RuleContext) -> RuleResult:
    compiled = ctx.compiled
    if not compiled:
        return RuleResult(ruled_out=[RuledOut(mechanism=MECHANISM, signal="no module was compiled in the cold run")])
    scan = ctx.scan
    settings = _unroll_settings(scan)
    raised_settings = [s for s in settings if (_int(s.value) or 0) > DEFAULT_MAX_UNROLL]

    hits: list[tuple[Build, int, list[LoopFact]]] = []
    notes: list[str] = []
    for b in compiled:
        budget = _int(b.options.get("max_unroll")) or DEFAULT_MAX_UNROLL
        loops = _loops_of(scan, b) if scan is not None else []
        beyond = [lp for lp in loops if lp.bound > DEFAULT_MAX_UNROLL and (lp.static or lp.bound <= budget)]
        per_kernel = b.source_bytes / max(1, len(b.kernels))
        if beyond and per_kernel >= MIN_BYTES_PER_KERNEL:
            hits.append((b, budget, beyond))
        elif budget > DEFAULT_MAX_UNROLL and not beyond:
            notes.append(f"{b.module} has max_unroll {budget} but no constant loop longer than {DEFAULT_MAX_UNROLL}")
        elif beyond:
            notes.append(
                f"{b.module} unrolls loops past {DEFAULT_MAX_UNROLL} but its source is small "
                f"({per_kernel:.0f} B per kernel)"
            )

    if not hits:
        signal = (
            f"no compiled module unrolls a constant loop beyond the default budget of {DEFAULT_MAX_UNROLL} "
            "(no raised max_unroll reaching a loop, no wp.static loop past it)"
        )
        if notes:
            signal += "; " + "; ".join(sorted(set(notes)))
        if raised_settings and not any((_int(b.options.get("max_unroll")) or 0) > DEFAULT_MAX_UNROLL for b in compiled):
            signal += (
                "; the sources raise max_unroll ("
                + ", ".join(f"{s.file}:{s.line} = {s.value}" for s in raised_settings)
                + ") but no compiled module carries the raised value (set after the modules were created? see CS-3)"
            )
        return RuleResult(ruled_out=[RuledOut(mechanism=MECHANISM, signal=signal)])

    evidence: list[Evidence] = []
    locations: list[Location] = []

    for s in raised_settings:
        locations.append(ctx.loc(s.file, s.line, f"max_unroll raised to {s.value} (default {DEFAULT_MAX_UNROLL})"))
        evidence.append(
            Evidence(
                fact=(
                    f"{s.file}:{s.line}: max_unroll is set to {s.value} ({s.via}), above the default "
                    f"{DEFAULT_MAX_UNROLL}."
                ),
                source="scan",
            )
        )
    for b, budget, loops in hits:
        per_kernel = b.source_bytes / max(1, len(b.kernels))
        loop_txt = ", ".join(
            f"{lp.kernel} at {lp.file}:{lp.line} ({lp.bound} iterations{', wp.static' if lp.static else ''})"
            for lp in loops
        )
        evidence.append(
            Evidence(
                fact=(
                    f"{b.module} (build {b.seq}, max_unroll {budget}): {b.source_bytes} B of generated source for "
                    f"{len(b.kernels)} kernel(s), ~{per_kernel:.0f} B per kernel; unrolled past "
                    f"{DEFAULT_MAX_UNROLL}: {loop_txt}."
                ),
                builds=[b.seq],
                source="both",
            )
        )
        for lp in loops:
            locations.append(ctx.loc(lp.file, lp.line, f"unrolled {lp.bound}x"))

    modules = sorted({b.module for b, _bud, _l in hits})
    where = ", ".join(f"{s.file}:{s.line}" for s in raised_settings)
    fix = (
        "Treat max_unroll as a runtime and source-size knob, not a compile-time fix. If the unrolled loops are not "
        "needed for kernel throughput, lower the budget back towards the default "
        + (f"(the setting at {where}) " if where else "")
        + "before the modules are created, then benchmark steady-state kernel time; keep the raised value if "
        "runtime needs it. Loops with wp.static bounds unroll regardless of max_unroll."
    )
    return RuleResult(
        findings=[
            Finding(
                mechanism=MECHANISM,
                title="Loops are unrolled past the default budget, inflating generated source",
                severity="info",
                confidence="medium",
                modules=modules,
                evidence=evidence,
                locations=dedupe_locations(locations),
                fix=fix,
                estimated_saving_ms=None,
                saving_basis=(
                    "none claimed: lowering max_unroll cut generated source ~39% in the reference study with no "
                    "measurable cold-time gain; more source did not mean a slower compile"
                ),
                caveats=[
                    "Changing max_unroll changes generated code and can slow kernels down: benchmark steady-state "
                    "runtime before keeping any change, and ask whether startup or throughput matters more.",
                    "max_unroll is copied from wp.config when a module is created: a global set after the import "
                    "never arrives (check the module hash moved).",
                ],
                samples=ctx.samples,
            )
        ]
    )
