"""CS-9: module="unique" on kernels that never change, so each stable kernel pays a module of its own.

A unique module is named `<kernel>_<hash8>` and holds one kernel. That isolation is worth it for a kernel whose
captured data or options vary at run time (a plugin, a user-supplied transform): it then stops invalidating a shared
module. For a kernel built exactly once per run it only buys one more build and load. The measurement tells the
two apart: a family (one kernel key) with a single member is stable; one with several members (varying constants)
is doing what unique is for and is left alone.

Fires when at least 2 stable unique families were built in the cold run. The scan adds where `"unique"` comes from:
a literal `module="unique"`, or a factory whose `module` parameter defaults to it (where it silently spreads).
Estimate: (n - 1) x the median load of those modules (they would share one module's fixed cost).
"""

from __future__ import annotations

from collections import defaultdict

from warp_compile.probe.diagnosis_models import Evidence, Finding, Location, RuledOut, RuleResult
from warp_compile.probe.hashdiff import unique_family
from warp_compile.probe.models import Build
from warp_compile.probe.rules.context import RuleContext, dedupe_locations, fmt_ms
from warp_compile.probe.scan_models import KernelDef

MECHANISM = "CS-9"
MIN_FAMILIES = 2


def _median(xs: list[float]) -> float:
    s = sorted(xs)
    n = len(s)
    return s[n // 2] if n % 2 else (s[n // 2 - 1] + s[n // 2]) / 2


def _families(ctx: RuleContext) -> dict[str, list[Build]]:
    out: dict[str, list[Build]] = defaultdict(list)
    for b in ctx.report.builds:
        key = unique_family(b)
        if key is not None and b.status in ("compiled", "cached"):
            out[key].append(b)
    return out


def _unique_defs(ctx: RuleContext) -> list[KernelDef]:
    if ctx.scan is None:
        return []
    return [k for k in ctx.scan.kernels if k.module_arg == "unique"]


def _factory(k: KernelDef) -> str:
    return (k.enclosing_function or "").split(".<locals>.")[0] or "the factory"


def _default_line(k: KernelDef) -> int | None:
    """Line of the `module="unique"` parameter default, when the scan records it (the factory's signature)."""
    line = getattr(k, "module_default_line", None)
    return line if isinstance(line, int) and line > 0 else None


def _def_location(ctx: RuleContext, k: KernelDef) -> Location:
    if k.module_from_default:
        line = _default_line(k)
        if line is not None:
            return ctx.loc(k.file, line, f'{_factory(k)}() defaults its module parameter to "unique"')
        return ctx.loc(k.file, k.line, f'wp.kernel(module=...) here gets "unique" from {_factory(k)}()\'s default')
    return ctx.loc(k.file, k.line, f'{k.name} is declared module="unique"')


def evaluate(ctx: RuleContext) -> RuleResult:
    fams = _families(ctx)
    stable = {key: bs for key, bs in fams.items() if len(bs) == 1 and bs[0].status == "compiled"}
    varying = {key: bs for key, bs in fams.items() if len(bs) > 1}
    if len(stable) < MIN_FAMILIES:
        if not fams:
            signal = 'no module="unique" modules were loaded'
        else:
            signal = (
                f"{len(fams)} unique-module famil{'y' if len(fams) == 1 else 'ies'} loaded, "
                f"{len(stable)} built once"
                + (f"; {len(varying)} vary at run time (kept unique on purpose)" if varying else "")
            )
        return RuleResult(ruled_out=[RuledOut(mechanism=MECHANISM, signal=signal)])
    builds = sorted((bs[0] for bs in stable.values()), key=lambda b: b.seq)
    n = len(builds)
    med = _median([b.ms for b in builds])
    saving = (n - 1) * med
    defs = _unique_defs(ctx)
    from_default = [k for k in defs if k.module_from_default]
    locations: list[Location | None] = [_def_location(ctx, k) for k in (from_default or defs)]
    for b in builds:
        for k in b.kernels:
            locations.append(ctx.kernel_loc(k, f"{k.key}: its own module {b.module}"))
    evidence = [
        Evidence(
            fact=f"{n} kernels each got a hash-named module of their own and were built exactly once: "
            + ", ".join(f"{b.module} #{b.seq} {fmt_ms(b.ms)}" for b in builds),
            builds=[b.seq for b in builds],
            ms=sum(b.ms for b in builds),
        )
    ]
    if varying:
        evidence.append(
            Evidence(
                fact=f"{', '.join(sorted(varying))} built several unique versions (varying data): left unique",
                builds=[b.seq for bs in varying.values() for b in bs],
            )
        )
    for k in from_default[:3]:
        evidence.append(
            Evidence(
                fact=f'{_factory(k)}() passes its module parameter, default "unique", to wp.kernel '
                f"({ctx.rel(k.file)}:{k.line}): every kernel it registers gets its own module",
                source="scan",
            )
        )
    for k in [k for k in defs if not k.module_from_default][:3]:
        fact = f'{k.name} is declared module="unique" ({ctx.rel(k.file)}:{k.line})'
        evidence.append(Evidence(fact=fact, source="scan"))
    names = ", ".join(b.kernels[0].key if b.kernels else b.module for b in builds)
    if from_default:
        k = from_default[0]
        line = _default_line(k)
        where = f"{ctx.rel(k.file)}:{line}" if line else f"passed to wp.kernel at {ctx.rel(k.file)}:{k.line}"
        fix = (
            f'Change the default of {_factory(k)}()\'s module parameter ({where}) from "unique" to None, so '
            f"{names} join their defining module {k.python_module} and build together once; a caller that really "
            'needs isolation can still pass module="unique" explicitly.'
        )
    elif defs:
        sites = ", ".join(f"{ctx.rel(k.file)}:{k.line}" for k in defs[:4])
        fix = (
            f'Remove module="unique" from these stable kernels ({sites}) so {names} join their Python module and '
            "build together once."
        )
    else:
        fix = (
            f'Stop giving {names} module="unique": let them join their defining module (or one named module) so they '
            "build together once."
        )
    return RuleResult(
        findings=[
            Finding(
                mechanism=MECHANISM,
                title=f'{n} stable kernels each build a module="unique" module of their own',
                severity=ctx.severity_for(saving),
                confidence="high" if defs else "medium",
                modules=[b.module for b in builds],
                evidence=evidence,
                locations=dedupe_locations(locations),
                fix=fix,
                estimated_saving_ms=round(saving, 1),
                saving_basis=f"({n} - 1) x {fmt_ms(med)}, the median load of the {n} unique modules (one shared "
                "module pays the fixed cost once); an upper bound, reference sample",
                samples=1 if ctx.samples else 0,
                caveats=[
                    "Keep module=\"unique\" for kernels built from runtime data (plugins, user-supplied transforms, "
                    "per-request specializations): there it stops them invalidating a shared module.",
                    "With a CPU precompiled header each extra module costs only ~100 ms and may sit inside run-to-run "
                    "noise; it costs more on CUDA and on Warp versions without the CPU header.",
                ],
            )
        ]
    )
