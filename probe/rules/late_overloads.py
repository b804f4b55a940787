"""CS-6: a generic kernel's new type instance arrived after its module loaded.

Launching a generic kernel with argument types it has not seen instantiates an overload; the overload joins the
module's hashed kernel set, so the module builds again with every kernel in it. The hash diff names the instance
(`overload_added`). One finding per cause: the generic kernels whose instances arrived together in one rebuild
are one cause (listed together), so no rebuild is counted twice; kernels whose instances arrive in separate
rebuilds stay separate findings.

Two ways the instance arrives late, with different fixes:

- A `wp.overload` registration that runs after the first load: the scan finds the call inside a function, and the
  function's call site runs after the first load (it follows, in a function on the first load's call stack, the
  line that loaded the module; directly or through up to three calls). The fix is the order: call the function
  before the first launch, or at import. Pointed at: the call site, the registrations, the first load.
- A lazy instance from a launch with new types (no registration): register the routine instances with
  `wp.overload` at module scope before the first launch; the types are read from the measured launches of that
  kernel (one distinct argument-type list per instance), so the suggested code is the project's own.

Saving: the builds the rebuilds superseded (`context.superseded_by`; the final build carries every instance and
remains), plus a precompiled header only they needed. A rebuild that also added a plain kernel is sized by CS-1.

Edits: for the project's module-scope generic kernel, the registrations go right after its definition (automatic).
For an installed library's kernel the application-side lever is `wp.overload(<lib.module>.<kernel>, [...])` at the
entry point, after its imports and settings and before the code that first loads the module (the measured stack
must show that); a kernel no module-scope name reaches (created inside a function) gets an upstream report.
"""

from __future__ import annotations

import functools
from collections import defaultdict
from dataclasses import dataclass

from ..fix.place.overload_edits import (
    RANK,
    Plan,
    dep_plan,
    load_frames,
    overload_upstream_report,
    own_plan,
    signature_matches,
    type_suffix,
    wp_type,
)
from ..fix.place.recorded_versions import versions_plan
from ..fix.place.where_made import register_where_made
from ..fix.transform.recorded_def import created_at
from ..models import Build, KernelInfo, Site
from ..models.diagnosis import (
    Alternative,
    Cause,
    Edit,
    Evidence,
    Finding,
    HashChange,
    Location,
    RuledOut,
    RuleResult,
)
from ..models.scan import KernelDef, OverloadFact
from . import helpers
from .context import (
    CallSite,
    RuleContext,
    call_sites,
    dedupe_locations,
    superseded_by,
)

MECHANISM = "CS-6"

def _dtype_lists(ctx: RuleContext, kernel: str, module: str) -> list[list[str]]:
    """Distinct argument-type lists the kernel was launched with, in first-launch order."""
    seen: list[list[str]] = []
    for la in ctx.report.launches:
        if la.kernel == kernel and la.module == module and la.dtypes and la.dtypes not in seen:
            seen.append(la.dtypes)
    return seen


def _types_for(sigs: list[str], lists: list[list[str]]) -> dict[str, list[str] | None]:
    """Signature -> launch dtypes: by type-code match, else by order of first appearance."""
    out: dict[str, list[str] | None] = {}
    free = list(lists)
    for sig in sigs:
        hit = next((d for d in free if signature_matches(sig, d)), None)
        if hit is not None:
            free.remove(hit)
        out[sig] = hit
    for sig in sigs:
        if out[sig] is None and free:
            out[sig] = free.pop(0)
    return out


def _instances(build: Build | None, parent: str) -> list[KernelInfo]:
    if build is None:
        return []
    return [k for k in build.kernels if k.generic_parent == parent]


def _divergence(first: Build | None, later: Build) -> Site | None:
    """Where the later load's call path leaves the first load's: the caller that brought the new types in.

    Both loads often go through one shared helper line; the first differing outer frame is the code to look at.
    """
    if first is None or first.trigger is None or later.trigger is None:
        return None
    a, b = first.trigger.stack, later.trigger.stack
    for i, entry in enumerate(b):
        if i >= len(a) or (a[i].file, a[i].line) != (entry.file, entry.line):
            return entry if i > 0 else None
    return None


