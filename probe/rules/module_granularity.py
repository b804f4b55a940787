"""CS-4: several tiny modules with one lifecycle each pay the fixed per-module cost again.

Every module has its own hash, generated source, compiler invocation and binary load. When one feature splits its
kernels into many small modules that are always loaded together, that fixed cost repeats once per module. This rule
is deliberately conservative, because merging modules that do *not* share a lifecycle makes things worse:

- at least 3 modules on one device, none module="unique" (that is CS-9), each with at most 2 kernels;
- each built exactly once (no hash change, so nothing about them churns on its own);
- all first launched from one function (else: one file; else reached from one calling function a frame or two up,
  counting there only modules that are one unit: one kernel, or every launch of their kernels from one function,
  the module's own helper such as a `downsample()` that launches both of its kernels), all with the same options.

Estimate: (n - 1) x the median load of those modules. A small module's load is mostly fixed cost, but it includes
its own kernels' codegen and compile, which a merged module still pays, so this is an upper bound.
"""

from __future__ import annotations

import os
from collections import defaultdict
from dataclasses import dataclass, field

from warp_compile.probe.diagnosis_models import Evidence, Finding, RuleResult
from warp_compile.probe.hashdiff import unique_family
from warp_compile.probe.models import Build
from warp_compile.probe.rules.context import RuleContext, dedupe_locations, fmt_ms, norm_value
from warp_compile.probe.rules.helpers import literal_dict, median, ruled_out
from warp_compile.probe.scan_models import ModuleOptionsFact

MECHANISM = "CS-4"
MIN_MODULES = 3
MAX_KERNELS = 2


def _options_key(b: Build) -> tuple:
    return tuple(sorted((k, v) for k, v in b.options.items() if k != "block_dim")) + (("bd", b.block_dim),)


def _candidates(ctx: RuleContext) -> list[Build]:
    """Small modules built exactly once, in the whole cold run, by a launch."""
    per_module: dict[str, list[Build]] = defaultdict(list)
    for b in ctx.report.builds:
        per_module[b.module].append(b)
    changed = {ch.module for ch in ctx.changes}
    out = []
    for module, builds in per_module.items():
        if len(builds) != 1 or module in changed:
            continue
        b = builds[0]
        if b.status != "compiled" or unique_family(b) is not None:
            continue
        if not b.kernels or len(b.kernels) > MAX_KERNELS or b.trigger is None:
            continue
        out.append(b)
    return out


def _frame(b: Build, depth: int) -> tuple[str, str] | None:
    """(file, function) of the depth-th user frame of the build's trigger (0: the launching line itself)."""
    t = b.trigger
    if t is None:
        return None
    if depth == 0:
        return (t.file, t.function)
    return (t.stack[depth].file, t.stack[depth].function) if len(t.stack) > depth else None


def _one_unit(ctx: RuleContext, b: Build) -> bool:
    """Whether a module is used as one unit, so a shared caller further up speaks for all of it: it holds one kernel,
    or every recorded launch of its kernels comes from the function that first launched it (its own helper)."""
    if len(b.kernels) == 1:
        return True
    t = b.trigger
    sites = {
        (la.site.file, la.site.function)
        for la in ctx.report.launches
        if la.module == b.module and la.site is not None and (not la.device or la.device == b.device)
    }
    return t is not None and sites == {(t.file, t.function)}


def _groups(ctx: RuleContext, cands: list[Build]) -> list[tuple[str, list[Build]]]:
    """Lifecycle groups: same device and options, first launched from one function, else from one file, else
    reached from one calling function further up (each module launching its own kernels from a helper that one
    pipeline step calls)."""
    by_fn: dict[tuple, list[Build]] = defaultdict(list)
    for b in cands:
        t = b.trigger
        assert t is not None
        by_fn[(b.device, _options_key(b), t.file, t.function)].append(b)
    groups = [(f"{os.path.basename(k[2])}:{k[3]}()", v) for k, v in by_fn.items() if len(v) >= MIN_MODULES]
    if groups:
        return groups
    by_file: dict[tuple, list[Build]] = defaultdict(list)
    for b in cands:
        t = b.trigger
        assert t is not None
        by_file[(b.device, _options_key(b), t.file)].append(b)
    groups = [(os.path.basename(k[2]), v) for k, v in by_file.items() if len(v) >= MIN_MODULES]
    if groups:
        return groups
    for depth in (1, 2):
        # a shared caller further up is weaker evidence of one lifecycle: only modules used as one unit count there
        by_caller: dict[tuple, list[Build]] = defaultdict(list)
        for b in cands:
            fr = _frame(b, depth) if _one_unit(ctx, b) else None
            if fr is not None:
                by_caller[(b.device, _options_key(b), *fr)].append(b)
        groups = [
            (f"{os.path.basename(k[2])}:{k[3]}() (the caller)", v)
            for k, v in by_caller.items()
            if len(v) >= MIN_MODULES
        ]
        if groups:
            return groups
    return []


