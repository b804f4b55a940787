"""CS-1: a module rebuilt because kernels joined it after its first load.

Warp hashes a module's whole live kernel set, so a kernel registered after the module loaded (typically one created
inside a function on first use) makes the next launch regenerate and recompile every kernel in the module. The hash
diff names the added kernel directly (`kernel_added`); a kernel re-created with a new body or closure constant under
the same key (`kernel_changed`, outside module="unique" families) is the same lifecycle problem at lower confidence.

Each rebuild that an added kernel caused is one redundant build, but the rebuild is not what the fix removes: the
final build carries every kernel and remains. The estimate is the builds those rebuilds superseded (every build of
the module/device/block_dim except the one that remains, `context.superseded_by`), plus a precompiled header only
they needed. Locations are the definitions of the late kernels, at the scan's `def` line when the scan finds them.

The edit moves a nested late kernel to module scope of its file, above its outermost enclosing statement, when the
parsed source shows that is safe: its code reads nothing the function binds (no captured value), it is a direct
statement of the function, its name is free at module scope and its decorator and annotations only read names
bound above the new place. Kernels Warp's `wp.map` made (no definition of the project's) are made at import by
map calls from the run's record (fix/place/map_kernels.py, through `versions_plan`). Otherwise the finding is manual
with the reason. A late kernel an installed library
defines (a method that creates one per call) gets an upstream report: the application cannot reorder it.
"""

from __future__ import annotations

from collections import defaultdict

from ..fix.place.closure_kernels import isolated_closure
from ..fix.place.recorded_versions import late_creations, memoize_why_not, versions_plan
from ..fix.transform.hoist import Hoist, hoist, hoist_edits, moved_text, siblings, took_text
from ..fix.transform.memoize import made_at_import
from ..fix.transform.plan import Plan, Step
from ..hashdiff import unique_family
from ..models import Build, KernelInfo
from ..models.diagnosis import (
    Edit,
    Evidence,
    Finding,
    HashChange,
    Location,
    RuledOut,
    RuleResult,
    UpstreamReport,
)
from ..models.scan import KernelDef
from . import helpers
from .context import RuleContext, dedupe_locations, fmt_ms, superseded_by
from .helpers import Claim, Events, claims_of, events_by_module, first_load, sized_here

MECHANISM = "CS-1"
TITLE = "Kernels defined after their module loaded"


def _info(build: Build | None, key: str) -> KernelInfo | None:
    if build is None:
        return None
    for k in build.kernels:
        if k.key == key:
            return k
    return None


def _display(ctx: RuleContext, key: str, info: KernelInfo | None) -> tuple[str, str | None]:
    """(kernel name as written, enclosing function when it is created inside one)."""
    k = ctx.scan_kernel(info) if info is not None else None
    if k is not None:
        return k.name, k.enclosing_function if k.nested else None
    if "__locals__" in key:
        outer, _, name = key.rpartition("__locals__")
        return name, outer.rstrip("_").replace("__", ".") or None
    return key, None