# ---------------------------------------------------------------------------------------------- late registrations


@dataclass
class _LateRegistration:
    """`wp.overload` calls inside one function whose call runs after the module's first load."""

    function: str  # qualname of the function holding the registrations
    file: str
    regs: list[OverloadFact]
    chain: list[CallSite]  # calls from that function outward; the last one runs after the first load ([] = direct)
    frame: Site | None  # the frame of the first load's stack it follows (None: the order is not established)

    @property
    def confirmed(self) -> bool:
        return self.frame is not None


def _follows(ctx: RuleContext, file: str, function: str, line: int, frames: list[Site], after: bool) -> Site | None:
    """The frame of the first load's stack that a line in `function` runs after (or, `after=False`, before): same
    file and function, a later (earlier) line."""
    name = function.rsplit(".", 1)[-1]
    for fr in frames:
        if ctx.rel(fr.file) == file and fr.function == name and (line > fr.line if after else line < fr.line):
            return fr
    return None


def _path(
    ctx: RuleContext, file: str, function: str, line: int, frames: list[Site], after: bool = True, depth: int = 0
) -> tuple[list[CallSite], Site] | None:
    """How a line of `function` comes to run after (before) the first load: ([calls outward], the frame it follows
    or precedes), directly or through up to three calls."""
    fr = _follows(ctx, file, function, line, frames, after)
    if fr is not None:
        return [], fr
    if function == "<module>" or depth >= 3:
        return None
    for call in call_sites(ctx, function.rsplit(".", 1)[-1]):
        if call.function == function:
            continue  # recursion
        found = _path(ctx, call.file, call.function, call.line, frames, after, depth + 1)
        if found is not None:
            return [call, *found[0]], found[1]
    return None


def _refers(ctx: RuleContext, reg: OverloadFact, kdef: KernelDef | None) -> bool:
    """The registration names this kernel: same file, or a file that imports the kernel's module."""
    if kdef is None or ctx.scan is None:
        return True
    if reg.file == kdef.file:
        return True
    return (
        any(i.project_module == kdef.python_module or kdef.name in i.names for i in ctx.scan.imports_in(reg.file))
        or len(ctx.scan.kernel_by_name(kdef.name)) == 1
    )


def _late_registrations(
    ctx: RuleContext, parents: list[tuple[str, str, KernelDef | None]], first: Build | None
) -> list[_LateRegistration]:
    """Function-scope `wp.overload` calls for these generic kernels, grouped by function, confirmed ones first."""
    if ctx.scan is None:
        return []
    by_fn: dict[tuple[str, str], list[OverloadFact]] = defaultdict(list)
    for _parent, name, kdef in parents:
        for reg in ctx.scan.overloads_of(name):
            if reg.scope == "function" and _refers(ctx, reg, kdef):
                by_fn[(reg.file, reg.function)].append(reg)
    frames = load_frames(first)
    out = []
    for (file, function), regs in by_fn.items():
        regs = sorted(regs, key=lambda r: r.line)
        found = _path(ctx, file, function, regs[0].line, frames) if frames else None
        chain, frame = found if found is not None else ([], None)
        early = (
            found is None and bool(frames) and _path(ctx, file, function, regs[0].line, frames, after=False) is not None
        )
        if early:
            continue  # it ran before the first load: these instances were there; the late ones came from launches
        out.append(_LateRegistration(function=function, file=file, regs=regs, chain=chain, frame=frame))
    return sorted(out, key=lambda x: (not x.confirmed, x.file, x.regs[0].line))


def _in(function: str) -> str:
    return "at module scope" if function == "<module>" else f"in {function}()"