def _common_package(modules: list[str]) -> str:
    parts = [m.split(".") for m in modules]
    common: list[str] = []
    for seg in zip(*parts, strict=False):
        if len(set(seg)) != 1:
            break
        common.append(seg[0])
    if len(common) == min(len(p) for p in parts):
        common = common[:-1]  # one module is the prefix of the others: stay in its package
    return ".".join(common)


def _py_literal(value: str) -> str:
    """A recorded option value (str() of it) as Python source."""
    if value in ("True", "False", "None"):
        return value
    try:
        float(value)
    except ValueError:
        return f'"{value}"'
    return value


@dataclass
class _Carried:
    """The module options the small modules set for themselves, which a merged module must be given again."""

    options: dict[str, str] = field(default_factory=dict)  # option -> source text
    sites: list[ModuleOptionsFact] = field(default_factory=list)  # the calls that set them today
    conflicts: list[str] = field(default_factory=list)  # options the files set to different values
    measured_only: list[str] = field(default_factory=list)  # seen in the builds, no literal call found


def _carried_options(ctx: RuleContext, group: list[Build]) -> _Carried:
    """Options each module received on its own (set_module_options / get_module(..).options before it loaded).

    A merged module, whether a new file or a named module, is created with wp.config's values only: whatever the old
    modules set for themselves is lost unless the fix sets it again. From the scan, the option calls targeting the
    modules whose values the builds carry; from the measurement, options a build carries that differ from what the
    module copied at creation (block_dim aside: a CPU launch sets it)."""
    out = _Carried()
    seen: dict[str, set[str | None]] = defaultdict(set)
    modules = {b.module: b for b in group}
    if ctx.scan is not None:
        for f in ctx.scan.module_options:
            b = modules.get(f.target or "")
            if b is None or not f.options:
                continue
            arrived = {k: v for k, v in f.options.items() if norm_value(b.options.get(k)) == norm_value(v)}
            if not arrived:
                continue
            out.sites.append(f)
            for k, v in arrived.items():
                seen[k].add(norm_value(v))
                out.options.setdefault(k, v)
    for b in group:
        created = next((c for c in ctx.report.module_creations if c.module == b.module), None)
        if created is None:
            continue
        for k, v in created.options.items():
            if k == "block_dim" or v == "None" or k not in b.options or b.options[k] == v:
                continue
            seen[k].add(norm_value(b.options[k]))
            if k not in out.options:
                out.options[k] = _py_literal(b.options[k])
                out.measured_only.append(k)
    out.conflicts = sorted(k for k, vals in seen.items() if len(vals) > 1)
    return out


