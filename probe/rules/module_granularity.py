"""CS-4: several tiny modules with one lifecycle each pay the fixed per-module cost again.

Every module has its own hash, generated source, compiler invocation and binary load. When one feature splits its
kernels into many small modules that are always loaded together, that fixed cost repeats once per module. This rule
is deliberately conservative, because merging modules that do *not* share a lifecycle makes things worse:

- at least 3 modules on one device, none module="unique" (that is CS-9), each with at most 2 kernels;
- each built exactly once (no hash change, so nothing about them churns on its own);
- all first launched from one function (else: one file; else reached from one calling function a frame or two up,
  whether it launches a module itself or through a helper, counting there only modules that are one unit: one kernel,
  or every launch of their kernels from one function, the module's own helper such as a `downsample()` that launches
  both of its kernels), all with the same options.

Modules of different owners are never grouped. Estimate: (n - 1) x the fixed per-module cost (`fixed_cost`: with the
CPU header, FIXED_PER_HEADER x the run's header build; else the
intercept of load time against generated source size over the run's builds, else the smallest load); no finding
when that is under MIN_MERGE_SHARE of the modules' own summed load, where their own compile dwarfs the saving.

The edit gives each kernel `@wp.kernel(module="<pkg>.kernels")` (or names that module on the project's own kernel
decorator, or on the `wp.Kernel(...)` call that generated it); the merged module must hold every kernel at its first
launch (else it would create CS-1), and the modules set no options of their own. The first is checked on the
composed result: a module the measured creations show made after the first load is first made at import by the
plan's candidates (fix/place/late_modules.py: the late import moved up, the kernels hoisted, or made from the run's
record), and the edit is then `review`; it is `manual` only when none holds, with each candidate's reason. When the
modules all set the same options of their own, the kernels join the first-loaded module instead (merge_module.py's
plan, shared with CS-12), which carries those options and loads where the first of them loaded, so every kernel
compiles as before; refused when the options differ, or when an option call names that module with a value its build
never carried (it ran after the load or never: the merged module, loading again for the others' kernels, would
rebuild, CS-3).
"""

from __future__ import annotations

import ast
import os
from collections import defaultdict
from dataclasses import dataclass, field

from ..fix.edits import replace_lines
from ..fix.place.late_modules import Early, call_module_edit, kernel_makers, made_before_load
from ..fix.place.merge_module import exists_by, plan_merge
from ..fix.transform.decorators import decorator_with
from ..hashdiff import unique_family
from ..models import Build
from ..models.diagnosis import Edit, Evidence, Finding, RuleResult
from ..models.scan import ModuleOptionsFact
from . import helpers
from .context import RuleContext, dedupe_locations, fmt_ms, norm_value
from .helpers import literal_dict, median, ruled_out

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
        by_fn[(b.device, _options_key(b), t.file, t.function, _owner(ctx, b))].append(b)
    groups = [(f"{os.path.basename(k[2])}:{k[3]}()", v) for k, v in by_fn.items() if len(v) >= MIN_MODULES]
    if groups:
        return groups
    by_file: dict[tuple, list[Build]] = defaultdict(list)
    for b in cands:
        t = b.trigger
        assert t is not None
        by_file[(b.device, _options_key(b), t.file, _owner(ctx, b))].append(b)
    groups = [(os.path.basename(k[2]), v) for k, v in by_file.items() if len(v) >= MIN_MODULES]
    if groups:
        return groups
    for depth in (1, 2):
        # a shared caller further up is weaker evidence of one lifecycle: only modules used as one unit count there.
        # A module counts under every function on its chain up to `depth` (its launching function included), so a
        # pipeline step that launches two modules itself and a third through a helper is one caller of all three.
        by_caller: dict[tuple, list[Build]] = defaultdict(list)
        for b in cands:
            frames = [_frame(b, d) for d in range(depth + 1)] if _one_unit(ctx, b) else []
            for fr in dict.fromkeys(f for f in frames if f is not None):
                by_caller[(b.device, _options_key(b), *fr, _owner(ctx, b))].append(b)
        groups = _largest_first(by_caller)
        if groups:
            return groups
    return []