def _late_text(ctx: RuleContext, late: _LateRegistration, module: str, first: Build | None) -> tuple[str, str]:
    """(what happened, the fix) for registrations that run after the first load."""
    fn = late.function.rsplit(".", 1)[-1]
    regs = ", ".join(f"{ctx.rel(r.file)}:{r.line}" for r in late.regs)
    kernels = " and ".join(dict.fromkeys(r.kernel for r in late.regs))
    frame = late.frame
    assert frame is not None
    at = f"{ctx.rel(frame.file)}:{frame.line}"
    trig = first.trigger if first is not None else None
    what_ran = trig.api if trig is not None and trig.api and (trig.file, trig.line) == (frame.file, frame.line) else ""
    loaded = f"the {what_ran or 'call'} at {at} ({_in(frame.function)}) that first loaded {module}" + (
        f" (build #{first.seq})" if first is not None else ""
    )
    if late.chain:
        hops = []
        callee = fn
        for call in late.chain:
            hops.append(f"{callee}() is called at {call.file}:{call.line} ({_in(call.function_name)})")
            callee = call.function_name
        outer = late.chain[-1]
        move = (
            f"move the call at {outer.file}:{outer.line} above line {frame.line}"
            if outer.file == ctx.rel(frame.file)
            else f"call {outer.name}() before {at}"
        )
        when = f"{', and '.join(hops)}, after {loaded}"
    else:
        when = f"they run {_in(fn)} after {loaded}"
        move = f"move them above line {frame.line}"
    what = f"the new instances of {kernels} come from wp.overload at {regs} inside {fn}(); {when}"
    fix = (
        f"The new instances of {kernels} are registered, not launched: wp.overload at {regs} inside {fn}(), and "
        f"{when}. Register them before that first load: {move}, or run {fn}() once at import (module scope of "
        f"{late.file}, after its definition), or put the wp.overload lines at module scope after the kernel "
        f"definitions. Then {module} builds once, with every registered instance; the registrations and the "
        "launches stay as they are."
    )
    return what, fix


# ---------------------------------------------------------------------------------------------- the finding


def _registration_lines(
    ctx: RuleContext,
    parent: str,
    module: str,
    first: Build | None,
    items: list[tuple[HashChange, dict[str, list[Cause]]]],
) -> tuple[list[str], dict]:
    """`k_float64 = wp.overload(k, [...])` lines for one generic kernel, and its signature -> launch dtypes."""
    added = [c.after or "" for _, per in items for c in per.get(parent, [])]
    initial = [k.signature or "" for k in _instances(first, parent)]
    all_sigs = list(dict.fromkeys(initial + added))
    types = _types_for(all_sigs, _dtype_lists(ctx, parent, module))
    lines = []
    for sig in all_sigs:
        dt = types.get(sig)
        if dt is None:
            continue
        suffix = "_".join(dict.fromkeys(type_suffix(d) for d in dt if type_suffix(d))) or sig.replace("_", "")
        lines.append(f"{parent}_{suffix} = wp.overload({parent}, [{', '.join(wp_type(d) for d in dt)}])")
    return lines, types