def _finding(ctx: RuleContext, lifecycle: str, group: list[Build]) -> Finding:
    group = sorted(group, key=lambda b: b.seq)
    n = len(group)
    med = median([b.ms for b in group])
    saving = (n - 1) * med
    modules = [b.module for b in group]
    kernels: list[str] = []
    locations = []
    for b in group:
        for k in b.kernels:
            kd = ctx.scan_kernel(k)
            kernels.append(kd.name if kd else k.key)
            locations.append(ctx.kernel_loc(k, f"{kd.name if kd else k.key}: the only kernel(s) of module {b.module}"))
    t = group[0].trigger
    assert t is not None
    first = f"{ctx.rel(t.file)}:{t.line}"
    evidence = [
        Evidence(
            fact=f"{n} modules with at most {MAX_KERNELS} kernels each were built once each, all first launched from "
            f"{lifecycle} (from {first}): "
            + ", ".join(f"{b.module} #{b.seq} {fmt_ms(b.ms)} ({len(b.kernels)} kernel)" for b in group),
            builds=[b.seq for b in group],
            ms=sum(b.ms for b in group),
        ),
        Evidence(
            fact=f"median load of these modules {fmt_ms(med)}; each pays its own codegen, compiler start and binary "
            "load, and they share one option set",
            builds=[b.seq for b in group],
            ms=med,
        ),
    ]
    pkg = _common_package(modules)
    target = f"{pkg}.kernels" if pkg else "kernels"
    target_file = target.replace(".", "/") + ".py"
    carried = _carried_options(ctx, group)
    lit = literal_dict(carried.options)
    sites = ", ".join(dict.fromkeys(f"{ctx.rel(f.file)}:{f.line}" for f in carried.sites))
    if carried.options:
        set_by = f"set today by {sites}" if sites else "which the builds carry"
        evidence.append(
            Evidence(
                fact=f"the modules set their own options, {lit} ({set_by}); a merged module is created with "
                "wp.config's values only, so the fix has to set them on it again",
                builds=[b.seq for b in group],
                source="both" if sites else "measurement",
            )
        )
    if carried.conflicts:
        move = (
            f"e.g. move them into {target_file} and import them from there where they are used today (first settle "
            f"{', '.join(carried.conflicts)}, which the files set differently: one module has one option set)"
        )
        named = (
            "; a shared named module is not offered, because the files' option calls disagree and a named module "
            "gets none of them"
        )
    elif carried.options:
        move = (
            f"e.g. move them into {target_file} with `wp.set_module_options({lit})` at its top (the options "
            f"{sites or 'the builds carry'} set today), and import them from there where they are used today"
        )
        replace = (
            f"replace {'each of ' if len(carried.sites) > 1 else ''}{sites} with "
            if sites
            else "add, at file level of a file imported before the first launch, "
        )
        named = (
            f', or keep the files and give each kernel @wp.kernel(module="{target}"): their option calls would '
            "then configure modules that hold no kernels, so "
            f'{replace}`wp.get_module("{target}").options.update({lit})`, which sets them on the named module before '
            f'it first loads on every Warp version (wp.set_module_options({lit}, module="{target}") needs warp 1.19; '
            "1.10.1 raises AttributeError on a name)"
        )
    else:
        move = f"e.g. move them into {target_file} and import them from there where they are used today"
        named = f', or give each @wp.kernel(module="{target}") a shared named module'
    return Finding(
        mechanism=MECHANISM,
        title=f"{n} one-lifecycle modules each pay the fixed per-module build cost",
        severity=ctx.severity_for(saving),
        confidence="medium",
        modules=modules,
        evidence=evidence,
        locations=dedupe_locations(locations),
        fix=f"Put {', '.join(kernels)} (same names and bodies) into one module, since they are loaded together in "
        f"{lifecycle}: {move}{named}. One build instead of {n}.",
        estimated_saving_ms=round(saving, 1),
        saving_basis=f"({n} - 1) x {fmt_ms(med)}, the median load of the {n} small modules; an upper bound, since the "
        "merged module still generates and compiles every kernel; reference sample",
        samples=1 if ctx.samples else 0,
        caveats=[
            "Group only kernels with one lifecycle and one option set; a kernel that changes independently, is rarely "
            "used, needs other options, or (on CUDA) another stable block_dim should keep its own module.",
            "A larger module recompiles more code whenever any of its kernels changes, which can slow an edit-run "
            "loop.",
            "With a CPU precompiled header the fixed cost per module is small; it is several times larger on CUDA "
            "and on Warp versions without the CPU header.",
        ],
    )


def evaluate(ctx: RuleContext) -> RuleResult:
    cands = _candidates(ctx)
    findings = [_finding(ctx, lifecycle, g) for lifecycle, g in _groups(ctx, cands)]
    if findings:
        return RuleResult(findings=findings)
    modules = {b.module for b in ctx.loads}
    why = (
        f"{len(cands)} small single-build module(s) share no launching function or file"
        if len(cands) >= MIN_MODULES
        else f"fewer than {MIN_MODULES} small modules built once from one function or file "
        f"({len(modules)} module(s) loaded, {len(cands)} small)"
    )
    return ruled_out(MECHANISM, why)
