"""Kernels made before their module first loads, realised kernel by kernel by the first candidate that holds.

The module plan (module_plan.py) says where the kernels go; this says how each comes to exist at import. A kernel
is reached through the function that makes it, and each such function (a factory, a method, a closure) is tried
with the candidates in order, each checking its own preconditions on the source and on the run's record:

1. memoize from the source's calls: a module-level factory cached (`functools.lru_cache`) and called at import
   with the argument lists its calls write (memoize.made_at_import);
2. hoist: the definition moved to module scope, when it reads nothing the function binds, or what it reads every
   call gives the same value, written into the kernel (constants.py), a late import it needs moving along
   (hoist.py); a method's kernel, picked per branch, moves with its siblings;
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
        h = hoist(ctx, k, taken=set(taken))
        if h.captures:  # the values it captures, when every call gives the same one, written into the kernel
            fixed = hoist(ctx, k, taken=set(taken), write_fixed=True)
            h = fixed if not fixed.why_not else h
            if fixed.why_not:
                h.why_not += f"; with its captured values written in: {fixed.why_not}"
        if h.why_not:
            return [], f"{k.name}: {h.why_not}"
        taken.add(h.name)
        h.text = moved_to(h.text, target_value, k.module_arg_text if k.module_arg == "unique" else None)
        plans.append(h)
    return plans, ""


Choice = tuple[str, Step, list[Hoist]]  # (the candidate's name, its step, the definitions it moves)


def _choices(ctx: Project, maker: str, group: list[KernelDef], calls: list[FactoryCallFact],
             versions_made: dict[str, int], creations: Callable[[list[KernelDef]], list[KernelCreation]],
             target_value: str) -> tuple[list[Choice], list[str]]:
    """Every candidate that realises `group` (one making function's kernels), in order, and why the others do not."""
    held: list[Choice] = []
    whys: list[str] = []
    if maker and "." not in maker:
        got = made_at_import(ctx, group, calls, versions_made)
        if got.ok:
            held.append(("memoize from the source's calls", got, []))
        else:
            whys.append(f"memoize: {got.why_not}")
    else:  # named, so a finding left without an edit says every candidate it tried
        whys.append(f"memoize: {maker or 'its maker'}() is not a module-level function a cache can wrap")
    plans, why = _hoist_group(ctx, group, target_value)
    if plans:
        step = Step(what=STEP, edits=hoist_edits(ctx, plans),
                    done=f"move {', '.join(h.name for h in plans)} out of {maker}() to module scope")
        step.review += [t for t in (moved_text(h) for h in plans) if t]
        held.append(("hoist", step, plans))
    else:
        whys.append(f"hoist: {why}")
    made = creations(group)
    got = made_at_import_from_run(ctx, made) if made else failed(STEP, "the run recorded no late creation")
    if got.ok:
        held.append(("memoize from the run's record", got, []))
    else:
        whys.append(f"from the run's record: {got.why_not}")
    return held, whys


def _compose(picked: dict[str, Choice]) -> Realised:
    out = Realised(step=Step(what=STEP))
    done: list[str] = []
    for maker, (how, step, hoisted) in picked.items():
        out.step.edits += [e for e in step.edits if not any(_same(e, x) for x in out.step.edits)]
        out.step.review += step.review
        out.hoisted += hoisted
        out.how[maker] = how
        if step.done:
            done.append(step.done)
    out.step.done = "; ".join(done)
    return out


def create_before_load(ctx: Project, nested: list[KernelDef], calls: list[FactoryCallFact],
                       versions_made: dict[str, int], creations: Callable[[list[KernelDef]], list[KernelCreation]],
                       target_value: str, alternatives: int = 0) -> tuple[Realised, list[tuple[str, Realised]]]:
    """The "create at import" step for `nested` kernels, one making function at a time (see the module docstring),
    and up to `alternatives` other realisations: the same plan with one making function realised by its next
    candidate that holds (`fix` measures them beside it and keeps the best). `creations(defs)`: the run's records of
    the late kernels among `defs`; `target_value`: what `module=` of a moved definition becomes."""
    groups: dict[tuple[str, str], list[KernelDef]] = {}
    for k in nested:
        groups.setdefault((k.file, _maker(k)), []).append(k)
    options: dict[str, list[Choice]] = {}
    for (file, maker), group in groups.items():
        held, whys = _choices(ctx, maker, group, calls, versions_made, creations, target_value)
        if not held:
            return Realised(step=failed(STEP, f"{maker or file}(): " + "; ".join(whys))), []
        options[maker or file] = held
    first = {maker: held[0] for maker, held in options.items()}
    swaps = [(maker, choice) for maker, held in options.items() for choice in held[1:]]
    variants: list[tuple[str, dict[str, Choice]]] = []
    second = {maker: held[1] for maker, held in options.items() if len(held) > 1}
    if len(second) > 1:  # every function that can, by its next candidate: the one other whole plan
        variants.append((", ".join(f"{m}() by {c[0]}" for m, c in second.items()) + " instead",
                         {**first, **second}))
    variants += [(f"{maker}() by {choice[0]} instead of {options[maker][0][0]}", {**first, maker: choice})
                 for maker, choice in swaps]
    return _compose(first), [(label, _compose(picked)) for label, picked in variants[:alternatives]]