def _finding(
    ctx: RuleContext,
    module: str,
    device: str,
    parents: list[str],
    items: list[tuple[HashChange, dict[str, list[Cause]]]],
) -> Finding:
    last = ctx.build(max(ch.to_seq for ch, _ in items))
    first_load = helpers.first_load(ctx.report.builds, module, device)
    first = ctx.build(min(ch.from_seq for ch, _ in items))
    infos = {p: (_instances(last, p) or _instances(first, p) or [None])[0] for p in parents}
    kdefs = {p: (ctx.scan_kernel(i) if i is not None else None) for p, i in infos.items()}
    # renamed before wp.kernel, or an alias: the run's record names the line that made it
    renamed = {p for p, i in infos.items() if kdefs[p] is None and i is not None and created_at(ctx, i) is not None}
    kdefs.update({p: created_at(ctx, infos[p]) for p in renamed})  # type: ignore[arg-type]
    parents = sorted(parents, key=lambda p: (kdefs[p].file, kdefs[p].line) if kdefs[p] else ("~", 0, p))
    names = {p: (kdefs[p].name if kdefs[p] and p not in renamed else p.split("__locals__")[-1]) for p in parents}
    code: dict[str, tuple[list[str], dict]] = {p: _registration_lines(ctx, p, module, first, items) for p in parents}
    lates = _late_registrations(ctx, [(p, names[p], kdefs[p]) for p in parents], first_load)
    late = [x for x in lates if x.confirmed]
    possible = [x for x in lates if not x.confirmed]
    covered = {n for x in late for r in x.regs for n in (r.kernel,)}
    registered = [p for p in parents if names[p] in covered]  # instances registered late
    launched = [p for p in parents if names[p] not in covered]  # instances that came from launches

    evidence = []
    locations: list[Location | None] = []
    late_fixes = []
    for x in late:
        what, fix = _late_text(ctx, x, module, first_load)
        late_fixes.append(fix)
        evidence.append(Evidence(fact=what[0].upper() + what[1:], source="scan"))
        fn = x.function.rsplit(".", 1)[-1]
        if x.chain:
            outer = x.chain[-1]
            note = f"{outer.name}() runs here, after {module} first loaded: move it before the first launch"
            locations.append(ctx.loc(outer.file, outer.line, note))
        for r in x.regs:
            note = f"wp.overload({r.kernel}, ...) inside {fn}(), registered after {module} loaded"
            locations.append(ctx.loc(r.file, r.line, note))
        assert x.frame is not None
        note = f"first load of {module}" + (f" (build #{first_load.seq})" if first_load is not None else "")
        locations.append(ctx.loc(x.frame.file, x.frame.line, note))
    for p in launched:
        if infos[p] is not None and not _own_closure(ctx, kdefs[p], infos[p]):
            dep = helpers.dependency_of(ctx, infos[p].file)
            note = (f"generic kernel {names[p]} of {dep} (see the upstream report)"
                    if dep is not None and "__locals__" in p
                    else f"generic kernel {names[p]}: register its routine instances here")
            locations.append(ctx.kernel_loc(infos[p], note))
    for ch, per in items:
        later = ctx.build(ch.to_seq)
        parts = []
        for p in parents:
            if p not in per:
                continue
            types = code[p][1]
            new = ", ".join(f"[{', '.join(types.get(c.after or '') or [c.after or '?'])}]" for c in per[p])
            parts.append(f"{names[p]} {new}" if len(per) > 1 or registered else new)
        by_launch = [names[p] for p in launched if p in per]
        how = []
        if any(p in per for p in registered):
            how.append("instances registered after the module loaded joined it")
        if by_launch:
            how.append(
                f"{' and '.join(by_launch)} {'was' if len(by_launch) == 1 else 'were'} launched with new argument types"
            )
        why = f" because {', and '.join(how)}: {'; '.join(parts)}"
        evidence.append(helpers.rebuild_evidence(ch, module, why, trigger=" (triggered at {})"))
        if later is not None and by_launch:
            locations.append(ctx.trigger_loc(later, "launch of a generic kernel with a new type instance"))
            entry = _divergence(ctx.build(ch.from_seq), later)
            if entry is not None:
                locations.append(ctx.loc(entry.file, entry.line, "the call path that brings the new types in"))

    mine, elsewhere = helpers.sized_here(ctx, [ch for ch, _ in items], MECHANISM)
    sized = superseded_by(ctx, mine)
    if sized.builds:
        evidence.append(sized.removal_evidence(module, "every instance present at the first load"))

    fixes = list(late_fixes)
    edits: list[Edit] = []
    reviews: list[str] = []
    ups: list[tuple[str, str, int, str]] = []
    plans: list[Plan] = []
    registering = False
    swaps: list[tuple[str, list[Edit], Plan]] = []  # (kernel, its registration edits, its module-of-its-own plan)
    rank = 2 if late else 0  # a late registration's fix is the order of calls, which no edit changes
    if late:
        reviews.append("the registrations run in a function called after the first load: move that call by hand")
    @functools.cache
    def at_import() -> bool:
        """Whether the module-wide plan below holds (computed once)."""
        step = versions_plan(ctx, module, kind="overload")
        return step is not None and step.ok

    for p in launched:
        sigs = list(code[p][1])
        dist = helpers.dependency_of(ctx, infos[p].file if infos[p] is not None else None)
        kdef = kdefs[p]
        if dist is not None:
            plan = dep_plan(ctx, p, infos[p], module, dist, sigs, code[p][1], first_load)
        elif kdef is not None and kdef.nested and kdef.module_arg == "unique":
            # its own module (generic by the run's instances, whatever the scan could see through an alias): only
            # its instances rebuild it
            plan = register_where_made(ctx, kdef, p, module)
        elif _made_once_at_import(ctx, infos[p], kdef) and at_import():
            # made inside a function, but once, while its file was imported (`k = _make_k()` at module scope): the
            # run shows one kernel like a module-scope one, so the module-wide plan below (the instances the run made
            # late, made at import) comes first; a module of its own per closure is the fallback
            plan = Plan(review=f"{names[p]} is made once, at import (the run's record): its instances are registered "
                               "where the run made them, before the module loads")
        elif _own_closure(ctx, kdef, infos[p]):
            # the project's closure kernel: its recorded instances registered where it is made (its module then
            # builds once), or a module of its own per closure (each new instance rebuilds only that one); both are
            # measured when both can be written, and `fix` keeps the one that saves more
            plan = register_where_made(ctx, kdef, p, module)  # type: ignore[arg-type]
            isolated = own_plan(ctx, p, kdef, module, sigs, code[p][1])
            if not plan.edits:
                isolated.review = "; ".join(x for x in (isolated.review, plan.review) if x)
                plan = isolated
            elif isolated.edits:
                swaps.append((names[p], plan.edits, isolated))
        else:
            plan = own_plan(ctx, p, kdefs[p], module, sigs, code[p][1])
        edits += plan.edits
        if plan.edits and not plan.registers:
            at = plan.edits[0]
            locations.insert(0, ctx.loc(at.file, at.start_line, f'closure kernel {names[p]}: module="unique" here'))
        elif plan.edits and _own_closure(ctx, kdef, infos[p]):
            at = plan.edits[0]
            locations.insert(0, ctx.loc(at.file, at.start_line, f"closure kernel {names[p]}: its instances "
                                                                 "registered here, where it is made"))
        rank = max(rank, RANK[plan.applicability])
        if plan.review:
            reviews.append(f"{names[p]}: {plan.review}")
        if plan.upstream is not None:
            ups.append(plan.upstream)
        plans.append(plan)
        registering = registering or plan.registers
        if dist is not None:
            fixes.append(
                plan.prose
                or f"{names[p]} belongs to the installed {dist}, whose code this project does not own: "
                f"{plan.review}. The upstream report with this measurement is ready for its maintainers."
            )
            continue
        if plan.prose:
            fixes.append(plan.prose)
            continue
        lines = code[p][0]
        kdef = kdefs[p]
        where = f" right after its definition ({kdef.file}:{kdef.line})" if kdef is not None else ""
        snippet = "; ".join(f"`{ln}`" for ln in lines)
        fixes.append(
            f"Register the instances {names[p]} is routinely launched with at module scope{where}, before the "
            f"first launch of anything in {module}, and keep the returned objects: {snippet}."
            if lines
            else f"Register {names[p]}'s routine type instances with wp.overload({names[p]}, [...]) at module scope"
            f"{where}, before the first launch of anything in {module}, and keep the returned objects."
        )
    if launched and registering:
        fixes.append("Launches stay as they are; they resolve to the registered overloads.")
    for x in possible[:2] if launched else []:
        fn = x.function.rsplit(".", 1)[-1]
        regs = ", ".join(f"{ctx.rel(r.file)}:{r.line}" for r in x.regs)
        note = f"wp.overload inside {fn}(): runs when {fn}() is called, not at import"
        locations.append(ctx.loc(x.regs[0].file, x.regs[0].line, note))
        first_at = (
            f" ({ctx.rel(first_load.trigger.file)}:{first_load.trigger.line})"
            if first_load is not None and first_load.trigger is not None
            else ""
        )
        fixes.append(
            f"The registrations at {regs} run inside {fn}(), not at import: if {fn}() is called after {module} first "
            f"loads{first_at}, they add the instances late; calling {fn}() before the first launch is then the fix."
        )
    if not edits and not ups:
        # registered inside a function, or on a kernel the scan cannot place: the instances the run made late,
        # made at import by the function whose call made them
        step = versions_plan(ctx, module, kind="overload")
        if step is not None and step.ok:
            edits, rank = step.edits, 1
            reviews = [r for r in reviews if "move that call by hand" not in r] + step.review
            fixes.append(f"The edit does it: {step.done}, so {module} has every instance before it loads.")
        elif step is not None:
            reviews.append(f"the instances the run made, at import: {step.why_not}")
        elif any(kdefs[p] is None for p in launched):
            reviews.append(f"from the run's record: it holds no instance of {module} made after the module loaded "
                           "by a call of the project's (they came with launches)")
    fix = " ".join(fixes)
    applicability = ("automatic", "review", "manual")[rank] if edits or rank == 2 else "manual"
    if edits and applicability == "manual":
        applicability = "review"  # some of the kernels get their registration; the review names the others
    rebuilt = [b.ms for b in sized.builds]
    upstream = overload_upstream_report(module, ups, sized.ms, plans, rebuilt, ctx.samples) if ups else None

    reg_names = " and ".join(names[p] for p in registered)
    launch_names = " and ".join(names[p] for p in launched)
    if registered and not launched:
        title = f"{module} rebuilt because wp.overload registrations of {reg_names} ran after the module loaded"
    elif registered:
        title = (
            f"{module} rebuilt because wp.overload registrations of {reg_names} ran after the module loaded and "
            f"{launch_names} got new type instances"
        )
    elif len(launched) == 1:
        title = f"{module} rebuilt because {launch_names} got a new type instance after the module loaded"
    else:
        title = f"{module} rebuilt because {launch_names} got new type instances after the module loaded"
    basis = sized.basis(f"the {len(items)} rebuild(s) caused by late instances") + elsewhere
    alternatives = [_isolated_instead(edits, swaps)] if swaps and edits else []
    return Finding(
        mechanism=MECHANISM,
        title=title,
        severity=ctx.severity_for(sized.ms),
        confidence="high",
        modules=[module],
        evidence=evidence,
        locations=dedupe_locations(locations),
        fix=fix,
        estimated_saving_ms=round(sized.ms, 1),
        saving_basis=f"{basis}, reference sample",
        applicability=applicability,  # type: ignore[arg-type]
        edits=edits,
        review="; ".join(reviews),
        upstream=upstream,
        alternatives=alternatives,
        samples=1 if ctx.samples else 0,
        caveats=(
            [
                "Register only types the application routinely uses: each registered instance is generated and "
                "compiled on every cold start, and registering rarely used ones can cost more than the rebuild.",
                "A rare or diagnostic type can instead live in a module with its own lifecycle, or stay lazy.",
            ]
            if registering or registered
            else []
        )
        + (
            [
                "Registering before the first launch makes the first build carry every registered instance: if some "
                "registered types are rare, drop them from the registration rather than moving it."
            ]
            if registered
            else []
        ),
    )


