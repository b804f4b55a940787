"""WC-1: kernel objects made again at every call, judged on a per-call clock (this project's own mechanism).

A factory or a method that runs `@wp.kernel` at every step makes a new Kernel object each time, even when nothing
differs: Warp parses the function's source, builds its adjoint, hashes it and looks its module up again. With
module="unique" the module is found already loaded, so nothing recompiles and the cold-compile rules see nothing;
the cost is paid at every call, for the whole run (mujoco_warp 3.8.0: 304 kernel objects in 19 steps).

The evidence is the hook's record of every kernel creation after the first launch (probe/per_call.py): the places
that made kernels again and again, each with its count, its line and the function that calls it; the run cut into
passes at the anchor place's creations (one call of the loop that re-creates them); per pass, the time
Kernel.__init__ took for every kernel made in it. The finding fires when that construction time per pass is above
the pass's own noise band and at least MIN_SHARE of the pass: relative to the run, never a fixed number of ms.

The estimate is on the per-call clock `fix` proves it on (`steady`: the run after its last module load): the
construction time of the passes measured. The edit caches a module-level factory whose arguments are fixed per call
site (probe/fix/transform/cache_factory.py); else, when the factory's argument is a function a project maker
defines anew at each call, caches that maker so the factory's own cache or memo hits (cache_maker.py); else
splits a function that makes its kernel and launches it into a cached maker keyed on the values the kernel's slice
reads, and the launch (probe/fix/transform/split.py); else moves
a kernel that reads nothing of its function to module scope (create once, probe/fix/transform/hoist.py); otherwise
the finding is manual with each reason. A place an installed
library owns gets an upstream report: the application cannot cache the library's factory.
"""

from __future__ import annotations

from ..fix.place.map_kernels import made_by_map
from ..fix.place.map_launch import STEP, map_launch
from ..fix.transform.cache_factory import cache_factory
from ..fix.transform.cache_maker import cache_maker
from ..fix.transform.hoist import hoist, hoist_edits
from ..fix.transform.plan import Plan, Step
from ..fix.transform.split import split_maker
from ..models import KernelInfo
from ..models.diagnosis import Evidence, Finding, Location, RuleResult
from ..per_call import MIN_MADE, PerCall, Place, per_call
from . import helpers
from .context import RuleContext, dedupe_locations, fmt_ms
from .helpers import ruled_out

MECHANISM = "WC-1"
MIN_SHARE = 0.05  # construction must be this share of a pass at least (and above the pass's noise band)
HIGH, MEDIUM = 0.25, 0.10  # share of a pass for high / medium severity


def _name(p: Place) -> str:
    return p.keys[0].split("__locals__")[-1] if p.keys else "a kernel"


def _caller_text(ctx: RuleContext, p: Place) -> str:
    callers = p.callers
    if not callers:
        return ""
    file, line, function = callers[0]
    return f", called from {function}() at {helpers.place(ctx, file, line)}"


def _location(ctx: RuleContext, p: Place) -> Location:
    if p.via and p.callers:  # the app's line that called the Warp function: the line inside Warp is upstream's
        file, line, function = p.callers[0]
        note = (f"{function}() calls Warp's {p.function}(), which makes {_name(p)} again at every call: "
                f"{len(p.made)} kernel objects after the first launch (the line inside Warp is in the upstream "
                "report)")
        return ctx.loc(file, line, note)
    note = (f"{p.function}() makes {_name(p)} again at every call: {len(p.made)} kernel objects after the first "
            f"launch ({p.again} with arguments an earlier call had){_caller_text(ctx, p)}")
    return ctx.loc(p.file, p.line, note)


def _evidence(ctx: RuleContext, pc: PerCall) -> list[Evidence]:
    out = [
        Evidence(
            fact=f"{helpers.place(ctx, p.file, p.line)} ({p.function}) made {len(p.made)} kernel objects "
            f"({', '.join(p.keys[:3])}) after the run's first launch{_caller_text(ctx, p)}; constructing them "
            f"took {fmt_ms(p.init_ms)}",
            ms=p.init_ms,
        )
        for p in pc.places
    ]
    a = pc.anchor
    if a is not None and pc.pass_ms is not None:
        made = fmt_ms(pc.made_ms) if pc.made_ms is not None else "not recorded"
        out.append(
            Evidence(
                fact=f"per-call clock: a pass (from one kernel made at {helpers.place(ctx, a.file, a.line)} to the "
                f"next) took {fmt_ms(pc.pass_ms)} (median of {pc.passes}, band ±{fmt_ms(pc.band_ms or 0.0)}); "
                f"constructing kernels took {made} of it"
                + (f" ({100 * pc.share:.0f}% of the passes' time)" if pc.share is not None else "")
                + (f"; {pc.building} pass(es) that built or loaded a module left out" if pc.building else ""),
                ms=pc.made_ms,
            )
        )
    return out


