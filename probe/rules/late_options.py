"""CS-3: module options decided too late, at either of their two deadlines.

1. First load. Options are part of the module hash, so `wp.set_module_options()` or `wp.get_module(..).options`
   changed after a module loaded makes its next launch rebuild the whole module. The hash diff names the option
   (`option_changed`); the scan names the line that set it. Saving: the measured rebuilds.
2. Module creation (import). A module copies max_unroll, lineinfo, deterministic, ... from wp.config when it is
   created; a later `wp.config.X = v` never reaches it and nothing says so. Reported only when the measurement
   confirms it (the build's config_shadow shows the old value). enable_backward is CS-10's: skipped here, and
   the ruled-out signal names it as reported under CS-10 rather than claiming nothing was missed.
3. A bare `wp.set_module_options()` in a Python module that holds no kernels configures nothing.

Deadline findings have no measured saving: the option never arrived, so its effect was never built.
"""

from __future__ import annotations

import re

from ..fix.place.entry_fix import can_edit
from ..fix.transform.options import merge_into_module_call, module_scope_call
from ..fix.transform.statements import move_statement_up_edits
from ..models import Build
from ..models.diagnosis import (
    Applicability,
    Cause,
    Edit,
    Evidence,
    Finding,
    HashChange,
    Location,
    RuleResult,
)
from ..models.scan import ConfigSetFact, ImportRef, ModuleOptionsFact
from .context import (
    LateConfig,
    RuleContext,
    dedupe_locations,
    fmt_ms,
    late_config_assignments,
    norm_value,
    superseded_by,
)
from .helpers import (
    MEDIUM_SHARE,
    Claim,
    Events,
    claims_of,
    events_by_module,
    first_load,
    literal_dict,
    rebuild_evidence,
    ruled_out,
    share_of_compile,
    sized_here,
)
from .option_writes import (
    NUMERICS_OPTIONS,
    after_first_load,
    build_evidence,
    ignored_write_findings,
    never_reached_review,
    noop_findings,
    short_name,
)

MECHANISM = "CS-3"
OWN_DEADLINE_OPTIONS = frozenset(
    {"max_unroll", "lineinfo", "deterministic", "deterministic_max_records", "compile_time_trace"}
)  # enable_backward is copied at creation too, but its deadline is reported by CS-10


# ---------------------------------------------------------------------------------------------- 1. after first load


def _setter_sites(ctx: RuleContext, module: str, changed: list[Cause]) -> list[tuple[int, ModuleOptionsFact]]:
    """Scanned option writes that could have made these changes, best match first (score, fact)."""
    if ctx.scan is None:
        return []
    scored: list[tuple[int, ModuleOptionsFact]] = []
    for f in ctx.scan.module_options:
        score = 0
        for c in changed:
            if c.option in f.options:
                score += 2
                if norm_value(f.options[c.option]) == norm_value(c.after):
                    score += 2
        if score == 0:
            continue
        if f.target == module or (f.target and module == "__main__" and f.target.endswith(".__main__")):
            score += 3
        elif f.target_resolved and f.target is not None:
            score -= 3  # it configures another module
        if f.before_launch_in_file is False or f.scope == "function":
            score += 1  # runs late: inside a function, or after a launch in the same body
        scored.append((score, f))
    scored.sort(key=lambda sf: (-sf[0], sf[1].file, sf[1].line))
    return [sf for sf in scored if sf[0] > 0]


def _config_sites(ctx: RuleContext, changed: list[Cause]) -> list[ConfigSetFact]:
    """wp.config globals folded into the hash at load time (mode, verify_fp, ...): their assignment is the site."""
    if ctx.scan is None:
        return []
    out = []
    for c in changed:
        for f in ctx.scan.config_sets_named(c.option or ""):
            if norm_value(f.value) == norm_value(c.after) or norm_value(c.after) is None:
                out.append(f)
    return out


def _module_scope_call(ctx: RuleContext, module: str) -> ModuleOptionsFact | None:
    if ctx.scan is None:
        return None
    for f in ctx.scan.module_options:
        if f.api == "set_module_options" and f.scope == "module" and f.target == module:
            return f
    return None


