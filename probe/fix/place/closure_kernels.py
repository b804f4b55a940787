"""Kernels made inside a function (a factory or a method): the edit their maintainers would merge.

A kernel created per call of a factory joins the factory file's Warp module. When it is generic and its instances
arrive with launches (a contact writer's data struct, a per-call type), every new instance rebuilds that whole
shared module. Three edits can remove the rebuilds, and the code says which one fits:

- a `wp.overload` registration right after the definition needs the instance types there: a factory that never
  receives them (they come with the launch) cannot register them;
- building every variant before the first launch needs every variant known at import, which a factory called with
  run-time data is not;
- `module="unique"` on the closure's decorator puts each created kernel in a module of its own: its new instances
  then rebuild only that small module, and the shared module builds once. That is what fits a closure whose
  instances vary per call (and what a physics engine's maintainers merged for their narrow phase).

The decorator edit is the same text for the project's own file (an `Edit`) and for an installed dependency's file
(a diff in the upstream report, against the file as its maintainers name it: never for the user to apply).
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass

from ...models.diagnosis import Edit
from ...models.scan import KernelDef
from ..edits import replace_lines
from ..transform import syntax
from ..transform.context import Project
from ..transform.decorators import takes_module_options, unique_decorator


def carried_options(ctx: Project, kdef: KernelDef) -> dict[str, str]:
    """Options the shared module gets from `wp.set_module_options` at the top of the kernel's file: a module of its
    own starts from the defaults, so these must travel with the kernel (as module_options=)."""
    out: dict[str, str] = {}
    if ctx.scan is None:
        return out
    for f in ctx.scan.module_options:
        if f.api == "set_module_options" and f.scope == "module" and f.file == kdef.file and f.options:
            out.update({k: v for k, v in f.options.items() if k != "block_dim"})
    return out


def _extra_kwargs(ctx: Project, kdef: KernelDef) -> tuple[dict[str, str], str]:
    """(keywords to add beside module="unique", what a reviewer must check about options)."""
    opts = carried_options(ctx, kdef)
    if not opts:
        return {}, ""
    literal = "{" + ", ".join(f'"{k}": {v}' for k, v in opts.items()) + "}"
    if takes_module_options(ctx.report.warp_version):
        return {"module_options": literal}, f"the file's module options {literal} travel with it as module_options="
    return {}, (
        f"warp {ctx.report.warp_version} has no module_options= on @wp.kernel, so the file's module options {literal} "
        "do not reach the kernel's own module: confirm the results do not depend on them"
    )


def isolated_closure(ctx: Project, kdef: KernelDef) -> Edit | None:
    """`module="unique"` on a closure kernel's decorator (with its file's module options), as an edit; None when the
    decorator cannot take it or the file is not the project's."""
    src = syntax.parsed(ctx.sources, kdef.file)
    node = syntax.def_at(src[1], kdef.line, kdef.name) if src is not None else None
    if src is None or node is None:
        return None
    change = unique_decorator(src[0], node, _extra_kwargs(ctx, kdef)[0])
    if change is None:
        return None
    return replace_lines(ctx.sources, kdef.file, change.start, change.end, change.new)


@dataclass
class ClosurePlan:
    edits: list[Edit]
    applicability: str
    review: str
    prose: str


def _why_not_others(kdef: KernelDef, types: list[str]) -> str:
    factory = (kdef.enclosing_function or "its factory").split(".<locals>.")[0]
    shown = ", ".join(types[:3]) or "the launch's argument types"
    return (
        f"A wp.overload right after the definition does not fit: {factory}() never receives the instance types "
        f"({shown} arrive with each launch). Building every variant before the first launch does not fit either: "
        "the variants are known only to the callers, at run time."
    )


def instance_types(per_sig: dict[str, list[str] | None]) -> list[str]:
    """The argument types that make the instances differ (the varying positions of the recorded launches)."""
    lists = [d for d in per_sig.values() if d]
    if not lists:
        return []
    width = min(len(d) for d in lists)
    varying = [i for i in range(width) if len({d[i] for d in lists}) > 1]
    return list(dict.fromkeys(d[i] for d in lists for i in varying))


def own_closure_plan(
    ctx: Project, kdef: KernelDef, module: str, per_sig: dict[str, list[str] | None]
) -> ClosurePlan:
    """The project's own closure kernel: module="unique" on its decorator (review), or why no edit is made."""
    src = syntax.parsed(ctx.sources, kdef.file)
    node = syntax.def_at(src[1], kdef.line, kdef.name) if src is not None else None
    if src is None or node is None:
        return ClosurePlan([], "manual", f"{kdef.file}:{kdef.line} could not be read back as {kdef.name}", "")
    extra, options_note = _extra_kwargs(ctx, kdef)
    change = unique_decorator(src[0], node, extra)
    if change is None:
        why = (f"{kdef.name}'s decorator already names a module or is not a plain @wp.kernel: choose its module by "
               "hand")
        return ClosurePlan([], "manual", why, "")
    e = replace_lines(ctx.sources, kdef.file, change.start, change.end, change.new)
    if e is None:
        return ClosurePlan([], "manual", f"{kdef.file} is not a file of the project", "")
    factory = (kdef.enclosing_function or "the factory").split(".<locals>.")[0]
    checks = [
        f"each kernel {factory}() creates now builds in a module of its own the first time it launches (one small "
        "build per variant instead of a rebuild of the shared module)",
        "code that names the kernel's module (wp.get_module, set_module_options(module=...), force_load lists) no "
        f"longer reaches it through {module}",
    ]
    if options_note:
        checks.append(options_note)
    prose = (
        f"{kdef.name} is created inside {factory}() and is generic: its instances arrive with each launch, and each "
        f"new one rebuilds all of {module}. Give the closure a module of its own: add module=\"unique\" to its "
        f"decorator ({kdef.file}:{change.start}); its new instances then rebuild only that kernel, and {module} "
        f"builds once. {_why_not_others(kdef, instance_types(per_sig))}"
    )
    return ClosurePlan([e], "review", "; ".join(checks), prose)


def upstream_closure_change(
    ctx: Project, path: str, dist_path: str, line: int, name: str
) -> tuple[Edit, str, str] | None:
    """The decorator change on an installed file (read through the source view, never written): (the edit, with
    the path as its maintainers name it, `pkg/mod.py`; its unified diff `a/pkg/mod.py`; the directory that path is
    relative to). None when the file cannot be read or the decorator cannot take the change."""
    read = ctx.sources.installed(path)
    if read is None or not path.replace("\\", "/").endswith("/" + dist_path):
        return None
    lines, tree = read
    base = path[: -len(dist_path) - 1]
    node = syntax.def_at(tree, line, name)
    change = unique_decorator(lines, node, {}) if node is not None else None
    if change is None:
        return None
    old = "".join(lines[change.start - 1 : change.end])
    edit = Edit(file=dist_path, start_line=change.start, end_line=change.end, old=old, new=change.new)
    after = lines[: change.start - 1] + change.new.splitlines(keepends=True) + lines[change.end :]
    diff = difflib.unified_diff(lines, after, fromfile=f"a/{dist_path}", tofile=f"b/{dist_path}")
    return edit, "".join(ln if ln.endswith("\n") else ln + "\n" for ln in diff), base
