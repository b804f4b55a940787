"""CS-1: a module rebuilt because kernels joined it after its first load.

Warp hashes a module's whole live kernel set, so a kernel registered after the module loaded (typically one created
inside a function on first use) makes the next launch regenerate and recompile every kernel in the module. The hash
diff names the added kernel directly (`kernel_added`); a kernel re-created with a new body or closure constant under
the same key (`kernel_changed`, outside module="unique" families) is the same lifecycle problem at lower confidence.

Each rebuild that an added kernel caused is one redundant build, but the rebuild is not what the fix removes: the
final build carries every kernel and remains. The estimate is the builds those rebuilds superseded (every build of
the module/device/block_dim except the one that remains, `context.superseded_by`), plus a precompiled header only
they needed. Locations are the definitions of the late kernels, at the scan's `def` line when the scan finds them.
"""

from __future__ import annotations

from warp_compile.probe.diagnosis_models import Evidence, Finding, HashChange, RuledOut, RuleResult
from warp_compile.probe.hashdiff import unique_family
from warp_compile.probe.models import Build, KernelInfo
from warp_compile.probe.rules.context import RuleContext, dedupe_locations, fmt_ms, superseded_by
from warp_compile.probe.rules.helpers import Claim, Events, claims_of, events_by_module, first_load, sized_here

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
        locations.append(ctx.kernel_loc(info, note) if info is not None else None)
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
    where_txt = ", ".join(f"{loc.file}:{loc.line}" for loc in located)
    first_at = ""
    if first is not None and first.trigger is not None:
        first_at = f" (first load: {ctx.rel(first.trigger.file)}:{first.trigger.line})"
    parts = []
    files = sorted({loc.file for loc in located})
    home = files[0] if len(files) == 1 else f"the file that holds {module}"
    if nested:
        lst = ", ".join(f"{n} (now created inside {o}())" for n, o in nested)
        parts.append(
            f"Define {lst} at module scope of {home}, with the same names and bodies, and look "
            f"them up instead of creating them on demand, so {module} has its final kernel set before its first "
            f"launch{first_at}."
        )
    if plain:
        parts.append(
            f"Make sure {', '.join(plain)} {'is' if len(plain) == 1 else 'are'} defined (imported) before the first "
            f"launch of anything in {module}{first_at}."
        )
    parts.append(
        "If they must be created at run time, create every expected kernel of that module before its first launch."
    )
    if where_txt:
        parts.append(f"Definitions: {where_txt}.")
    n = len(items)
    return Finding(
        mechanism=MECHANISM,
        title=f"{module} rebuilt {n} time{'s' if n > 1 else ''} because kernels joined it after it loaded",
        severity=ctx.severity_for(saving),
        confidence="medium" if changed_only or all(ch.status != "compiled" for ch, _ in items) else "high",
        modules=[module],
        evidence=evidence,
        locations=dedupe_locations(locations),
        fix=" ".join(parts),
        estimated_saving_ms=round(saving, 1),
        saving_basis=f"{sized.basis(f'the {n} rebuild(s) caused by late kernels')}{elsewhere}, reference sample",
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