def _isolated_instead(edits: list[Edit], swaps: list[tuple[str, list[Edit], Plan]]) -> Alternative:
    """The finding's edits with every closure kernel's registration replaced by a module of its own."""
    dropped = [e for _n, es, _p in swaps for e in es]
    kept = [e for e in edits if e not in dropped]
    names = " and ".join(n for n, _e, _p in swaps)
    return Alternative(
        label=f'a module of its own for {names} (module="unique") instead of registering its instances where it is '
              "made",
        edits=kept + [e for _n, _e, p in swaps for e in p.edits],
        applicability="review",
        review="; ".join(p.review for _n, _e, p in swaps if p.review),
    )


def _made_once_at_import(ctx: RuleContext, info: KernelInfo | None, kdef: KernelDef | None) -> bool:
    """A generic kernel made inside a function whose one creation the run recorded ran at import: one kernel object
    for the whole run, as a module-scope definition would be."""
    if info is None or kdef is None or not kdef.nested or not kdef.generic:
        return False
    key = info.generic_parent or info.key
    made = [c for c in ctx.report.kernel_creations if c.made_by == "kernel" and c.key == key]
    return len(made) == 1 and made[0].at_import


def _own_closure(ctx: RuleContext, kdef: KernelDef | None, info: KernelInfo | None) -> bool:
    """A generic kernel of the project's own made inside a function: its edit is a module, not a registration."""
    dist = helpers.dependency_of(ctx, info.file if info is not None else None)
    return kdef is not None and kdef.nested and kdef.generic and dist is None


