"""CS-9: module="unique" on kernels that never change, so each stable kernel pays a module of its own.

A unique module is named `<kernel>_<hash8>` and holds one kernel. That isolation is worth it for a kernel whose
captured data or options vary at run time (a plugin, a user-supplied transform, a kernel specialised per request):
it then stops invalidating a shared module. For kernels whose versions are all fixed by the source it only buys one
more build and load per version.

The measurement groups unique modules into families (one kernel key). A family with one member is stable. A family
with several members is one factory making several versions of its kernel, and the versions alone do not say why
they differ: a factory called three times at import with literal arguments (`make(0.6)`, `make(0.3)`, ...) makes a
fixed set, one called in a loop over run-time data or with user input makes versions that really vary. The scan's
factory calls tell them apart: every call with arguments fixed by the source (literals, module constants, loops over
constant sequences) makes the family stable; any call whose arguments come from run-time data (parameters, sys.argv,
environment, files, non-constant loops) keeps it unique on purpose. Without the scan, or when no call of the factory
is found, several members count as varying (the cautious reading). A stable multi-version family whose versions were
created between its loads (module_creations after the first load) is also left alone: sharing one module would
rebuild it for each new version (CS-1) unless the versions are created up front first.

Fires when at least 2 stable unique modules were built in the cold run. The scan adds where `"unique"` comes from:
a literal `module="unique"`, or a factory whose `module` parameter defaults to it (where it silently spreads).
Estimate: (n - 1) x the median load of those modules (they would share one module's fixed cost).

Edits, one plan in the order it needs (probe/fix/transform/plan.py): when the kernels are made by factories called
after their module would first load, the factories are cached and their versions created at import first; then the
module step (a declared `module="unique"` removed; a factory's default "unique" changed to None, review: callers rely
on it); then, when the shared module has options the unique modules never got, those options are set before its
first load, with what starts to apply named for review. A step whose precondition fails leaves the finding manual
with that precondition.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field

from ..fix.module_plan import Target, shared_target
from ..fix.place import unique_arguments
from ..fix.policy import MAX_ALTERNATIVES
from ..fix.realise import Realised, create_before_load
from ..fix.transform.decorators import default_to_shared, drop_unique
from ..fix.transform.plan import Plan, Step, failed
from ..hashdiff import unique_family
from ..models import Build, KernelCreation
from ..models.diagnosis import Alternative, Edit, Evidence, Finding, Location, RuleResult
from ..models.scan import FactoryCallFact, KernelDef
from . import helpers
from .context import RuleContext, dedupe_locations, fmt_ms, warp_key
from .helpers import app_side_options, installed_owners, median, ruled_out

MECHANISM = "CS-9"
MIN_MODULES = 2


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


def _factory_qualname(k: KernelDef) -> str | None:
    return k.enclosing_function.split(".<locals>.")[0] if k.enclosing_function else None


def _factory(k: KernelDef) -> str:
    return _factory_qualname(k) or "the factory"


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
    return ctx.loc(k.file, k.module_arg_line or k.line, f'{k.name} is declared module="unique"')


# ---------------------------------------------------------------------------------------------- families


@dataclass
class _Family:
    key: str
    builds: list[Build]
    defs: list[KernelDef] = field(default_factory=list)  # scanned definitions (direct match, else a fallback)
    direct: bool = False  # defs matched the kernel key itself
    calls: list[FactoryCallFact] = field(default_factory=list)
    verdict: str = "stable"  # stable | runtime | lazy | unknown | cached
    why: str = ""  # for runtime / lazy / unknown: what was seen

    @property
    def multi(self) -> bool:
        return len(self.builds) > 1

    @property
    def compiled(self) -> list[Build]:
        return [b for b in self.builds if b.status == "compiled"]


def _matching_defs(key: str, defs: list[KernelDef]) -> list[KernelDef]:
    return [k for k in defs if warp_key(k.qualname) == key or k.name == key]


def _call_text(ctx: RuleContext, c: FactoryCallFact, scope: bool = True) -> str:
    where = (" at import" if c.scope == "module" else f" in {c.function}()") if scope else ""
    args = ", ".join(c.args)
    return f"{ctx.rel(c.file)}:{c.line} {'@' if c.decorator else ''}{c.callee}({args}){where}"


def _factory_calls(ctx: RuleContext, defs: list[KernelDef]) -> list[FactoryCallFact]:
    if ctx.scan is None:
        return []
    out: list[FactoryCallFact] = []
    seen: set[tuple[str, str]] = set()
    for k in defs:
        # the outermost function, and the one that makes the kernel when that is a closure the program calls
        # through a module-scope name (`make = _Factory().make`: the scan records those calls under its qualname)
        for fq in dict.fromkeys(q for q in (_factory_qualname(k), k.enclosing_function) if q):
            if (fq, k.file) in seen:
                continue
            seen.add((fq, k.file))
            out += ctx.scan.calls_of_factory(fq, k.file)
    return sorted(out, key=lambda c: (c.file, c.line))


def _creations(ctx: RuleContext, fam: _Family) -> tuple[list[float], list[float]]:
    """Creation times of this family's versions before and after its first load (module_creations: Warp creates a
    unique module under the Python function's name, at the wp.kernel call). Both empty when not measured."""
    starts = [b.start_ms for b in fam.builds if b.start_ms > 0]
    if not starts or not ctx.report.module_creations:
        return [], []
    first = min(starts)
    names = {k.name for k in fam.defs} | {fam.key.split("__locals__")[-1]}
    files = {k.file for k in fam.defs}
    early: list[float] = []
    late: list[float] = []
    for c in ctx.report.module_creations:
        if c.module not in names:
            continue
        if files and (c.site is None or ctx.rel(c.site.file) not in files):
            continue
        (late if c.start_ms > first else early).append(c.start_ms)
    return early, late


