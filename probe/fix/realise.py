"""Kernels made before their module first loads, realised kernel by kernel by the first candidate that holds.

The module plan (module_plan.py) says where the kernels go; this says how each comes to exist at import. A kernel
is reached through the function that makes it, and each such function (a factory, a method, a closure) is tried
with the candidates in order, each checking its own preconditions on the source and on the run's record:

1. memoize from the source's calls: a module-level factory cached (`functools.lru_cache`) and called at import
   with the argument lists its calls write (memoize.made_at_import);
2. hoist: the definition moved to module scope, when it reads nothing the function binds, a late import it needs
   moving along (hoist.py); a method's kernel, picked per branch, moves with its siblings;
3. memoize from the run's record: the innermost module-level app function whose call made the kernel, called at
   import with the arguments the run recorded, refused when that call (or a frame between it and the kernel)
   would run the program's own work (memoize.made_at_import_from_run, memoize.chain_work).

A function none of them realises leaves the step failed with every candidate's reason, so the finding says what
was tried. A hoisted definition's decorator is rewritten in the moved text (it is not edited where it was: the move
removes those lines), so the module step skips it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from ..models import KernelCreation
from ..models.diagnosis import Edit
from ..models.scan import FactoryCallFact, KernelDef
from .transform.context import Project
from .transform.decorators import moved_to
from .transform.hoist import Hoist, hoist, hoist_edits, moved_text, siblings
from .transform.memoize import made_at_import, made_at_import_from_run
from .transform.plan import Step, failed

STEP = "create at import"


@dataclass
class Realised:
    step: Step
    hoisted: list[Hoist] = field(default_factory=list)
    how: dict[str, str] = field(default_factory=dict)  # maker -> the candidate that realised it

    def moved(self, k: KernelDef) -> bool:
        return any(h.file == k.file and h.original == k.name for h in self.hoisted)


def _same(a: Edit, b: Edit) -> bool:
    """Two makers of one file each add the same line (`import functools`): written once."""
    return (a.file, a.start_line, a.end_line, a.new, a.create) == (b.file, b.start_line, b.end_line, b.new, b.create)


def _maker(k: KernelDef) -> str:
    return (k.enclosing_function or "").split(".<locals>.")[0]


def _hoist_group(ctx: Project, group: list[KernelDef], target_value: str) -> tuple[list[Hoist], str]:
    """Every kernel of one making function moved to module scope (with its unique siblings), or why not."""
    taken: set[str] = set()
    plans: list[Hoist] = []
    seen: set[int] = set()
    todo = list(group)
    for k in group:
        todo += [s for s in siblings(ctx, k) if s.module_arg == "unique" and s not in todo]
    for k in todo:
        if k.line in seen:
            continue
        seen.add(k.line)
        h = hoist(ctx, k, taken=taken)
        if h.why_not:
            return [], f"{k.name}: {h.why_not}"
        h.text = moved_to(h.text, target_value)
        plans.append(h)
    return plans, ""


def create_before_load(ctx: Project, nested: list[KernelDef], calls: list[FactoryCallFact],
                       versions_made: dict[str, int], creations: Callable[[list[KernelDef]], list[KernelCreation]],
                       target_value: str) -> Realised:
    """The "create at import" step for `nested` kernels, one making function at a time (see the module docstring).
    `creations(defs)`: the run's records of the late kernels among `defs`; `target_value`: what `module=` of a moved
    definition becomes."""
    groups: dict[tuple[str, str], list[KernelDef]] = {}
    for k in nested:
        groups.setdefault((k.file, _maker(k)), []).append(k)
    out = Realised(step=Step(what=STEP))
    done: list[str] = []
    for (file, maker), group in groups.items():
        whys: list[str] = []
        step: Step | None = None
        if maker and "." not in maker:
            got = made_at_import(ctx, group, calls, versions_made)
            if got.ok:
                step, out.how[maker] = got, "memoize from the source's calls"
            else:
                whys.append(f"memoize: {got.why_not}")
        if step is None:
            plans, why = _hoist_group(ctx, group, target_value)
            if plans:
                step = Step(what=STEP, edits=hoist_edits(ctx, plans),
                            done=f"move {', '.join(h.name for h in plans)} out of {maker}() to module scope")
                step.review += [t for t in (moved_text(h) for h in plans) if t]
                out.hoisted += plans
                out.how[maker] = "hoist"
            else:
                whys.append(f"hoist: {why}")
        if step is None:
            made = creations(group)
            got = made_at_import_from_run(ctx, made) if made else failed(STEP, "the run recorded no late creation")
            if got.ok:
                step, out.how[maker] = got, "memoize from the run's record"
            else:
                whys.append(f"from the run's record: {got.why_not}")
        if step is None:
            return Realised(step=failed(STEP, f"{maker or file}(): " + "; ".join(whys)))
        out.step.edits += [e for e in step.edits if not any(_same(e, x) for x in out.step.edits)]
        out.step.review += step.review
        if step.done:
            done.append(step.done)
    out.step.done = "; ".join(done)
    return out