def _evaluate_module(ctx: RuleContext, module: str, device: str, items: list[tuple[HashChange, list]]) -> Finding:
    first = first_load(ctx.report.builds, module, device)
    late: dict[str, tuple[KernelInfo | None, HashChange, str]] = {}
    evidence: list[Evidence] = []
    changed_only = True
    for change, causes in items:
        later = ctx.build(change.to_seq)
        names = []
        for c in causes:
            if c.kernel is None:
                continue
            if c.kind == "kernel_added":
                changed_only = False
            late.setdefault(c.kernel, (_info(later, c.kernel), change, c.kind))
            names.append(_display(ctx, c.kernel, _info(later, c.kernel))[0])
        what = "added" if any(c.kind == "kernel_added" for c in causes) else "redefined"
        evidence.append(
            Evidence(
                fact=f"build #{change.to_seq} ({change.to_hash[:7]}, {change.status}, {fmt_ms(change.cost_ms)}) "
                f"compiled all of {module} again because {', '.join(names)} {'was' if len(names) == 1 else 'were'} "
                f"{what} after build #{change.from_seq} ({change.from_hash[:7]})"
                + (f"; triggered at {change.trigger}" if change.trigger else ""),
                builds=[change.from_seq, change.to_seq],
                ms=change.cost_ms,
            )
        )
    locations = []
    nested: list[tuple[str, str]] = []
    plain: list[str] = []
    for key, (info, _change, kind) in late.items():
        name, outer = _display(ctx, key, info)
        note = f"{name} {'defined' if kind == 'kernel_added' else 're-created'}"
        note += f" inside {outer}(), after {module} first loaded" if outer else f" after {module} first loaded"
        after = first.start_ms if first is not None else None
        if info is not None and (info.file or "").startswith("<") and ctx.scan_kernel(info) is None:
            locations += ctx.made_at(info, module, after, note)  # every call that made one late (wp.map's)
        else:
            locations.append(ctx.kernel_loc(info, note, module, after) if info is not None else None)
        (nested.append((name, outer)) if outer else plain.append(name))
    if first is not None:
        trig = ctx.trigger_loc(first, f"first load of {module} (build #{first.seq})")
        if trig is not None:
            evidence.insert(
                0,
                Evidence(
                    fact=f"{module} first loaded at {trig.file}:{trig.line} (build #{first.seq}, "
                    f"{len(first.kernels)} kernel(s), {fmt_ms(first.ms)})",
                    builds=[first.seq],
                    ms=first.ms,
                ),
            )
    mine, elsewhere = sized_here(ctx, [ch for ch, _ in items], MECHANISM)
    sized = superseded_by(ctx, mine)
    saving = sized.ms
    if sized.builds:
        evidence.append(sized.removal_evidence(module, "every kernel defined before the first launch"))
    located = [loc for loc in locations if loc is not None]
    first_at = ""
    if first is not None and first.trigger is not None:
        at = helpers.own_frame(ctx, first.trigger)
        first_at = f" (first load: {helpers.place(ctx, at.file, at.line)})"
    deps = {key: helpers.dependency_of(ctx, info.file if info else None) for key, (info, _c, _k) in late.items()}
    theirs = [key for key, d in deps.items() if d is not None]
    if theirs and len(theirs) == len(late):
        fix, upstream, review = _upstream(ctx, module, late, deps, saving)
        edits: list[Edit] = []
        applicability = "manual"
        for ch, _causes in items:  # where the application's own code led into each rebuild: where the cost lands
            later = ctx.build(ch.to_seq)
            if later is not None and later.trigger is not None:
                at = helpers.own_frame(ctx, later.trigger)
                if helpers.dependency_of(ctx, at.file) is None:
                    locations.append(ctx.loc(at.file, at.line, f"this call into {deps[theirs[0]]} rebuilt "
                                                               f"{module} (build #{later.seq})"))
    else:
        fix, edits, applicability, review = _own_fix(ctx, module, late, located, nested, plain, first_at)
        upstream = None
    n = len(items)
    return Finding(
        mechanism=MECHANISM,
        title=f"{module} rebuilt {n} time{'s' if n > 1 else ''} because kernels joined it after it loaded",
        severity=ctx.severity_for(saving),
        confidence="medium" if changed_only or all(ch.status != "compiled" for ch, _ in items) else "high",
        modules=[module],
        evidence=evidence,
        locations=dedupe_locations(locations),
        fix=fix,
        estimated_saving_ms=round(saving, 1),
        saving_basis=f"{sized.basis(f'the {n} rebuild(s) caused by late kernels')}{elsewhere}, reference sample",
        applicability=applicability,  # type: ignore[arg-type]
        edits=edits,
        review=review,
        upstream=upstream,
        samples=1 if ctx.samples else 0,
        caveats=[
            "Kernels created from runtime data (plugins, user expressions, per-shape specializations) cannot be "
            'defined up front: give them their own module (a named module or module="unique") so they stop '
            "invalidating the shared one.",
            "Keep the kernel names when moving definitions: logs, cache directories and tools show them.",
        ]
        + (
            [
                "Some rebuilds come from a kernel re-created with a new body or captured constant under the same name, "
                "not a new kernel: check whether that variation is needed."
            ]
            if changed_only
            else []
        ),
    )