def _largest_first(by_caller: dict[tuple, list[Build]]) -> list[tuple[str, list[Build]]]:
    """Disjoint groups of at least MIN_MODULES, the largest shared caller first: a module reached through several of
    them joins the group of the one that reaches the most."""
    taken: set[str] = set()
    groups = []
    for k, v in sorted(by_caller.items(), key=lambda kv: -len(kv[1])):
        members = [b for b in v if b.module not in taken]
        if len(members) >= MIN_MODULES:
            groups.append((f"{os.path.basename(k[2])}:{k[3]}() (the caller)", members))
            taken.update(b.module for b in members)
    return groups


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


# ---------------------------------------------------------------------------------------------- cost and edit

MIN_MERGE_SHARE = 0.10  # the merge must save at least this share of the modules' own summed load (lidar_mapping's
# three-module merge measured 13.5%: a real saving; a 3.6 s module beside two small ones would be ~5%)
MIN_SIZE_SPREAD = 1.5  # generated sizes must span this ratio before a line through load time is trusted
# The fixed per-module cost with the CPU precompiled header, as a share of the run's own header build (both are the
# same compiler's work, so the ratio carries across machines where milliseconds do not). Measured on the bundled
# sensor_fusion case (warp 1.19.0, CPU, 4 interleaved pairs): merging its four one-kernel modules into one took cold
# module work from 1,428.6 to 756.0 ms, 224.2 ms per module merged away, against a 5,782 ms header build.
FIXED_PER_HEADER = 0.039


def fixed_cost(ctx: RuleContext, group: list[Build]) -> tuple[float, str]:
    """(the fixed per-module cost, how it was found): the intercept of load time against generated source size over
    the run's compiled builds on the group's device (what a module costs before its own code), at most the smallest
    module's load; without three builds whose sizes differ enough to fit a line through (the largest at least
    MIN_SIZE_SPREAD times the smallest), the smallest load itself (an upper bound). Sizes a few percent apart leave
    the slope to the timing noise: three ~3.5 KB modules of 209-268 ms fitted a negative intercept (no fixed cost)
    on one run and the whole load on another."""
    device = group[0].device
    pts = [(b.source_bytes, b.ms) for b in ctx.report.builds if b.status == "compiled" and b.device == device]
    low = min(b.ms for b in group)
    headers = [p.ms for p in ctx.report.pch if p.ms > 0]
    if headers and helpers.is_cpu(device) and not any(helpers.pch_off(b) for b in group):
        h = median(headers)
        fixed = min(FIXED_PER_HEADER * h, low)
        return fixed, (
            f"{fmt_ms(fixed)}, {FIXED_PER_HEADER} x this run's header build ({fmt_ms(h)}; the ratio measured on a "
            "four-module merge)" + (", capped at the smallest of these loads" if fixed == low else "")
        )
    sizes = [x for x, _ in pts]
    if len(set(sizes)) >= 3 and min(sizes) > 0 and max(sizes) >= MIN_SIZE_SPREAD * min(sizes):
        mx = sum(x for x, _ in pts) / len(pts)
        my = sum(y for _, y in pts) / len(pts)
        sxx = sum((x - mx) ** 2 for x, _ in pts)
        slope = sum((x - mx) * (y - my) for x, y in pts) / sxx
        if slope > 0:
            fixed = min(max(my - slope * mx, 0.0), low)
            return fixed, (
                f"{fmt_ms(fixed)}, the intercept of load time against generated source over the run's {len(pts)} "
                f"compiled builds ({slope * 1000:.1f} ms per KB)"
            )
    return low, f"{fmt_ms(low)}, the smallest of these loads (an upper bound: it includes that module's own code)"


def _owner(ctx: RuleContext, b: Build) -> str:
    """The installed distribution that owns a module's kernels, or "" for the project's."""
    for k in b.kernels:
        dist = helpers.dependency_of(ctx, k.file)
        if dist:
            return dist
    return ""


