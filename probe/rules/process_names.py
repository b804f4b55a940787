"""Modules whose names change from one process to the next, so the kernel cache, keyed on the name, never hits.

The measurement runs the command twice against one cache. A module the warm run compiled under a name the cold run
never used, made at the very line where the cold run made a module whose name the warm run never used, is the same
code under a new name: something in its naming differs per process (Python's `hash()` of a string is salted per
process unless PYTHONHASHSEED is fixed). Pairs come from the builds' triggering lines, with the Warp function that
made the kernel from the run's record, so the cause can be looked for where the name is made. `Renamings` is what
CS-2 (cache_reuse.py) adds for them: evidence, the app's lines, the lambdas named there, the upstream report.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..dependency_source import builtin_calls
from ..fix.edits import replace_lines
from ..fix.transform.named_lambda import name_lambdas
from ..models import Build, Report
from ..models.diagnosis import Edit, Evidence, Location, UpstreamReport
from ..models.report import WarpSite
from . import helpers
from .context import RuleContext, fmt_ms


@dataclass
class Renamed:
    """One module built under a new name in the warm run, at the line where the cold run built it."""

    file: str
    line: int
    function: str
    cold: str
    warm: str
    warm_build: Build
    via: WarpSite | None  # the Warp function that made the kernel, when a Warp API made it for the app


def renamed_modules(report: Report) -> list[Renamed]:
    cold_names = {b.module for b in report.builds}
    warm_names = {b.module for b in report.warm_builds}
    gone: dict[tuple[str, int], list[Build]] = {}
    for b in report.builds:
        if b.module not in warm_names and b.trigger is not None:
            gone.setdefault((b.trigger.file, b.trigger.line), []).append(b)
    via = {c.module: c.via for c in report.kernel_creations}
    out: list[Renamed] = []
    for w in report.warm_builds:
        if w.status != "compiled" or w.module in cold_names or w.trigger is None:
            continue
        olds = gone.get((w.trigger.file, w.trigger.line)) or []
        if not olds:
            continue
        old = olds.pop(0)
        out.append(Renamed(file=w.trigger.file, line=w.trigger.line, function=w.trigger.function, cold=old.module,
                           warm=w.module, warm_build=w, via=via.get(old.module)))
    return out


@dataclass
class Renamings:
    """What modules renamed in every process add to the finding: evidence, the app's lines, the lambdas named there,
    and the report for the dependency whose code salts the name."""

    pairs: list[Renamed] = field(default_factory=list)
    evidence: list[Evidence] = field(default_factory=list)
    locations: list[Location | None] = field(default_factory=list)
    fixes: list[str] = field(default_factory=list)
    edits: list[Edit] = field(default_factory=list)
    review: list[str] = field(default_factory=list)
    upstream: UpstreamReport | None = None

    @classmethod
    def of(cls, ctx: RuleContext, pairs: list[Renamed]) -> Renamings:
        out = cls(pairs=pairs)
        if not pairs:
            return out
        salted: dict[str, list[tuple[str, int, str]]] = {}
        for p in pairs:
            where = f"{ctx.rel(p.file)}:{p.line}"
            made = ""
            dist = helpers.dependency_of(ctx, p.via.file) if p.via is not None else None
            if p.via is not None and dist:
                made = f", made by {dist}'s {p.via.function}()"
                for n in builtin_calls(p.via.file, "hash"):
                    place = (helpers.dist_relative(p.via.file), n, "names what it generates with Python's hash(), "
                             "which is salted per process: the module name differs in every process")
                    if place not in salted.setdefault(dist, []):
                        salted[dist].append(place)
            out.evidence.append(Evidence(
                fact=f"the warm run compiled {p.warm} at {where}{made}, where the cold run had built {p.cold}: the "
                     "same code under a new name, so the cache the cold run filled has nothing under it "
                     f"({fmt_ms(p.warm_build.ms)})",
                builds=[p.warm_build.seq], ms=p.warm_build.ms))
            out.locations.append(ctx.loc(p.file, p.line, f"the module made here is named anew in every process "
                                                         f"({p.cold}, then {p.warm})"))
        for dist, places in salted.items():
            out.evidence.append(Evidence(
                fact=f"{dist} calls Python's hash() where it names what it generates ("
                     + ", ".join(f"{f}:{n}" for f, n, _ in places) + "): hash() of a string is salted per process "
                     "unless PYTHONHASHSEED is fixed", source="scan"))
            ms = sum(p.warm_build.ms for p in pairs)
            out.upstream = helpers.upstream_report(
                dist, f"Generated module names change in every process in {dist}, so the kernel cache never hits",
                places, ms, f"a second process against the first one's kernel cache compiled {len(pairs)} module(s) "
                f"again under new names ({fmt_ms(ms)})",
                "name generated functions with a stable digest of their source (hashlib), not Python's hash()")
        named_edits: dict[tuple[str, int], Edit] = {}
        refused = []
        for p in pairs:
            src = helpers.parsed(ctx, p.file)
            if src is None:
                refused.append(f"{ctx.rel(p.file)}:{p.line} is not the project's source")
                continue
            named = name_lambdas(src[0], src[1], p.line)
            if named.why_not:
                refused.append(f"{ctx.rel(p.file)}:{p.line}: {named.why_not}")
                continue
            e = replace_lines(ctx.sources, p.file, named.start, named.end, named.new)
            if e is not None:
                named_edits[(p.file, named.start)] = e
        out.edits = list(named_edits.values())
        if out.edits:
            lines = ", ".join(f"{e.file}:{e.start_line}" for e in out.edits)
            out.fixes.append(f"give the lambdas at {lines} a name (a def just before the statement): a named "
                             "function's generated code is keyed on its qualified name, the same in every process")
            out.review.append("each lambda is now a def of the same body in the same block, so it reads the same "
                              "variables; Warp names its generated function after the def")
        else:
            out.fixes.append("find what names these modules differently in every process (a hash() of a string, an "
                             "id(), a time or a counter in the name) and make the name depend only on the code")
        if refused:
            out.review.append("not changed: " + "; ".join(refused))
        return out