_LITERAL = re.compile(
    r"""\s*(?:True|False|None|[-+]?(?:\d[\d_]*\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|'[^']*'|"[^"]*"|(?:wp|warp)\.[\w.]+)\s*"""
)


def _runtime_values(options: dict[str, str]) -> list[str]:
    """`key=value` of the option values that are neither literals nor Warp constants (`wp.X.Y`): computed at run
    time, e.g. from an argument, so the call cannot be moved to module scope, only earlier in the run."""
    return [f"{k}={v}" for k, v in options.items() if not _LITERAL.fullmatch(v)]


def _reorder(ctx: RuleContext, f: ModuleOptionsFact, first: Build | None, module: str) -> tuple[str, Location | None]:
    """The pasteable fix for a late call whose values come from run time: move it, or the call of its function,
    above the line that led to the first load (from the first build's trigger stack and the scan's callers); with
    the call site to change when that is another line than the call itself. ("", None) when the order is unknown."""
    after = after_first_load(ctx, f, first) if first is not None else None
    if after is None or after.kind == "static":
        return "", None
    if after.kind == "same":
        return (
            f"in {short_name(after.function)}(), move it above line {after.load_line}, which leads to the first load "
            f"of {module}"
        ), None
    where = ctx.loc(
        after.file, after.line, f"calls {short_name(after.callee)}() after line {after.load_line} loaded {module}"
    )
    return (
        f"in {short_name(after.function)}() ({after.file}), move the call of {short_name(after.callee)}() at line "
        f"{after.line} above line {after.load_line}, which leads to the first load of {module}"
    ), where