def _made_at_import(ctx: RuleContext, fam: _Family) -> str:
    """When the run recorded every version of this family made by a call that ran at import (a class body or module
    code calling the factory: hook_kernels.py), the sentence that says so; else ""."""
    name = fam.key.split("__locals__")[-1]
    made = [c for c in ctx.report.kernel_creations
            if warp_key(c.key) == fam.key or c.key == fam.key or c.key.rsplit(".", 1)[-1] == name]
    if len(made) < len(fam.builds) or not all(c.at_import for c in made):
        return ""
    where = sorted({f"{ctx.rel(c.caller.file)}:{c.caller.line}" for c in made if c.caller is not None})
    return (f"the run made all {len(made)} versions while their modules were imported"
            + (f" ({', '.join(where[:4])})" if where else ""))


def _judge(ctx: RuleContext, fam: _Family) -> None:
    """Stable, or why not: versions made from run-time data, created between loads, or no way to tell."""
    runtime = [c for c in fam.calls if not c.constant_args]
    if runtime and (fam.direct or fam.multi):
        c = runtime[0]
        fam.verdict = "runtime"
        fam.why = (
            f"{c.factory}() is called with run-time arguments ({', '.join(c.runtime_args)}) at {_call_text(ctx, c)}"
            + (f", and {len(runtime) - 1} more such call(s)" if len(runtime) > 1 else "")
        )
        return
    if not fam.multi:
        fam.verdict = "stable" if fam.builds[0].status == "compiled" else "cached"
        return
    if ctx.scan is None:
        fam.verdict, fam.why = "unknown", "no source scan to say whether its versions are fixed"
        return
    if not fam.calls:
        made = _made_at_import(ctx, fam)
        if made:
            fam.verdict = "stable"  # the run shows every version made while its module was imported
            fam.why = made
            return
        fam.verdict = "unknown"
        factories = sorted({_factory(k) for k in fam.defs if k.enclosing_function})
        fam.why = (
            f"no call of {', '.join(f'{f}()' for f in factories)} found in the scanned sources"
            if factories
            else "no kernel factory in the sources makes it"
        )
        return
    _early, late = _creations(ctx, fam)
    fam.verdict = "stable"
    if late:  # a gate on the program as it is: the plan's first step (create at import) is what makes it hold
        fam.why = (f"{len(late)} of its versions were created after the first of them loaded: the plan creates them "
                   "at import before they share a module")


