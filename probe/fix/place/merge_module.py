"""One module instead of a few, so the CPU precompiled header stops paying (CS-12, after the rebuilds are gone).

On the CPU the header is built once per process and saves every module the full header parse. With a handful of
modules it pays, and CS-12 rules the header-off trade out; but when those modules are the project's own, each built
once and all declared before the first of them loads, the project can compile them as one module: that one build
parses the header once, and the header build no longer pays. This plans that merge, the edit a person doing it by
hand makes: module="<the first-loaded module>" on the decorator of every other kernel, so the module whose options
the project set (set_module_options in its file) keeps them, and the header switched off at the entry point.

Refused (a reason instead of edits) when a module rebuilds (its own mechanism comes first), is a module="unique"
family, is an installed library's, was created only after the first module loaded, or holds a kernel made by a
factory that no module-scope statement calls (a kernel made later would join the merged module late and rebuild it,
CS-1). Option differences are not refused: they are the review's first item, since the merged kernels build with
the target module's options.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ...dependency_advice import dependency_of
from ...hashdiff import unique_family, warp_key
from ...models import Build
from ...models.diagnosis import Edit
from ...models.scan import KernelDef
from ..edits import replace_lines
from ..transform import syntax
from ..transform.context import Project
from ..transform.decorators import decorator_with
from ..transform.hoist import Hoist
from .late_modules import made_before_load


@dataclass
class MergePlan:
    target: str = ""  # the module every kernel joins
    edits: list[Edit] = field(default_factory=list)  # the decorator edits (the header switch is the caller's)
    moved: list[str] = field(default_factory=list)  # the modules merged into `target`
    options: list[str] = field(default_factory=list)  # "fast_math: False -> True for a, b": what the merge changes
    why_not: str = ""
    hoists: list[Hoist] = field(default_factory=list)  # kernels made per call, moved to module scope to join it
    early: list[str] = field(default_factory=list)  # how late modules come to exist before it loads (late_modules)
    early_review: list[str] = field(default_factory=list)  # what a person checks of that step


def _created(ctx: Project) -> dict[str, float]:
    out: dict[str, float] = {}
    for c in ctx.report.module_creations:
        out.setdefault(c.module, c.start_ms)
    return out


def _made_at_import(ctx: Project, factory: str) -> bool:
    """Some module-scope statement of the project calls this kernel factory (its kernels exist after import)."""
    top = factory.split(".<locals>.")[0]
    return ctx.scan is not None and any(c.factory == top and c.scope == "module" for c in ctx.scan.factory_calls)


def _made_before(ctx: Project, key: str, start_ms: float, built_ms: float) -> bool:
    """The run recorded this kernel made before `start_ms` (the merged module's first load), so it would be in the
    merged module when it loads. A factory called again later makes the same kernel again (a memoized version, then
    the caller's own call, seen in curobo's pose cost); that is harmless only where the run shows it: made after its
    own module (built at `built_ms`, once) had loaded, which did not rebuild it."""
    made = [c for c in ctx.report.kernel_creations if c.key == key or warp_key(c.key) == key]
    if not made or min(c.start_ms for c in made) >= start_ms:
        return False
    return all(c.start_ms < start_ms or c.start_ms > built_ms for c in made)


def exists_by(ctx: Project, key: str, kd: KernelDef | None, loads: float, built_ms: float) -> bool:
    """The kernel exists when the merged module first loads: by the run's record of its creations where there is one
    (a module-scope call that runs after the first launch is not early enough), else by the scan (defined at module
    scope, or by a factory some module-scope statement calls)."""
    if any(c.key == key or warp_key(c.key) == key for c in ctx.report.kernel_creations):
        return _made_before(ctx, key, loads, built_ms)
    return kd is not None and (not kd.nested or _made_at_import(ctx, kd.enclosing_function or ""))


def _option_changes(target: Build, others: list[Build]) -> list[str]:
    changes: dict[tuple[str, str, str], list[str]] = {}
    for b in others:
        for k in sorted(set(b.options) | set(target.options)):
            old, new = b.options.get(k), target.options.get(k)
            if k != "block_dim" and old != new:
                changes.setdefault((k, str(old), str(new)), []).append(b.module)
    return [f"{k}: {old} -> {new} for the kernels of {', '.join(mods)}" for (k, old, new), mods in changes.items()]


def plan_merge(ctx: Project, cpu: list[Build], only_first: bool = False) -> MergePlan:
    """Merge the modules of `cpu` (the run's CPU module builds) into the first-loaded one (or, where that cannot take
    the others and `only_first` is unset, into the first of the others that can), or say why not.

    `only_first`: a later-loaded module as the target would load earlier than it did (where the first of them
    loaded), perhaps before the options the program sets on it have arrived; a caller that must keep every kernel's
    options exactly (CS-4's merge of modules carrying options of their own) takes the first-loaded one or nothing."""
    p = MergePlan()
    if not ctx.sources.available:
        p.why_not = "no project sources were given to edit"
        return p
    modules = [b.module for b in cpu]
    twice = sorted({m for m in modules if modules.count(m) > 1})
    if twice:
        p.why_not = f"{', '.join(twice)} built more than once: those rebuilds come first"
        return p
    if any(unique_family(b) is not None for b in cpu):
        p.why_not = 'a module="unique" family is among them (CS-9)'
        return p
    cpu = sorted(cpu, key=lambda b: b.seq)
    first = _plan_into(ctx, cpu, cpu[0])
    if not first.why_not or only_first:
        return first
    for target in cpu[1:]:  # the first-loaded module keeps its options; another target where it cannot take them
        other = _plan_into(ctx, cpu, target)
        if not other.why_not:
            return other
    return first


def _plan_into(ctx: Project, cpu: list[Build], target: Build) -> MergePlan:
    """The merge of `cpu`'s modules into `target`, or why not."""
    p = MergePlan()
    others = [b for b in cpu if b is not target]
    loads = min(b.start_ms for b in cpu)  # the merged module first loads where the first of them loaded
    created = _created(ctx)
    late = [b for b in others if created.get(b.module, float("inf")) >= loads]
    placed: set[str] = set()
    if late:  # made at import first, by the plan's candidates in order (late_modules.py), or why none holds
        early = made_before_load(ctx, late, target.module, {b.module for b in cpu})
        if early.why_not:
            names = [b.module for b in late]
            one = len(names) == 1
            p.why_not = (f"{', '.join(names)} {'is' if one else 'are'} created only after {target.module} loads, and "
                         f"no candidate makes {'it' if one else 'them'} at import ({early.why_not})")
            return p
        p.edits, p.hoists = list(early.edits), early.moved
        placed = early.hoisted | early.recorded  # their moved text or recorded definitions already name the target
        p.early = [d for d in early.done if d and not d.startswith("move ")]  # the hoists are said by the caller
        p.early_review = early.review
    if target.start_ms > loads:  # the target's own kernels now have to exist when the first of the others loaded
        if not target.kernels:
            p.why_not = f"the measurement names no kernel of {target.module}"
            return p
        for k in target.kernels:
            kd = ctx.scan_kernel(k)
            if not exists_by(ctx, k.key, kd, loads, target.start_ms):
                name = f"{kd.name} is made by {kd.enclosing_function}() when it is called" if kd is not None else (
                    f"{k.key} is not made at import")
                p.why_not = (f"{name}, after the first module loaded: it would join the merged module "
                             f"{target.module} late and rebuild it")
                return p
    for b in [b for b in others if b.module not in placed]:  # a late import moved up: its definitions name it
        if not b.kernels:
            p.why_not = f"the measurement names no kernel of {b.module}"
            return p
        for k in b.kernels:
            if dependency_of(ctx, k.file):
                p.why_not = f"{b.module} is an installed library's"
                return p
            kd = ctx.scan_kernel(k)
            src = syntax.parsed(ctx.sources, kd.file) if kd is not None else None
            node = syntax.def_at(src[1], kd.line, kd.name) if src is not None and kd is not None else None
            if kd is None or src is None or node is None or kd.form != "decorator":
                p.why_not = f"{k.key} of {b.module} is not a @wp.kernel definition in the project's files"
                return p
            if kd.nested and not exists_by(ctx, k.key, kd, loads, b.start_ms):
                p.why_not = (f"{kd.name} is made by {kd.enclosing_function}() when it is called, not at import: it "
                             "would join the merged module after it loaded")
                return p
            # a kernel whose factory computes its module (`module=modname`) gets the target instead
            change = decorator_with(src[0], node, {"module": f'"{target.module}"'}, replace=kd.nested)
            e = replace_lines(ctx.sources, kd.file, change.start, change.end, change.new) if change else None
            if e is None:
                p.why_not = f"the decorator of {kd.name} ({kd.file}:{kd.line}) names a module or cannot be edited"
                return p
            if e not in p.edits:
                p.edits.append(e)
    p.target, p.moved, p.options = target.module, [b.module for b in others], _option_changes(target, others)
    return p