def _late_option_finding(
    ctx: RuleContext, module: str, device: str, items: list[tuple[HashChange, list[Cause]]]
) -> Finding:
    changed: list[Cause] = []
    for _, causes in items:
        for c in causes:
            if all((c.option, c.after) != (x.option, x.after) for x in changed):
                changed.append(c)
    mine, elsewhere = sized_here(ctx, [ch for ch, _ in items], MECHANISM)
    sup = superseded_by(ctx, mine)
    saving = sup.module_ms
    evidence = []
    first = first_load(ctx.report.builds, module, device)
    first_at = f"{ctx.rel(first.trigger.file)}:{first.trigger.line}" if first and first.trigger else None
    for ch, causes in items:
        evidence.append(rebuild_evidence(ch, module, f": {'; '.join(c.detail for c in causes)}"))
    headers = sup.headers
    if headers:
        pch_ms = sum(p.ms for p in headers)
        saving += pch_ms
        evidence.append(
            Evidence(
                fact=f"the first build also built a precompiled header ({', '.join(p.file for p in headers)}, "
                f"{fmt_ms(pch_ms)}) for option values that no build needs once the option is set before the first "
                "load: the header's key includes mode, optimization level, verify_fp, CPU flags and block_dim",
                builds=[p.during_seq for p in headers if p.during_seq is not None],
                ms=pch_ms,
            )
        )
    edits: list[Edit] = []
    setters = _setter_sites(ctx, module, changed)
    best = [f for s, f in setters if s == setters[0][0]] if setters else []
    cfg_sites = [] if best else _config_sites(ctx, changed)
    locations: list[Location | None] = []
    opts_txt = ", ".join(f"{c.option}: {c.before} -> {c.after}" for c in changed)
    wanted = {c.option: c.after for c in changed if c.option}
    for f in best:
        fn = f" in {f.function}()" if f.scope == "function" else ""
        locations.append(ctx.loc(f.file, f.line, f"sets {', '.join(sorted(f.options))}{fn} after {module} loaded"))
    for f in cfg_sites:
        locations.append(ctx.loc(f.file, f.line, f"wp.config.{f.name} = {f.value} after {module} loaded"))
    if not best and not cfg_sites:
        for ch, _ in items:
            later = ctx.build(ch.to_seq)
            if later is not None:
                locations.append(ctx.trigger_loc(later, f"launch that rebuilt {module} with the new options"))
    if best:
        f = best[0]
        opts = {k: v for k, v in f.options.items() if k in wanted} or f.options
        where = f"{ctx.rel(f.file)}:{f.line}" + (f" (in {f.function}())" if f.scope == "function" else "")
        host = _module_scope_call(ctx, module)
        if f.api == "get_module_options":
            stmt = f'wp.get_module("{module}").options.update({literal_dict(opts)})'
            fix = f"Apply `{stmt}` before {module} first loads"
        else:
            stmt = f"wp.set_module_options({literal_dict(opts)})"
            fix = f"Move the option change at {where} so it runs before {module} first loads"
        fix += f" (first load: {first_at})" if first_at else ""
        runtime = _runtime_values(opts) if f.api == "set_module_options" else []
        order, order_at = _reorder(ctx, f, first, module) if runtime else ("", None)
        if runtime and first is not None:
            edits = _reorder_edits(ctx, f, first)
        elif host is not None and host is not f and f.api == "set_module_options":
            edits = merge_into_module_call(ctx, f, host, opts)
        elif f.api == "set_module_options" and not runtime:
            edits = module_scope_call(ctx, f, module, opts)
        if order:
            locations.append(order_at)
            fix += (
                f": {', '.join(runtime)} is computed at run time, so the call cannot move to module scope; {order}, "
                "so the module is built once with its final options."
            )
        elif host is not None and host is not f and f.api == "set_module_options":
            merged = {**host.options, **opts}
            fix += (
                f": merge it into the module-scope call at {ctx.rel(host.file)}:{host.line}, "
                f"`wp.set_module_options({literal_dict(merged)})`, and drop it from {where}."
            )
        elif f.api == "set_module_options":
            fix += f": call `{stmt}` at module scope of the file that defines {module}'s kernels, before any launch."
        else:
            fix += "."
    elif cfg_sites:
        f = cfg_sites[0]
        fix = (
            f"Assign wp.config.{f.name} = {f.value} ({ctx.rel(f.file)}:{f.line}) at the entry point before the first "
            f"launch" + (f" ({first_at})" if first_at else "") + f", so {module} is hashed once with it."
        )
    else:
        fix = (
            f"Find what changes {opts_txt} on {module} between its loads and decide the option before the first "
            f"launch" + (f" ({first_at})" if first_at else "") + ": wp.set_module_options({...}) at module scope of "
            f'the kernels\' file, or wp.get_module("{module}").options.update({{...}}) while it has not loaded.'
        )
    n = len(items)
    applicability, review = _numerics_review(ctx, module, items, changed, edits)
    return Finding(
        mechanism=MECHANISM,
        title=f"{module} rebuilt because module options changed after it loaded ({opts_txt})",
        applicability=applicability,
        edits=edits,
        review=review,
        severity=ctx.severity_for(saving),
        confidence="high" if best or cfg_sites else "medium",
        modules=[module],
        evidence=evidence,
        locations=dedupe_locations(locations),
        fix=fix,
        estimated_saving_ms=round(saving, 1),
        saving_basis=sup.basis(f"the {n} option change(s)") + elsewhere + ", reference sample",
        samples=1 if ctx.samples else 0,
        caveats=[
            "Launches that ran before the change now also run with the new options: if an option changes numerics "
            "(fast_math, mode, fuse_fp), confirm the printed results still match.",
            "If two phases genuinely need different option sets, give each its own named module instead of "
            "switching one module's options (CS-4).",
        ],
    )


# options whose value changes what a kernel computes: a fix must not make them start reaching a launch that ran
# without them (issue 16: "without changing its results")


def _before_only(ctx: RuleContext, module: str, items: list[tuple[HashChange, list[Cause]]]) -> list[str]:
    """Kernels of `module` launched only before the first option change: they never ran with the new options."""
    starts = [b.start_ms for ch, _ in items if (b := ctx.build(ch.to_seq)) is not None and b.start_ms is not None]
    if not starts:
        return []
    cut = min(starts)
    before: set[str] = set()
    after: set[str] = set()
    for la in ctx.report.launches:
        if la.module != module or la.first_ms is None:
            continue
        (before if la.first_ms < cut else after).add(la.kernel)
    return sorted(before - after)