def _decorator_edit(ctx: RuleContext, file: str, node: ast.FunctionDef, target: str) -> Edit | None:
    """The kernel's one-line `@wp.kernel` / `@wp.kernel(...)` decorator with `module="<target>"` added."""
    for d in node.decorator_list:
        func = d.func if isinstance(d, ast.Call) else d
        if not (isinstance(func, (ast.Attribute, ast.Name)) and ast.unparse(func).split(".")[-1] == "kernel"):
            continue
        if d.lineno != d.end_lineno or (isinstance(d, ast.Call) and any(k.arg == "module" for k in d.keywords)):
            return None
        lines = ctx.sources.lines(file)
        if lines is None:
            return None
        text = lines[d.lineno - 1]
        arg = f'module="{target}"'
        if isinstance(d, ast.Call):
            close = text.rstrip().rfind(")")
            inner = text[text.find("(") + 1 : close].strip()
            new = text[:close] + (f", {arg}" if inner else arg) + text[close:]
        else:
            end = d.end_col_offset or len(text.rstrip())
            new = text[:end] + f"({arg})" + text[end:]
        return replace_lines(ctx.sources, file, d.lineno, d.lineno, new)
    return None


def _late_option_calls(ctx: RuleContext, target: Build) -> list[str]:
    """Option calls that may reach `target` with a value its build did not carry ("file:line").

    Such a call ran after the module had loaded (its build would carry the value otherwise) or never ran; either way,
    once the others' kernels join `target`, the merged module loads again after it and would rebuild (CS-3). A call
    in a function whose target the scan could not resolve counts too, when it is not literal or its values differ."""
    out: list[str] = []
    for f in ctx.scan.module_options if ctx.scan is not None else []:
        if f.target != target.module and (f.target_resolved or f.scope == "module"):
            continue
        differs = f.options_text is not None or any(
            norm_value(target.options.get(k)) != norm_value(v) for k, v in f.options.items()
        )
        if differs:
            out.append(f"{ctx.rel(f.file)}:{f.line}")
    return out


def _merge_into_carrier(ctx: RuleContext, group: list[Build], carried: _Carried) -> tuple[list[Edit], str, str, str]:
    """(edits, applicability, review, target): the group's modules all compiled with the same options of their own,
    so every kernel joins the first-loaded module, which already carries them and loads where the first of the
    group loaded (merge_module.py's plan, as CS-12's merge), unless a late option call would rebuild it."""
    lit = literal_dict(carried.options)
    if carried.conflicts or len({_options_key(b) for b in group}) > 1:
        differ = ", ".join(carried.conflicts) or "their options"
        return [], "manual", (
            f"the modules set their own options, {differ} to different values ({lit}): one module has one option "
            "set, so a merge would change how some kernels compile"
        ), ""
    first = min(group, key=lambda b: b.seq)  # plan_merge's first choice, the only one it may take here
    plan = plan_merge(ctx, group, only_first=True)
    if plan.why_not:
        return [], "manual", (
            f"every module compiled with the same options of its own ({lit}), so the merge target is "
            f"{first.module}, which carries them; but {plan.why_not}"
        ), ""
    if plan.options:
        return [], "manual", f"merging into {plan.target} would change options: {'; '.join(plan.options)}", ""
    late = _late_option_calls(ctx, first)
    if late:
        return [], "manual", (
            f"{', '.join(late)} may set options on {plan.target} after it loaded, which its build did not carry: the "
            "merged module loads again after that and would rebuild (CS-3)"
        ), ""
    checks = []
    inert = [f"{ctx.rel(f.file)}:{f.line}" for f in carried.sites if f.target != plan.target]
    if inert:
        checks.append(
            f"{', '.join(dict.fromkeys(inert))} now set{'s' if len(inert) == 1 else ''} options on modules that hold "
            f"no kernels (the same values {plan.target} carries): harmless, can go"
        )
    hoisted = ", ".join(h.name for h in plan.hoists)
    if hoisted:
        checks.append(f"{hoisted} now made once, at import of the file that defines it")
    checks += [f"made before the merged module loads: {d}" for d in plan.early] + plan.early_review
    return plan.edits, "review" if checks else "automatic", "; ".join(checks), plan.target