def _hoist_step(ctx: RuleContext, p: Place) -> Step:
    """Create once: the kernel moved to module scope when it reads nothing its function binds."""
    c = p.made[0]
    kdef = ctx.scan_kernel(KernelInfo(key=c.key, file=c.file, line=c.line))
    if kdef is None:
        why = f"{_name(p)}'s definition was not found in the scanned sources"
        return Step(what="move to module scope", why_not=why)
    if not kdef.nested:
        return Step(what="move to module scope", why_not=f"{kdef.name} is at module scope already")
    h = hoist(ctx, kdef)
    if h.why_not or h.captures:
        why = h.why_not or f"{kdef.name} reads values {p.function}() binds, so each call's kernel may differ"
        return Step(what="move to module scope", why_not=why)
    edits = hoist_edits(ctx, [h])
    if not edits:
        return Step(what="move to module scope", why_not="the moved lines could not be read back from the project")
    return Step(what="move to module scope", edits=edits, done=f"define {h.name} once at module scope")


def _own_fix(ctx: RuleContext, places: list[Place]) -> tuple[str, list, str, str]:
    """(fix prose, edits, applicability, review) for re-creating places in the project's own files."""
    steps: list[Step] = []
    why_not: list[str] = []
    split_done: set[tuple[str, str]] = set()
    for p in places:
        cached = cache_factory(ctx, p.file, p.function, p.made)
        if cached.ok:
            steps.append(cached)
            continue
        maker = cache_maker(ctx, p.file, p.function, p.made)
        if maker.ok:
            steps.append(maker)
            continue
        if (p.file, p.function) in split_done:
            continue
        # every kernel the function makes again goes into one maker: they share what makes them
        made = [c for q in places if (q.file, q.function) == (p.file, p.function) for c in q.made]
        split = split_maker(ctx, p.file, p.function, made)
        if split.ok:
            steps.append(split)
            split_done.add((p.file, p.function))
            continue
        moved = _hoist_step(ctx, p)
        if moved.ok:
            steps.append(moved)
            continue
        why_not.append(f"{p.function}(): {cached.why_not}; cache the maker: {maker.why_not}; split: {split.why_not}; "
                       f"{moved.why_not}")
    names = ", ".join(f"{p.function}()" for p in places)
    prose = (f"{names} make{'s' if len(places) == 1 else ''} the same kernels again at every call. Make each kernel "
             "once: cache the factory (functools.lru_cache on a function whose arguments are fixed per call site), "
             "or the maker of an argument it gets anew at every call (a wp.func a function defines per call), "
             "split a function that makes its kernel and launches it into a cached maker and the launch, or define "
             "the kernel at module scope, and look it up at every call.")
    if not steps:
        return prose, [], "manual", "; ".join(why_not)
    plan = Plan(steps=steps)
    edits = plan.edits
    if not edits:
        return prose, [], "manual", plan.why_not
    prose += " The edit does it: " + "; ".join(s.done for s in steps) + "."
    review = plan.review
    if why_not:
        review = "; ".join(x for x in (review, "not changed: " + "; ".join(why_not)) if x)
    return prose, edits, "review", review


def _upstream(ctx: RuleContext, pc: PerCall, dist: str, saving: float) -> tuple[str, object]:
    places = [(helpers.dist_relative(p.file), p.line,
               f"{p.function}() makes {_name(p)} again at every call ({len(p.made)} times in this run)")
              for p in pc.places]
    names = ", ".join(f"{p.function}()" for p in pc.places[:4]) + (" ..." if len(pc.places) > 4 else "")
    change = (f"make these kernels once: cache the factories ({names}) on their arguments (functools.cache, or a "
              "dict keyed on them) or define the kernels at module scope, so a step reuses the Kernel objects")
    measured = (f"{pc.made} kernel objects were made again after the first launch at {len(pc.places)} place(s); a "
                f"step took {fmt_ms(pc.pass_ms or 0.0)}, {fmt_ms(pc.made_ms or 0.0)} of it constructing kernels")
    report = helpers.upstream_report(dist, f"Kernels are made again at every step in {dist}", places, saving,
                                     measured, change)
    fix = (f"The kernels are made inside the installed {dist}, which this project does not own, so there is no edit "
           f"here and a cache cannot be put on its factories from outside. From the application: use a release of "
           f"{dist} that makes them once if there is one; do more work per call (more worlds or items per step) so "
           "the per-call cost is spread thinner; and send the upstream report below to its maintainers.")
    return fix, report