def _numerics_review(
    ctx: RuleContext,
    module: str,
    items: list[tuple[HashChange, list[Cause]]],
    changed: list[Cause],
    edits: list[Edit],
) -> tuple[Applicability | None, str]:
    """Setting the final options before the first load also changes the launches that ran before the change: for an
    option that changes numerics that is a person's call (review), naming the kernels that never ran with it."""
    if not can_edit(ctx):
        return None, ""
    if not edits:
        return "manual", (
            "no edit: the option change cannot be moved safely by a line edit (its values, its call site or the "
            "order of the calls around the first load need a person); follow the fix text"
        )
    numeric = sorted({c.option for c in changed if c.option in NUMERICS_OPTIONS})
    if not numeric:
        return "automatic", ""
    new = ", ".join(f"{c.option}={c.after}" for c in changed if c.option in numeric)
    never = _before_only(ctx, module, items)
    text = (
        f"numerics: {new} now applies from the first launch of {module}, so the launches that ran before the change "
        "run with it too"
    )
    if never:
        text += f"; {', '.join(never)} never ran with it before"
    return "review", text + ": confirm the printed results still match"


def _reorder_edits(ctx: RuleContext, f: ModuleOptionsFact, first: Build) -> list[Edit]:
    """Move the late call (or the call of its function) above the step that led to the first load."""
    after = after_first_load(ctx, f, first)
    if after is None or after.kind == "static":
        return []
    if after.kind == "call":
        return move_statement_up_edits(ctx.sources, after.file, after.line, after.load_line)
    return move_statement_up_edits(ctx.sources, f.file, f.line, after.load_line)


# ---------------------------------------------------------------------------------------------- 2. import deadline


def _import_statement(ctx: RuleContext, file: str, ref: ImportRef) -> str:
    """The import at `file:ref.line` as written: the source line when it is one whole statement, else rebuilt from
    the scan's import facts (`from pkg import a, b` or `import pkg.mod`)."""
    text = ctx.scan.source_line(file, ref.line) if ctx.scan is not None and ref.line > 0 else None
    if text is not None:
        stmt = text.split("#", 1)[0].strip().rstrip(";").strip()
        whole = re.match(r"(import|from)\s", stmt) and not stmt.endswith(("(", "\\", ",")) and ";" not in stmt
        if whole and re.search(rf"\b{re.escape(ref.module.rpartition('.')[2])}\b", stmt):
            return stmt  # one whole statement that names the module (the file is the one scanned)
    facts = [i for i in ctx.scan.imports_in(file) if i.line == ref.line] if ctx.scan is not None else []
    own = next((i for i in facts if i.module == ref.module), None)
    if own is not None and "." in own.module and own.names != [own.module.split(".")[0]]:
        parent = own.module.rpartition(".")[0]  # `from parent import name, ...` (a relative one shown absolute)
        names = [n for i in facts if i.module == parent or i.module.rpartition(".")[0] == parent for n in i.names]
        return f"from {parent} import {', '.join(dict.fromkeys(names))}"
    return f"import {ref.module}"