def _merge_edits(ctx: RuleContext, group: list[Build], target: str, carried: _Carried) -> tuple[list[Edit], str, str]:
    """(edits, applicability, review): every kernel of the group joins the named module `target`, when that keeps
    every kernel declared before the new module's first launch and carries no options of their own (those go to
    `_merge_into_carrier`). The first is checked on the composed result: a module the measured creations show made
    after the group's first build is first made at import by the plan's candidates (fix/place/late_modules.py: the late
    import moved up, the kernels hoisted, or made from the run's record); the merge is manual only when none holds,
    naming each."""
    if ctx.scan is not None and (ctx.scan.module_info(target) is not None or ctx.scan.kernels_in_module(target)):
        return [], "manual", f"{target} is already a module of the project, so merging into it would change it"
    first = min(b.start_ms for b in group)
    created = {c.module: c.start_ms for c in ctx.report.module_creations}
    if any(b.module not in created for b in group):
        return [], "manual", (
            "the measurement does not show every file imported before the merged module's first launch (a kernel "
            "joining it later would rebuild it, CS-1)"
        )
    late = [b for b in group if created[b.module] >= first]
    early = made_before_load(ctx, late, target, {b.module for b in group}) if late else Early()
    if early.why_not:
        names = [b.module for b in late]
        one = len(names) == 1
        return [], "manual", (
            f"{', '.join(names)} {'is' if one else 'are'} created only after the first of these modules loads: a "
            f"merged module would be rebuilt when {'its' if one else 'their'} kernels join (CS-1), and no candidate "
            f"makes {'it' if one else 'them'} at import ({early.why_not})"
        )
    edits: list[Edit] = list(early.edits)
    makers = kernel_makers(ctx)
    for b in group:
        if b.module in early.hoisted:
            continue  # the moved text carries module="<target>"
        for k in b.kernels:
            kd = ctx.scan_kernel(k)
            src = helpers.parsed(ctx, kd.file) if kd is not None else None
            node = helpers.def_at(src[1], kd.line, kd.name) if src is not None and kd is not None else None
            if kd is not None and src is None:
                return [], "manual", f"no project source of {kd.file} to edit"
            if b.module in early.recorded:
                continue  # the run's-record candidate named the module on its definition (or the making call)
            if kd is None and exists_by(ctx, k.key, None, first, b.start_ms):
                got, why = call_module_edit(ctx, b, target, {g.module for g in group})
                if why:
                    return [], "manual", f"{k.key} is not a @wp.kernel of the project's files, and {why}"
                edits += [e for e in got if e not in edits]
                continue
            if kd is not None and node is not None and kd.nested and kd.form == "decorator" \
                    and exists_by(ctx, k.key, kd, first, b.start_ms):
                # made inside a function, but every time before the first load or after its own module built
                # (which did not rebuild it): it names the merged module where it is defined
                change = decorator_with(src[0], node, {"module": f'"{target}"'}, replace=True, makers=makers)
                e = replace_lines(ctx.sources, kd.file, change.start, change.end, change.new) if change else None
                if e is None:
                    return [], "manual", f"the decorator of {kd.name} ({kd.file}:{kd.line}) cannot be edited"
                if e not in edits:  # one definition that made the kernels of several modules: edited once
                    edits.append(e)
                continue
            if kd is None or node is None or kd.nested or kd.form != "decorator":
                name = kd.name if kd is not None else k.key
                return [], "manual", f"{name} is not a module-scope @wp.kernel of the project's own files"
            e = _decorator_edit(ctx, kd.file, node, target)
            if e is None:
                return [], "manual", f"the decorator of {kd.name} ({kd.file}:{kd.line}) is not one plain line"
            if e not in edits:
                edits.append(e)
    if late:  # the program changed before the merge: a person checks that step
        names = ", ".join(b.module for b in late)
        return edits, "review", (f"{names} {'was' if len(late) == 1 else 'were'} created only after the first of "
                                 f"these modules loaded; now: {'; '.join(early.done)}. " + "; ".join(early.review))
    return edits, "automatic", ""


