"""CS-9's plan for module="unique" families that vary at run time only by numbers they capture.

A kernel made per call with `module="unique"` and a captured bool, int or float (`warm`, `masked = mask is not None`,
a tile count) builds one module per value the run meets. Those versions vary at run time, so sharing one module as
they are would rebuild it for each new value (CS-1); but the values can be arguments instead: one kernel, defined at
import, takes them at each launch (`wp.static(warm)` becomes a plain `warm`, the same branch taken at run time), and
the versions become one module build. The transformation layer writes it (`transform.hoist` with `params`): only
when every launch of the kernel is in sight, each captured value is one the run recorded as a number, and the kernel
can move to module scope.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from ...models import Build
from ...models.scan import KernelDef
from ..transform.context import Project
from ..transform.decorators import moved_to
from ..transform.hoist import Hoist, hoist, hoist_edits, took_text
from ..transform.params import SCALARS


@dataclass
class ArgumentPlan:
    builds: list[Build]
    kernels: list[str]
    hoists: list[Hoist]
    why_not: str = ""


def scalar_families(ctx: Project, fams: list) -> list:
    """The families (of unique_modules._collect) kept unique for run-time variation whose every version captures
    only numbers (the closure types the hook recorded)."""
    out = []
    for f in fams:
        if f.verdict not in ("runtime", "lazy", "unknown") or not f.direct:
            continue
        infos = [k for b in f.builds for k in b.kernels]
        if infos and all(i.closure and all(t in SCALARS for t in i.closure.values()) for i in infos):
            out.append(f)
    return out


def plan_arguments(ctx: Project, fams: list) -> ArgumentPlan | None:
    """The plan for these families, or why not; None when there are fewer than two builds to save."""
    builds = sorted((b for f in fams for b in f.compiled), key=lambda b: b.seq)
    if len(builds) < 2:
        return None
    p = ArgumentPlan(builds=builds, kernels=[], hoists=[])
    taken: dict[str, set[str]] = defaultdict(set)
    done: set[tuple[str, int]] = set()
    for f in fams:
        info = next((k for b in f.builds for k in b.kernels), None)
        kdef: KernelDef | None = ctx.scan_kernel(info) if info is not None else None
        if kdef is None or not kdef.nested:
            p.why_not = f"{f.key}: its definition inside a function was not found in the scanned sources"
            return p
        if (kdef.file, kdef.line) in done:
            continue
        done.add((kdef.file, kdef.line))
        h = hoist(ctx, kdef, info, as_params=True, taken=taken[kdef.file])
        if h.why_not:
            p.why_not = f"{kdef.name}: {h.why_not}"
            return p
        h.text = moved_to(h.text, "None", kdef.module_arg_text if kdef.module_arg == "unique" else None)
        p.hoists.append(h)
        p.kernels.append(kdef.name)
    return p


def edits_and_text(ctx: Project, p: ArgumentPlan) -> tuple[list, str, str]:
    """(edits, the fix sentence, the review) of a plan without a failed precondition."""
    edits = hoist_edits(ctx, p.hoists) + [e for h in p.hoists for e in (h.params.edits if h.params else [])]
    took = "; ".join(took_text(h) for h in p.hoists if h.params is not None)
    names = ", ".join(p.kernels)
    fix = (f"The {len(p.builds)} unique modules are versions of {names} that differ only in numbers they capture. "
           f"The edit moves {names} to module scope with those numbers as kernel arguments ({took}) and lets them "
           "share their file's module, so the versions become one module built once.")
    review = (f"{took}: the values reach the kernels as arguments at each launch instead of compiled-in constants "
              "(a `wp.static(...)` of them is now a plain run-time branch or loop bound); the kernels share their "
              "file's module instead of one module per version")
    return edits, fix, review