# ---------------------------------------------------------------------------------------------- the edit


def _own_fix(
    ctx: RuleContext,
    module: str,
    late: dict[str, tuple[KernelInfo | None, HashChange, str]],
    located: list[Location],
    nested: list[tuple[str, str]],
    plain: list[str],
    first_at: str,
) -> tuple[str, list[Edit], str, str]:
    """(fix prose, edits, applicability, review) for late kernels of the project's own files."""
    located = [loc for loc in located if not loc.file.startswith("/")]  # the project's own places only
    where_txt = ", ".join(f"{loc.file}:{loc.line}" for loc in located)
    files = sorted({loc.file for loc in located})
    home = files[0] if len(files) == 1 else f"the file that holds {module}"
    # the by-hand advice for moving kernels as they are; an edit that changes their signatures says its own instead
    define = []
    if nested:
        lst = ", ".join(f"{n} (now created inside {o}())" for n, o in nested)
        define.append(
            f"Define {lst} at module scope of {home}, with the same names and bodies, and look "
            f"them up instead of creating them on demand, so {module} has its final kernel set before its first "
            f"launch{first_at}."
        )
    imported = (
        [f"Make sure {', '.join(plain)} {'is' if len(plain) == 1 else 'are'} defined (imported) before the first "
         f"launch of anything in {module}{first_at}."] if plain else []
    )
    at_run_time = (
        "If they must be created at run time, create every expected kernel of that module before its first launch."
    )
    tail = [f"Definitions: {where_txt}."] if where_txt else []
    parts = [*define, *imported, at_run_time, *tail]
    plans: list[Hoist] = []
    not_moved: list[str] = []
    isolated: list[Edit] = []  # module="unique" for closures whose versions differ per call
    isolated_names: list[str] = []
    not_as_params: list[str] = []  # closures whose captured values could not become arguments, and why
    taken: dict[str, set[str]] = defaultdict(set)  # module-scope names the moves of this plan use, per file
    made: list[Step] = []  # factories whose versions are all made at import (closures that vary among fixed values)
    moved_defs: list[KernelDef] = []
    for key, (info, _change, _kind) in late.items():
        kdef = ctx.scan_kernel(info) if info is not None else None
        if kdef is None:
            # no definition to cache: whether a cache could still make it, read from the frames that made it
            why = memoize_why_not(ctx, late_creations(ctx, module, {key}))
            not_moved.append(f"{key}: its definition was not found in the scanned sources; memoize: "
                             + (why or "only from the run's record, below"))
        elif not kdef.nested:
            not_moved.append(
                f"{kdef.name} is defined at module scope of {kdef.file}, which is imported after {module} first "
                "loaded: the import order is the fix, and it is not changed mechanically"
            )
        else:
            h = hoist(ctx, kdef, taken=set(taken[kdef.file]))
            memo_why = rec_why = ""
            if h.captures:
                # first choice: values every call gives the same, written into one module-scope kernel
                hf = hoist(ctx, kdef, info, taken=set(taken[kdef.file]), write_fixed=True)
                if not hf.why_not:
                    taken[kdef.file].add(hf.name)
                    plans.append(hf)
                    moved_defs.append(kdef)
                    continue
                # then: the captured numbers as arguments (one kernel, one build)
                hp = hoist(ctx, kdef, info, as_params=True, taken=taken[kdef.file])
                if not hp.why_not:
                    plans.append(hp)
                    moved_defs.append(kdef)
                    continue
                not_as_params.append(f"{kdef.name}: {hp.why_not}")
                # then: its versions, fixed in the source, all made at import (one module build for all)
                memo = made_at_import(ctx, [kdef], ctx.scan.factory_calls if ctx.scan is not None else [])
                if memo.ok:
                    made.append(memo)
                    continue
                memo_why = memo.why_not
                not_as_params.append(f"{kdef.name}'s versions at import: {memo.why_not}")
                # then: the calls that made its versions in this run (an object built on first use, a registry),
                # repeated at import; a module of its own per version is the last resort
                recorded = versions_plan(ctx, module, {key})
                if recorded is not None and recorded.ok:
                    made.append(recorded)
                    continue
                if recorded is not None:
                    rec_why = f"; from the run's record: {recorded.why_not}"
                    not_as_params.append(f"{kdef.name}'s versions from the run's record: {recorded.why_not}")
            own = isolated_closure(ctx, kdef) if h.captures else None
            if own is not None:
                isolated.append(own)
                isolated_names.append(kdef.name)
            elif h.why_not:
                if not h.captures:  # the next candidate: its factory cached and called at import
                    memo = made_at_import(ctx, [kdef], ctx.scan.factory_calls if ctx.scan is not None else [])
                    if memo.ok:
                        made.append(memo)
                        continue
                    memo_why = memo.why_not
                not_moved.append(f"{kdef.name}: {h.why_not}; memoize: {memo_why}{rec_why}")
            else:
                taken[kdef.file].add(h.name)
                plans.append(h)
                moved_defs.append(kdef)
    # the other kernels of the same functions (one per branch) move too: the module then has its final kernel set
    # whichever branch runs first, not only in the order this run took
    lines_moved = {(k.file, k.line) for k in moved_defs}
    for kdef in list(moved_defs):
        for sib in siblings(ctx, kdef):
            if (sib.file, sib.line) in lines_moved:
                continue
            h = hoist(ctx, sib, taken=taken[sib.file])
            if not h.why_not:
                plans.append(h)
                lines_moved.add((sib.file, sib.line))
    if isolated and not plans and not not_moved:
        names = ", ".join(isolated_names)
        parts.append(
            f"{names} {'reads' if len(isolated_names) == 1 else 'read'} values captured per call, so each call makes "
            f'a different kernel: give {"it" if len(isolated_names) == 1 else "them"} a module of its own '
            f'(module="unique" on the decorator). Each version then builds once in a small module of its own and '
            f"{module} builds once; a module-scope definition would need those values as kernel arguments."
        )
        review = (
            f"each {names} version now builds in a module of its own the first time it launches (one small build "
            f"per version instead of a rebuild of {module}); code that names {module} (wp.get_module, "
            "set_module_options, force_load) no longer reaches it"
        )
        if not_as_params:
            review += "; not taken as kernel arguments because " + "; ".join(not_as_params)
        return " ".join(parts), isolated, "review", review
    not_moved += [f"{n}: reads values captured per call" for n in isolated_names]
    if made and not plans and not isolated and not not_moved:
        plan = Plan(steps=list(made))
        parts.append(f"The edit does it in order: {plan.summary}, so {module} has every version before it loads.")
        return " ".join(parts), plan.edits, plan.applicability, plan.review
    if made:
        not_moved += [f"{s.done} (left out: other kernels of {module} are not fixed the same way)" for s in made]
    if not_moved and not plans and not isolated and not made:
        # what the scan cannot place (a renamed kernel, one built by a helper): the versions the run made late,
        # made at import by the function whose call made them
        step = versions_plan(ctx, module, set(late))
        if step is not None and step.ok:
            parts.append(f"The edit does it: {step.done}, so {module} has every version before it loads.")
            return " ".join(parts), step.edits, "review", "; ".join(step.review)
        if step is not None:
            not_moved.append(f"the versions the run made, at import: {step.why_not}")
    edits = hoist_edits(ctx, plans) if plans else []
    if edits and len(edits) < len(plans) + len({(h.file, h.insert_at) for h in plans}):
        edits, not_moved = [], [*not_moved, "the moved lines could not be read back from the project"]
    with_args = [h for h in plans if h.params is not None]
    if edits and with_args:
        edits += [e for h in with_args for e in h.params.edits]  # type: ignore[union-attr]
        took = "; ".join(took_text(h) for h in with_args)
        moved = (
            f"The edit moves {', '.join(h.name for h in plans)} to module scope, with the values each captured per "
            f"call as kernel arguments ({took}), and passes them at every launch, so {module} has one definition and "
            "builds once."
        )
        parts = [moved, *imported, *tail]  # the signatures grow: "same names and bodies" no longer holds
        review = (
            f"{took}: the values are now read at each launch instead of when the factory made the kernel, and reach "
            "the kernel as arguments instead of compiled-in constants"
        )
        if not_moved:
            review += "; not moved: " + "; ".join(not_moved) + f", so {module} may still rebuild"
        return " ".join(parts), edits, "review", review
    changed = "; ".join(t for h in plans if (t := moved_text(h)))
    if edits and not not_moved:
        parts.append(
            "The edit moves " + ", ".join(h.name for h in plans) + " to module scope (same bodies; they read nothing "
            "their function binds) and leaves the functions returning the module-scope kernel."
        )
        if changed:
            return " ".join(parts), edits, "review", changed
        return " ".join(parts), edits, "automatic", ""
    if edits:
        moved = ", ".join(h.name for h in plans)
        return (
            " ".join(parts),
            edits,
            "review",
            f"the edit moves {moved} only; not moved: " + "; ".join(not_moved) + f", so {module} may still rebuild",
        )
    return " ".join(parts), [], "manual", "; ".join(not_moved)