def _finding(ctx: RuleContext, lifecycle: str, group: list[Build]) -> Finding | None:
    group = sorted(group, key=lambda b: b.seq)
    n = len(group)
    med = median([b.ms for b in group])
    fixed, fixed_basis = fixed_cost(ctx, group)
    saving = (n - 1) * fixed
    own = sum(b.ms for b in group)
    if own <= 0 or saving < MIN_MERGE_SHARE * own:
        return None  # the modules' own compile dwarfs what one fewer module saves
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
            f"load, and they share one option set; the fixed cost per module is {fixed_basis}",
            builds=[b.seq for b in group],
            ms=fixed,
        ),
    ]
    pkg = _common_package(modules)
    if not pkg:  # modules named by hand (module="contacts_write_a"): the package of the files that define them, so
        # the merged module's name is the project's, not a bare "kernels" another library could use too
        files = [kd.python_module for b in group for k in b.kernels if (kd := ctx.scan_kernel(k)) is not None]
        pkg = _common_package(files) if files else ""
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
    dist = _owner(ctx, group[0])
    fix = (
        f"Put {', '.join(kernels)} (same names and bodies) into one module, since they are loaded together in "
        f"{lifecycle}: {move}{named}. One build instead of {n}."
    )
    upstream = None
    if dist:
        edits: list[Edit] = []
        applicability, review = "manual", f"the modules are the installed {dist}'s: no application-side edit"
        places = [(helpers.dist_relative(k.file or ""), k.line or 0, b.module) for b in group for k in b.kernels]
        change = "give these kernels one named module (@wp.kernel(module=...)), since they are always loaded together"
        fix = (
            f"These {n} modules belong to the installed {dist}; do not edit it. "
            + helpers.app_side_options([dist])
            + " The upstream report with this measurement is ready for its maintainers."
        )
        upstream = helpers.upstream_report(
            dist, f"{n} small modules each pay the fixed per-module build cost", places, own,
            f"{n} modules, {fmt_ms(own)} of loads", change,
            estimated=f"merging them would save about {fmt_ms(saving)}, ({n} - 1) x a fixed per-module cost of "
            f"{fixed_basis}",
        )
    elif carried.options or carried.conflicts:
        edits, applicability, review, carrier = _merge_into_carrier(ctx, group, carried)
        if edits:
            fix += (
                f' The edit gives the other kernels @wp.kernel(module="{carrier}"), keeping them in their files: '
                f"{carrier} loads first and already compiles with {lit}, so every kernel keeps its options."
            )
    else:
        edits, applicability, review = _merge_edits(ctx, group, target, carried)
        if edits:
            fix += f' The edit gives each kernel @wp.kernel(module="{target}"), keeping them in their files.'
    return Finding(
        mechanism=MECHANISM,
        title=f"{n} one-lifecycle modules each pay the fixed per-module build cost",
        severity=ctx.severity_for(saving),
        confidence="medium", modules=modules, evidence=evidence, locations=dedupe_locations(locations), fix=fix,
        estimated_saving_ms=round(saving, 1),
        saving_basis=f"({n} - 1) x {fixed_basis}; the merged module still generates and compiles every kernel; "
        "reference sample",
        applicability=applicability, edits=edits, review=review, upstream=upstream,  # type: ignore[arg-type]
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
    groups = _groups(ctx, cands)
    found = [_finding(ctx, lifecycle, g) for lifecycle, g in groups]
    findings = [f for f in found if f is not None]
    if findings:
        return RuleResult(findings=findings)
    if groups:
        return ruled_out(
            MECHANISM,
            f"{len(groups)} group(s) of small one-lifecycle modules, but merging saves less than "
            f"{MIN_MERGE_SHARE:.0%} of their own compile (the fixed per-module cost is small against it)",
        )
    modules = {b.module for b in ctx.loads}
    why = (
        f"{len(cands)} small single-build module(s) share no launching function or file"
        if len(cands) >= MIN_MODULES
        else f"fewer than {MIN_MODULES} small modules built once from one function or file "
        f"({len(modules)} module(s) loaded, {len(cands)} small)"
    )
    return ruled_out(MECHANISM, why)
