"""CS-10's report for the maintainers of an installed library whose modules compile backward code the run never used.

The entry-point setting is all the application can do; the library can build backward code only where its users ask
for gradients. Kept apart from the rule (probe/rules/unused_backward.py), which detects and explains.
"""

from __future__ import annotations

from ..dependency_advice import dependency_of, dist_relative, upstream_report
from ..fmt import fmt_ms
from ..models.diagnosis import UpstreamReport
from .backward_cost import BackwardModule
from .context import RuleContext


def upstream_for(ctx: RuleContext, targets: list[BackwardModule], estimate: float | None) -> UpstreamReport | None:
    """The report for the maintainers of an installed library whose modules compile backward code this run never
    used: the entry-point setting is all the application can do, while the library can build backward code only
    where its users ask for gradients. Where the run launched every kernel of such a module, the module option goes
    above its first kernel; otherwise the places are the kernels the run launched forward-only (the ones that users
    who never differentiate pay for), each at its definition."""
    by_dist: dict[str, list[tuple[str, int, str]]] = {}
    spent: dict[str, float] = {}
    facts: dict[str, list[str]] = {}
    for m in sorted(targets, key=lambda m: -m.ms):
        # a kernel whose own option turns backward off has no adjoint in the module's source: not the maintainers' cost
        kernels = {k.key: k for b in m.builds for k in b.kernels
                   if k.file and k.line and k.enable_backward is not False}
        files = sorted({k.file for k in kernels.values() if k.file})
        dists = {dependency_of(ctx, f) for f in files}
        if len(dists) != 1 or None in dists:
            continue  # the project's module, one of unknown owner, or one spread over owners: no single report
        dist = str(next(iter(dists)))
        launched = sorted({la.kernel for la in ctx.report.launches if la.module == m.name and not la.adjoint})
        places = by_dist.setdefault(dist, [])
        if launched and set(kernels) <= set(launched) and len(files) == 1:
            first = min(kernels.values(), key=lambda k: k.line or 0)
            places.append((dist_relative(files[0]), int(first.line or 0),
                           f"{m.name}: every kernel of it ran forward-only here; the module option "
                           "enable_backward False goes above this first kernel"))
        else:
            for key in launched:
                k = kernels.get(key)
                if k is not None and k.file:
                    places.append((dist_relative(k.file), int(k.line or 0),
                                   f"{key} ({m.name}) launched forward-only, compiled with its adjoint"))
        spent[dist] = spent.get(dist, 0.0) + m.ms
        adj = sum(b.backward_source_bytes or 0 for b in m.builds)
        src = sum(b.source_bytes for b in m.builds)
        facts.setdefault(dist, []).append(f"{m.name} {fmt_ms(m.ms)} ({adj:,} of {src:,} B of its source adjoint)")
    by_dist = {d: p for d, p in by_dist.items() if p}
    if not by_dist:
        return None
    dist = max(by_dist, key=lambda d: spent[d])
    return upstream_report(
        dist, f"{dist} compiles backward code that forward-only users never run",
        by_dist[dist], spent[dist],
        "cold builds of " + "; ".join(facts[dist]) + ", none of their launches in the run an adjoint launch",
        "build the adjoint only where gradients are asked for: enable_backward False on kernels or modules that "
        "run forward-only (per kernel, or wp.set_module_options at the top of a module whose kernels are never "
        "differentiated), or a kernel made by a factory keyed on whether the caller requires gradients",
        estimated=f"about {fmt_ms(estimate)} of compile per cold start" if estimate is not None else "",
    )