def _upstream(
    ctx: RuleContext,
    module: str,
    late: dict[str, tuple[KernelInfo | None, HashChange, str]],
    deps: dict[str, str | None],
    saving: float,
) -> tuple[str, UpstreamReport, str]:
    """(fix prose, the report for the library's maintainers, review) for late kernels a dependency defines."""
    dist = next(d for d in deps.values() if d)
    places: list[tuple[str, int, str]] = []
    names = []
    for key, (info, _change, _kind) in late.items():
        name, outer = _display(ctx, key, info)
        names.append(name)
        if info is not None and info.file and info.line:
            note = f"{name} is created inside {outer}() each time it runs" if outer else f"{name} joins {module} late"
            places.append((helpers.dist_relative(info.file), info.line, note))
    kernels = ", ".join(names)
    change = (
        f"define {kernels} once at module scope (or create every variant before the first launch of anything in "
        f"{module}), so {module} is not rebuilt when a later call creates {'it' if len(names) == 1 else 'them'}"
    )
    report = helpers.upstream_report(
        dist,
        f"{module} is rebuilt because kernels join it after its first load",
        places,
        saving,
        f"{len(late)} kernel(s) ({kernels}) joined {module} after it loaded; the rebuild(s) they caused cost "
        f"{fmt_ms(saving)} in one cold run",
        change,
    )
    fix = (
        f"{kernels} {'is' if len(names) == 1 else 'are'} created by the installed {dist} after {module} first "
        f"loaded; the fix is in {dist}'s code, which this project does not own, so there is no edit here. "
        + helpers.app_side_options([dist])
        + " The upstream report with this measurement is ready to send to its maintainers."
    )
    review = f"the kernels are created inside {dist}: no application-side change reorders them"
    return fix, report, review


PRIORITY = 3  # a rebuild that also added a kernel is sized here: the kernel set is what the module's hash covers


def _events(ctx: RuleContext) -> Events:
    """Rebuilds a kernel added or re-created after the first load explains, per module and device; a unique
    family's members differ by design (CS-9 territory)."""

    def not_unique(ch: HashChange) -> bool:
        later = ctx.build(ch.to_seq)
        return later is None or unique_family(later) is None

    return events_by_module(ctx, ("kernel_added", "kernel_changed"), keep=not_unique)


def claims(ctx: RuleContext) -> list[Claim]:
    return claims_of(_events(ctx), MECHANISM, PRIORITY)


def evaluate(ctx: RuleContext) -> RuleResult:
    findings = [_evaluate_module(ctx, m, d, items) for (m, d), items in _events(ctx).items()]
    if findings:
        return RuleResult(findings=findings)
    families = {b.module for b in ctx.loads}
    return RuleResult(
        ruled_out=[
            RuledOut(
                mechanism=MECHANISM,
                signal=f"no module was rebuilt because a kernel joined it after it loaded "
                f"({len(families)} module(s) loaded, no kernel_added/kernel_changed in the hash diffs)",
            )
        ]
    )