def _collect(ctx: RuleContext) -> list[_Family]:
    defs = _unique_defs(ctx)
    fams = [_Family(key=key, builds=sorted(bs, key=lambda b: b.seq)) for key, bs in _families(ctx).items()]
    matched: set[int] = set()
    for fam in fams:
        fam.defs = _matching_defs(fam.key, defs)
        fam.direct = bool(fam.defs)
        matched |= {id(k) for k in fam.defs}
    rest = [k for k in defs if id(k) not in matched]
    rest_factories = {(_factory_qualname(k), k.file) for k in rest if k.enclosing_function}
    for fam in fams:
        if not fam.defs:
            fam.defs = rest
        # calls decide only for a direct match, or for a multi-version family when the rest is one factory
        if fam.direct or (fam.multi and len(rest_factories) == 1):
            fam.calls = _factory_calls(ctx, fam.defs)
        _judge(ctx, fam)
    return sorted(fams, key=lambda f: f.builds[0].seq)


def _left_unique_text(fams: list[_Family]) -> str:
    parts = []
    for f in fams:
        n = len(f.builds)
        versions = f"{n} version{'s' if n != 1 else ''}"
        if f.verdict == "runtime":
            parts.append(f"{f.key} ({versions}) varies at run time: {f.why} (kept unique on purpose)")
        elif f.verdict == "lazy":
            parts.append(f"{f.key} ({versions}): {f.why}")
        else:
            parts.append(f"{f.key} ({versions}) may vary at run time: {f.why} (kept unique)")
    return "; ".join(parts)


# ---------------------------------------------------------------------------------------------- the edit


def _late(ctx: RuleContext, defs: list[KernelDef], builds: list[Build]) -> list[str]:
    """The kernels created after the module they would share first loads: each would rebuild it (CS-1), so the plan
    creates them at import first."""
    targets = sorted({k.python_module for k in defs})
    shared = [b for b in ctx.report.builds if b.module in targets and b.status in ("compiled", "cached")]
    starts = [b.start_ms for b in [*shared, *builds] if b.start_ms > 0]
    if not starts:
        return []
    first = min(starts)
    names = {k.name for k in defs}
    return sorted({c.module for c in ctx.report.module_creations if c.module in names and c.start_ms > first})


def _of_families(c: KernelCreation, fams: list[_Family]) -> bool:
    """A recorded kernel creation is a version of one of these unique families (by its key)."""
    return any(warp_key(c.key) == f.key or c.key == f.key or f.key.endswith("__" + c.key) for f in fams)


def _late_text(late: list[str]) -> str:
    return (f"{', '.join(late)} {'is' if len(late) == 1 else 'are'} created after the shared module would first "
            "load, so each would rebuild it (CS-1)")


def _versions_made(fams: list[_Family]) -> dict[str, int]:
    """factory -> the distinct versions of its kernels the run built (a unique family's builds)."""
    out: dict[str, int] = {}
    for f in fams:
        for k in f.defs:
            factory = _factory_qualname(k)
            if factory is not None and f.direct:
                out[factory] = max(out.get(factory, 0), len(f.builds))
    return out


def _share_step(ctx: RuleContext, defs: list[KernelDef], target: Target, moved: list[KernelDef]) -> Step:
    """The module step: a factory's `module` default "unique" -> the target (None: the Python module), a declared
    module="unique" dropped or naming the target; `moved` definitions got theirs in the moved text already."""
    step = Step(what="module")
    value = target.decorator_value
    for k in defs:
        if k.module_options:
            return failed("module", f"{k.name} sets module_options=, which Warp allows only with module=\"unique\"")
        if k in moved:
            continue
        if k.module_from_default:
            e = default_to_shared(ctx.sources, k, value)
            why = f"the module parameter default of {_factory(k)}() is not on one line"
            step.review.append(
                f"{_factory(k)}() is public API of its callers (a plugin contract): its default changes from "
                f'"unique" to {value}, and a caller that relies on isolation must now pass module="unique"'
            )
        else:
            e = drop_unique(ctx.sources, k, value)
            why = (f"no project source of {k.file} to edit" if ctx.sources.lines(k.file) is None
                   else f"the module argument of {k.name} at {k.file}:{k.module_arg_line or k.line} is not one line")
        if e is None:
            return failed("module", f"no project source of {k.file} to edit" if ctx.sources.lines(k.file) is None
                          else why)
        if all((x.file, x.start_line) != (e.file, e.start_line) for x in step.edits):
            step.edits.append(e)
    step.done = (f"let them join {target.label} (module=\"unique\" no longer their default)" if target.named is None
                 else f"let them share the named module {target.named} ({target.why})")
    if not step.edits and moved:
        step.edits = []  # every kernel was moved with its module written in: nothing left to edit here
    return step