def _deadline_finding(ctx: RuleContext, late: LateConfig) -> Finding:
    f = late.fact
    mods = late.modules
    imports = (
        ", ".join(f"`{_import_statement(ctx, f.file, r)}` (line {r.line})" for r in late.imports[:3])
        or "kernels defined above it"
    )
    evidence = [
        Evidence(
            fact=f"wp.config.{f.name} = {f.value} at {ctx.rel(f.file)}:{f.line} runs after {imports}, which "
            f"created the Warp module(s) {', '.join(late.kernel_modules)}",
            source="scan",
        )
    ]
    for b in late.builds:
        mv, cv = b.config_shadow.get(f.name, ["?", "?"])[:2]
        evidence.append(
            build_evidence(b, f"used {f.name}={mv} while wp.config.{f.name} was {cv}: the assignment never reached it")
        )
    first_import = late.imports[0] if late.imports else None
    move = (
        f"Move `wp.config.{f.name} = {f.value}` ({ctx.rel(f.file)}:{f.line}) above "
        f"`{_import_statement(ctx, f.file, first_import)}` (line {first_import.line} of {ctx.rel(f.file)}), at the "
        "application entry point"
        if first_import
        else f"Move `wp.config.{f.name} = {f.value}` ({ctx.rel(f.file)}:{f.line}) above the kernel definitions"
    )
    alt = "; ".join(f'wp.get_module("{m}").options["{f.name}"] = {f.value}' for m in mods[:3])
    return Finding(
        mechanism=MECHANISM,
        title=f"wp.config.{f.name} is assigned after the module(s) that should get it were created",
        severity="medium" if share_of_compile(ctx, sum(b.ms for b in late.builds)) >= MEDIUM_SHARE else "low",
        confidence="high",
        modules=mods,
        evidence=evidence,
        locations=[ctx.loc(f.file, f.line, f"wp.config.{f.name} assigned after the kernel modules were imported")],
        applicability="manual" if can_edit(ctx) else None,
        review=never_reached_review(f.name),
        fix=f"{move}, so every module copies the value when it is created. If the import order is not yours, set "
        f"it on the existing module before it loads: `{alt}`. Then check that the module hash moved.",
        estimated_saving_ms=None,
        saving_basis="not measured: the option never reached the module, so its effect was never built; measure "
        "again with the assignment moved",
        samples=1 if ctx.samples else 0,
        caveats=[
            f"Setting {f.name} changes generated code; benchmark steady-state kernel time after the change.",
            "Set globals at the application entry point, not inside a shared library.",
        ],
    )


# ---------------------------------------------------------------------------------------------- entry


PRIORITY = 2  # after CS-1 (a new kernel), before CS-6 (a new type instance)


def _events(ctx: RuleContext) -> Events:
    """Rebuilds an option changed after the first load explains, per module and device."""
    return events_by_module(ctx, ("option_changed",))


def claims(ctx: RuleContext) -> list[Claim]:
    return claims_of(_events(ctx), MECHANISM, PRIORITY)


def evaluate(ctx: RuleContext) -> RuleResult:
    findings: list[Finding] = []
    for (module, device), items in _events(ctx).items():
        findings.append(_late_option_finding(ctx, module, device, items))
    lates = late_config_assignments(ctx)
    for late in lates:
        if late.confirmed and late.option in OWN_DEADLINE_OPTIONS:
            findings.append(_deadline_finding(ctx, late))
    findings.extend(noop_findings(ctx))
    findings.extend(ignored_write_findings(ctx))
    if findings:
        return RuleResult(findings=findings)
    unconfirmed = [x for x in lates if x.option in OWN_DEADLINE_OPTIONS and not x.confirmed]
    elsewhere = [x for x in lates if x.confirmed and x.option not in OWN_DEADLINE_OPTIONS]
    signal = "no module was rebuilt by an option change (no option_changed in the hash diffs)"
    if ctx.scan is not None:
        if elsewhere:  # enable_backward: copied at creation too, but its deadline is CS-10's finding
            options = sorted({x.option for x in elsewhere})
            sites = "; ".join(
                f"wp.config.{x.option} = {x.value} at {ctx.rel(x.fact.file)}:{x.fact.line}, which "
                f"{', '.join(x.modules)} missed"
                for x in elsewhere[:3]
            )
            owner = "CS-10 (backward code)" if options == ["enable_backward"] else "the mechanism that owns it"
            signal += (
                f"; the only wp.config option{'s' if len(options) > 1 else ''} copied at creation that a measured "
                f"module missed {'are' if len(options) > 1 else 'is'} {', '.join(options)} ({sites}), reported under "
                f"{owner}, not here"
            )
        else:
            signal += "; no measured module missed a wp.config option copied at creation"
        if unconfirmed:
            sites = ", ".join(f"{ctx.rel(x.fact.file)}:{x.fact.line}" for x in unconfirmed[:3])
            signal += f" (late assignments at {sites} did not show in any build)"
    return ruled_out(MECHANISM, signal)
