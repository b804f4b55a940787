"""The versions a run made late, as the plan that makes them at import: for CS-1 and CS-6 findings whose kernels
the scan cannot place (renamed before decoration, built by a helper, registered inside a function).

The hook records every kernel and generic instance the app made, with the app's frames that made it and their
arguments (`Report.kernel_creations`). Those made after their module first loaded are the ones that rebuilt it;
the transformation layer picks the function whose call made them and writes that call at import
(`transform.memoize.made_at_import_from_run`). Kernels Warp's `wp.map` made are written as map calls at import
instead (`map_kernels.py`), from what the hook recorded map was given.
"""

from __future__ import annotations

import ast

from ...hashdiff import warp_key
from ...models import KernelCreation
from ..transform import syntax
from ..transform.context import Project
from ..transform.imports import import_at_module_scope
from ..transform.memoize import made_at_import_from_run
from ..transform.plan import Step
from .map_kernels import map_kernels_at_import


def late_creations(ctx: Project, module: str, keys: set[str] | None = None,
                   kind: str | None = None) -> list[KernelCreation]:
    """Kernels (or instances, `kind="overload"`) of `module` the run made after the module first loaded."""
    starts = [b.start_ms for b in ctx.report.builds if b.module == module and b.start_ms > 0]
    if not starts:
        return []
    first = min(starts)
    out = []
    for c in ctx.report.kernel_creations:
        # a module="unique" kernel's module is named after its hash only when it loads: `key` then `key_<hash>`
        same = c.module == module or (module.startswith(c.module + "_") and c.module == c.key)
        if not same or c.start_ms <= first or (kind is not None and c.made_by != kind):
            continue
        if keys is not None and c.key not in keys and warp_key(c.key) not in keys:
            continue
        out.append(c)
    return out


def late_import_site(ctx: Project, c: KernelCreation) -> tuple[str, int] | None:
    """(file, line) of the import inside a function whose module body made this kernel or instance, if it was."""
    frames = [{"file": c.file, "line": c.line, "function": c.function}, *c.outer]
    for i, f in enumerate(frames[:-1]):
        if f.get("function") != "<module>":
            continue
        importer = frames[i + 1]
        rel = ctx.sources.rel(str(importer.get("file", "")))
        if rel is None or importer.get("function") == "<module>" or importer.get("at_import"):
            return None
        return rel, int(importer.get("line", 0))
    return None


def versions_plan(ctx: Project, module: str, keys: set[str] | None = None, kind: str | None = None) -> Step | None:
    """The step that makes at import what the run made late in `module`: kernels Warp's map made, as map calls at
    import (map_kernels.py); else the late import that made it, run at module scope too; else the function whose call
    made it, called at import (a failure then names the map candidate's reason too). None when the run recorded
    nothing late (an older report, or a hook without the record)."""
    late = late_creations(ctx, module, keys, kind)
    if not late or not ctx.sources.available:
        return None
    mapped = map_kernels_at_import(ctx, module, late)  # Warp's map made them: its kernels made at import
    if mapped is not None and mapped.ok:
        return mapped
    sites = {late_import_site(ctx, c) for c in late}
    if None not in sites:
        steps = [import_at_module_scope(ctx, file, line) for file, line in sorted(sites)]  # type: ignore[misc]
        bad = next((s for s in steps if s.why_not), None)
        if bad is not None:
            return bad
        return Step(what=steps[0].what, edits=[e for s in steps for e in s.edits],
                    review=[r for s in steps for r in s.review], done="; ".join(s.done for s in steps))
    step = made_at_import_from_run(ctx, late)
    if mapped is not None and not step.ok:  # neither: both reasons
        return Step(what=step.what, why_not=f"wp.map's kernels at import: {mapped.why_not}; the calls that made "
                                            f"them: {step.why_not}")
    return step


def memoize_why_not(ctx: Project, made: list[KernelCreation]) -> str:
    """Why no cache can make these kernels (ones the scan did not place) at import from the source's own calls, read
    from the frames that made them and the definitions there: the kernel made by a Warp function (wp.map) rather
    than a factory of the project's own, the making function a method or closure, or called with run-time data
    (an array) no call at import can name. "" when none of these holds (the run's record is then the candidate)."""
    why: list[str] = []
    for file, function in dict.fromkeys((c.file, c.function) for c in made):
        c = next(x for x in made if (x.file, x.function) == (file, function))
        rel = ctx.sources.rel(file) or file
        src = syntax.parsed(ctx.sources, rel) if ctx.sources.rel(file) is not None else None
        top = src is not None and any(isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == function
                                      for n in src[1].body)
        parts = []
        if c.via is not None:
            parts.append(f"{c.key} is made by Warp's {c.via.function}() called in {function}(), not by a factory "
                         "of the project's own a cache can wrap")
        if not top:
            parts.append(f"{function}() is not a module-level function of {rel} a cache can wrap (a method or a "
                         "closure)")
        data = [f"{name} = a {a.get('type', 'value')}" for name, a in c.args.items() if a.get("kind") == "other"]
        if data:
            parts.append(f"{function}() is fed run-time data ({', '.join(data)}), which no call at import can name")
        if parts:
            why.append("; ".join(parts))
    return "; ".join(why)