def _groups(ctx: RuleContext) -> list[tuple[str, str, list[str], list[tuple[HashChange, dict[str, list[Cause]]]]]]:
    """(module, device, generic kernels, rebuild events): one per cause.

    Kernels whose instances arrived in the same rebuild belong together (that rebuild is one event, fixed once);
    a kernel whose instances arrive in several rebuilds joins them. Each event lands in exactly one group.
    """
    events: dict[tuple[str, str], list[tuple[HashChange, dict[str, list[Cause]]]]] = defaultdict(list)
    for ch in ctx.changes:
        if ch.status.startswith("error"):
            continue
        per_parent: dict[str, list[Cause]] = defaultdict(list)
        for c in ch.causes:
            if c.kind == "overload_added" and c.kernel:
                per_parent[c.kernel].append(c)
        if per_parent:
            events[(ch.module, ch.device)].append((ch, dict(per_parent)))
    out = []
    for (module, device), evs in events.items():
        owner: dict[str, int] = {}  # parent -> component
        comps: dict[int, set[str]] = {}
        for i, (_, per) in enumerate(evs):
            ids = {owner[p] for p in per if p in owner}
            merged = set(per).union(*(comps.pop(j) for j in ids))
            comps[i] = merged
            for p in merged:
                owner[p] = i
        for cid, members in comps.items():
            items = [(ch, per) for ch, per in evs if owner[next(iter(per))] == cid]
            parents = list(dict.fromkeys(p for _, per in items for p in per))
            assert set(parents) == members
            out.append((module, device, parents, items))
    return sorted(out, key=lambda g: g[3][0][0].to_seq)


PRIORITY = 1  # a rebuild that also added a kernel or changed an option is sized by CS-1 / CS-3


def claims(ctx: RuleContext) -> list[helpers.Claim]:
    return [helpers.Claim(ch.to_seq, MECHANISM, PRIORITY) for *_, items in _groups(ctx) for ch, _ in items]


def evaluate(ctx: RuleContext) -> RuleResult:
    findings = [_finding(ctx, module, device, parents, items) for module, device, parents, items in _groups(ctx)]
    if findings:
        return RuleResult(findings=findings)
    generic = {k.generic_parent for b in ctx.loads for k in b.kernels if k.generic_parent}
    detail = f" ({len(generic)} generic kernel(s) loaded, all instances present at first load)" if generic else ""
    return RuleResult(
        ruled_out=[
            RuledOut(
                mechanism=MECHANISM,
                signal=f"no module was rebuilt by a generic kernel instance added after it loaded{detail}",
            )
        ]
    )