def _creations_of(ctx: RuleContext, fams: list[_Family]) -> Callable[[list[KernelDef]], list[KernelCreation]]:
    """The run's late creations of these families that one making function's `defs` made: by the kernel's name, else
    by the file that made it (a kernel renamed by a helper, `wp.kernel(fn, ...)` under another key), else all of
    them (the record cannot tell the makers apart; the frames it holds decide)."""
    made = [c for c in ctx.report.kernel_creations if not c.at_import and _of_families(c, fams)]

    def late(defs: list[KernelDef]) -> list[KernelCreation]:
        names = {k.name for k in defs}
        files = {k.file for k in defs}
        by_name = [c for c in made if c.key.rsplit(".", 1)[-1].split("__")[-1] in names]
        by_file = [c for c in made if ctx.rel(c.file) in files]
        return by_name or by_file or made
    return late


def _plan(ctx: RuleContext, defs: list[KernelDef], target: Target, late: list[str],
          made: Realised | None) -> Plan:
    plan = Plan()
    moved: list[KernelDef] = []
    if made is not None:
        plan.add(made.step)
        moved = [k for k in defs if made.moved(k)]
    elif late:
        plan.add(failed("create at import", _late_text(late)))
    step = _share_step(ctx, defs, target, moved)
    if step.edits or step.why_not:
        plan.add(step)
    return plan


def _edits(ctx: RuleContext, defs: list[KernelDef], builds: list[Build],
           fams: list[_Family]) -> tuple[list[Edit], str, str, Plan, Target, list[Alternative]]:
    """(edits, applicability, review, the plan, where they go, other realisations) for the stable unique kernels of
    the project's own files: where they go is decided once (module_plan.shared_target: a named module where an
    option call would otherwise reach them), then each is made at import by the first candidate that holds
    (realise.py), then the module step; a failed step leaves the finding manual with that step's precondition. The
    plan with one making function realised by its next candidate is an alternative `fix` measures beside it."""
    late = _late(ctx, defs, builds)
    target = shared_target(ctx.report, ctx.scan, defs, builds)
    nested = [k for k in defs if k.nested]
    made: Realised | None = None
    others: list[tuple[str, Realised]] = []
    if nested and (late or any(not k.module_from_default for k in nested)):
        made, others = create_before_load(ctx, nested, _factory_calls(ctx, nested), _versions_made(fams),
                                          _creations_of(ctx, fams), target.decorator_value, MAX_ALTERNATIVES)
    plan = _plan(ctx, defs, target, late, made)
    if plan.why_not:
        return [], "manual", "not proposed as an edit: " + plan.why_not, plan, target, []
    alternatives = []
    for label, alt in others:
        p = _plan(ctx, defs, target, late, alt)
        if not p.why_not and p.edits != plan.edits:
            alternatives.append(Alternative(label=label, edits=p.edits, applicability=p.applicability,  # type: ignore[arg-type]
                                            review=p.review))
    return plan.edits, plan.applicability, plan.review, plan, target, alternatives


def _argument_finding(ctx: RuleContext, arg: unique_arguments.ArgumentPlan) -> Finding:
    """The finding for unique families that vary only by captured numbers: one kernel per family, with arguments."""
    n = len(arg.builds)
    med = median([b.ms for b in arg.builds])
    saving = (n - 1) * med
    edits, fix, review = unique_arguments.edits_and_text(ctx, arg)
    locs = [ctx.loc(h.file, h.remove[0], f"{h.original} is made per call, a unique module per captured value")
            for h in arg.hoists]
    return Finding(
        mechanism=MECHANISM,
        title=f"{n} module=\"unique\" modules are versions of {len(arg.kernels)} kernel(s) that differ only in "
              "numbers they capture",
        severity=ctx.severity_for(saving), confidence="high", modules=[b.module for b in arg.builds],
        evidence=[Evidence(fact=f"{b.module} #{b.seq} ({fmt_ms(b.ms)}) captured "
                                + ", ".join(f"{k}: {t}" for k, t in (b.kernels[0].closure or {}).items()),
                           builds=[b.seq], ms=b.ms) for b in arg.builds if b.kernels],
        locations=locs, fix=fix, estimated_saving_ms=round(saving, 1),
        saving_basis=f"({n} - 1) x {fmt_ms(med)}, the median load of the {n} unique modules (one module pays the "
                     "fixed cost once); an upper bound, reference sample",
        samples=1 if ctx.samples else 0, applicability="review", edits=edits, review=review,
        caveats=["Arguments are read at each launch: a value that must stay a compile-time constant (a loop the "
                 "compiler unrolls for speed) may run slower as a run-time bound; the fix's measurement shows it."],
    )