def evaluate(ctx: RuleContext) -> RuleResult:
    pc = per_call(ctx.report)
    if pc.first_launch_ms is None:
        why = ("no launch was recorded" if not ctx.report.launches
               else "the record gives no launch times (an older hook)")
        return ruled_out(MECHANISM, f"{why}, so no call after the first launch could be timed")
    if not pc.places:
        return ruled_out(MECHANISM, f"no place made kernel objects {MIN_MADE} or more times after the first launch")
    if pc.passes < 2 or pc.pass_ms is None:
        built = f" ({pc.building} more built or loaded a module: first calls)" if pc.building else ""
        return ruled_out(MECHANISM, f"{pc.made} kernel objects were made again, but in fewer than 2 passes of the "
                                    f"place that makes them least{built}: too few to time a call")
    if pc.made_ms is None:
        return ruled_out(MECHANISM, f"{pc.made} kernel objects were made again, but the hook recorded no "
                                    "construction times (an older hook): the per-call cost cannot be judged")
    share = pc.share or 0.0
    small = share < MIN_SHARE
    if small or pc.made_ms <= (pc.band_ms or 0.0):
        why = (f"under {100 * MIN_SHARE:.0f}% of the passes' time" if small
               else "within the noise band of the median pass")
        return ruled_out(
            MECHANISM,
            f"{pc.made} kernel objects were made again after the first launch, but constructing them took "
            f"{fmt_ms(pc.made_ms)} of a {fmt_ms(pc.pass_ms)} pass ({100 * share:.1f}%, "
            f"band ±{fmt_ms(pc.band_ms or 0)}): {why}",
        )
    saving = round(sum(pc.made_per_pass), 1)
    deps = {p.file: helpers.dependency_of(ctx, p.file) for p in pc.places}
    theirs = [d for d in deps.values() if d is not None]
    upstream = None
    if theirs and len(theirs) == len(deps):
        fix, upstream = _upstream(ctx, pc, theirs[0], saving)
        edits: list = []
        applicability, review = "manual", f"the kernels are made inside {theirs[0]}: the application cannot cache them"
        mapped = [p for p in pc.places if p.via and any(made_by_map(c) for c in p.made)]
        steps = [map_launch(ctx, p.made) for p in mapped]
        if steps and all(s.ok for s in steps):
            plan = Plan(steps=steps)
            edits, applicability, review = plan.edits, "review", plan.review
            fix += (" The application's own lever, which the edit writes: " + "; ".join(s.done for s in steps)
                    + " (what the map does, written once).")
        elif steps:
            review += "; " + "; ".join(f"{STEP}: {s.why_not}" for s in steps if not s.ok)
    else:
        mine = [p for p in pc.places if deps[p.file] is None]
        fix, edits, applicability, review = _own_fix(ctx, mine)
    places = len(pc.places)
    return RuleResult(findings=[Finding(
        mechanism=MECHANISM,
        title=f"{pc.made} kernel objects made again at every call ({places} place{'s' if places > 1 else ''}): "
              f"{fmt_ms(pc.made_ms)} of every {fmt_ms(pc.pass_ms)} pass (medians; {100 * share:.0f}% of the "
              "passes' time, summed)",
        severity="high" if share >= HIGH else "medium" if share >= MEDIUM else "low",
        confidence="high" if pc.passes >= 4 else "medium",
        modules=sorted({c.module for p in pc.places for c in p.made if c.module}),
        evidence=_evidence(ctx, pc),
        locations=dedupe_locations([_location(ctx, p) for p in pc.places]),
        fix=fix,
        estimated_saving_ms=saving,
        saving_basis=f"construction time of the kernels made again in the {pc.passes} passes measured, reference "
                     "sample (the per-call clock: run after last load)",
        saving_clock="steady",
        applicability=applicability,  # type: ignore[arg-type]
        edits=edits,
        review=review,
        upstream=upstream,  # type: ignore[arg-type]
        samples=1 if ctx.samples else 0,
        caveats=[
            "A kernel whose body truly differs per call (a user formula, a per-request specialisation) must be made "
            "per call; cache it on the values that make it differ, so a repeat call reuses it.",
            "The per-pass figure is the time between creations at the anchor place: the loop's whole iteration, the "
            "app's own work included.",
        ],
    )])