def evaluate(ctx: RuleContext) -> RuleResult:
    fams = _collect(ctx)
    stable_fams = [f for f in fams if f.verdict == "stable"]
    left = [f for f in fams if f.verdict in ("runtime", "lazy", "unknown")]
    builds = sorted((b for f in stable_fams for b in f.compiled), key=lambda b: b.seq)
    if len(builds) < MIN_MODULES:
        scalar = unique_arguments.scalar_families(ctx, left) if ctx.sources.available else []
        arg = unique_arguments.plan_arguments(ctx, scalar) if scalar else None
        if arg is not None and not arg.why_not:
            return RuleResult(findings=[_argument_finding(ctx, arg)])
        if not fams:
            signal = 'no module="unique" modules were loaded'
        else:
            signal = (
                f"{len(fams)} unique-module famil{'y' if len(fams) == 1 else 'ies'} loaded, "
                f"{sum(1 for f in stable_fams if not f.multi)} built once"
            )
            multi_stable = [f for f in stable_fams if f.multi]
            if multi_stable:
                signal += f", {sum(len(f.compiled) for f in multi_stable)} fixed version(s) of a factory kernel"
            signal += f" ({len(builds)} stable module(s), fewer than {MIN_MODULES})"
            if left:
                signal += "; " + _left_unique_text(left)
            if arg is not None:
                signal += f"; their captured numbers are not taken as arguments: {arg.why_not}"
        return ruled_out(MECHANISM, signal)

    n = len(builds)
    med = median([b.ms for b in builds])
    saving = (n - 1) * med
    all_defs = _unique_defs(ctx)
    stable_defs: list[KernelDef] = []
    for f in stable_fams:
        for k in f.defs:
            if k not in stable_defs:
                stable_defs.append(k)
    defs = stable_defs or all_defs
    from_default = [k for k in defs if k.module_from_default]
    # the lines to change: where "unique" is written (a declaration, or a factory's default); the kernels it
    # reaches are named in the evidence, and are the locations only when no such line was found
    locations: list[Location | None] = [_def_location(ctx, k) for k in (from_default or defs)]
    if not any(locations):
        locations = [ctx.kernel_loc(k, f"{k.key}: its own module {b.module}") for b in builds for k in b.kernels]
    evidence = [
        Evidence(
            fact=f"{n} kernel modules each got a hash-named module of their own and were built exactly once: "
            + ", ".join(f"{b.module} #{b.seq} {fmt_ms(b.ms)}" for b in builds),
            builds=[b.seq for b in builds],
            ms=sum(b.ms for b in builds),
        )
    ]
    for f in stable_fams:
        if not f.multi:
            continue
        const = [c for c in f.calls if c.constant_args]
        imported = bool(const) and all(c.scope == "module" for c in const)
        calls_txt = "; ".join(_call_text(ctx, c, scope=not imported) for c in const[:4])
        calls_txt += " ..." if len(const) > 4 else ""
        factory = const[0].factory if const else _factory(f.defs[0])
        evidence.append(
            Evidence(
                fact=f"{f.key}: {len(f.builds)} versions from {factory}(), called {len(const)} time(s) "
                f"{'at import ' if imported else ''}with arguments fixed in the source ({calls_txt}): the versions "
                "are a fixed set, not built from run-time data, so they need no isolation",
                builds=[b.seq for b in f.builds],
                source="both",
            )
        )
        early, _late = _creations(ctx, f)
        if len(early) >= len(f.builds):
            evidence.append(
                Evidence(
                    fact=f"all {len(f.builds)} versions of {f.key} were created before the first of them loaded "
                    f"(build #{f.builds[0].seq}), so one shared module would hold them all at its first load",
                    builds=[b.seq for b in f.builds],
                )
            )
    if left:
        evidence.append(
            Evidence(
                fact="left unique: " + _left_unique_text(left),
                builds=[b.seq for f in left for b in f.builds],
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

    name_parts = []
    for f in stable_fams:
        if not f.compiled:
            continue
        if f.multi:
            name_parts.append(f"the {len(f.compiled)} versions of {f.key}")
        else:
            b = f.compiled[0]
            name_parts.append(b.kernels[0].key if b.kernels else b.module)
    names = ", ".join(name_parts)
    has_multi = any(f.multi for f in stable_fams)
    at_import = all(c.scope == "module" for f in stable_fams if f.multi for c in f.calls)
    together = " (one module keeps same-named versions apart by their hashes)" if has_multi else ""
    if from_default:
        k = from_default[0]
        line = _default_line(k)
        where = f"{ctx.rel(k.file)}:{line}" if line else f"passed to wp.kernel at {ctx.rel(k.file)}:{k.line}"
        fix = (
            f'Change the default of {_factory(k)}()\'s module parameter ({where}) from "unique" to None, so '
            f"{names} join their defining module {k.python_module} and build together once{together}; a caller that "
            'really needs isolation (kernels built from run-time data) can still pass module="unique" explicitly.'
        )
    elif defs:
        sites = ", ".join(f"{ctx.rel(k.file)}:{k.line}" for k in defs[:4])
        fix = (
            f'Remove module="unique" from these stable kernels ({sites}) so {names} join their Python module and '
            f"build together once{together}."
        )
    else:
        fix = (
            f'Stop giving {names} module="unique": let them join their defining module (or one named module) so they '
            f"build together once{together}."
        )
    title_text = f'{n} stable kernels each build a module="unique" module of their own'
    installed = installed_owners(ctx, [loc.file for loc in locations if loc is not None])
    upstream = None
    alternatives: list[Alternative] = []
    if installed:
        fix = app_side_options(installed) + " The upstream report with this measurement is ready for its maintainers."
        edits, applicability = [], "manual"
        review = f"the unique kernels are {installed[0]}'s: no application-side edit"
        places = [(helpers.dist_relative(loc.file), loc.line, loc.note) for loc in locations if loc is not None]
        change = 'drop module="unique" for kernels that never change, so they share their module\'s build'
        upstream = helpers.upstream_report(
            installed[0], title_text, places, sum(b.ms for b in builds),
            f"{n} unique modules cost {fmt_ms(sum(b.ms for b in builds))}", change,
            estimated=f"sharing one module would save at most about {fmt_ms(saving)}",
        )
    elif defs:
        edits, applicability, review, plan, target, alternatives = _edits(ctx, defs, builds, stable_fams)
        if target.named is not None:
            fix += (f' Where they go: the named module {target.named} (module="{target.named}"), not their Python '
                    f"module{'s' if len(target.python_modules) > 1 else ''}: {target.why}.")
        if review.startswith("not proposed"):
            fix += f" {review[0].upper()}{review[1:]}."
        elif any(s.what != "module" for s in plan.steps if s.edits):
            fix += f" The edit does it in order: {plan.summary}."
    else:
        edits, applicability, review = [], "manual", "no scanned definition carries the module argument"
    caveats = [
        'Keep module="unique" for kernels built from runtime data (plugins, user-supplied transforms, '
        "per-request specializations): there it stops them invalidating a shared module.",
        "With a CPU precompiled header each extra module costs only ~100 ms and may sit inside run-to-run "
        "noise; it costs more on CUDA and on Warp versions without the CPU header.",
    ]
    if has_multi:
        caveats.insert(
            1,
            "The factory versions share one module only while they are all created before its first load"
            + (" (here at import)" if at_import else "")
            + "; a version created later would rebuild the shared module (CS-1).",
        )
    return RuleResult(
        findings=[
            Finding(
                mechanism=MECHANISM,
                title=title_text,
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
                caveats=caveats,
                applicability=applicability,  # type: ignore[arg-type]
                edits=edits,
                review=review,
                upstream=upstream,
                alternatives=alternatives,
            )
        ]
    )
