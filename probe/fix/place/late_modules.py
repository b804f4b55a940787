"""Modules of a merge that are created only after the merged module would first load, made to exist before it.

A merge (CS-4) holds only when every kernel it gathers exists when the merged module first loads: a kernel joining
later rebuilds it (CS-1). Today's program may not satisfy that while the program after the plan's first step does,
so the gate is checked on the composed result: each late module is made at import by the first candidate that
holds, and the merge goes ahead on top of it. The candidates, in order:

1. move the late import up: its kernels are module-scope definitions of a file that the run (the kernel's creation
   frames) or the scan shows first imported inside a function. The import runs at module scope of that function's
   file too (transform/imports.py), refused when the imported module imports that file back (a cycle: why the import
   is late), when the import runs more than definitions (transform/imports.import_work: a print, a loop, the
   program's own functions would run earlier), or when the importing file is not itself imported at start-up
   (reachable from the entry point by module-scope imports);
2. hoist: its kernels are defined inside a function and capture nothing; moved to module scope with
   module="<target>" on the moved decorator (hoisted_into; CS-12's merge uses these candidates too);
3. memoize: the module-level factory that makes them, cached and called at import with the argument lists the
   source's own calls give (memoize.made_at_import), the definitions given module="<target>";
4. from the run's record: the function whose call made them, called at import with the recorded arguments
   (memoize.made_at_import_from_run), the definitions given module="<target>" where they are written.

A module none of them realises keeps the merge manual, with every candidate's reason.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from ...dependency_advice import dependency_of
from ...models import Build, KernelCreation
from ...models.diagnosis import Edit
from ..edits import replace_lines
from ..transform import syntax
from ..transform.context import Project
from ..transform.decorators import decorator_with
from ..transform.hoist import Hoist, hoist, hoist_edits
from ..transform.imports import import_at_module_scope, import_work
from ..transform.memoize import made_at_import, made_at_import_from_run
from .entry_fix import scanned_entry
from .recorded_versions import late_import_site


@dataclass
class Early:
    """How the late modules of a merge come to exist before it loads, or why one cannot."""

    edits: list[Edit] = field(default_factory=list)
    review: list[str] = field(default_factory=list)
    done: list[str] = field(default_factory=list)  # one clause per late module
    hoisted: set[str] = field(default_factory=set)  # modules whose kernels moved (their decorator is in the moved text)
    recorded: set[str] = field(default_factory=set)  # modules made at import by a call (memoize, the run's record)
    moved: list[Hoist] = field(default_factory=list)  # the hoists among the edits (their text names the target)
    why_not: str = ""


def kernel_makers(ctx: Project) -> frozenset[str]:
    """The project's own kernel decorators that take a `module` parameter and hand a module= to `wp.kernel` inside
    (`stage_kernel(fn=None, *, module=None)`): a definition decorated by one can be given module="<target>" as it is
    given to `@wp.kernel` (the fix's own run proves the merged module is the one that builds)."""
    scan = ctx.scan
    if scan is None:
        return frozenset()
    out: set[str] = set()
    for k in scan.kernels:
        if k.form != "call" or not k.enclosing_function or "module" not in k.decorator_kwargs or k.module_arg:
            continue
        top = k.enclosing_function.split(".<locals>.")[0]
        src = syntax.parsed(ctx.sources, k.file)
        fn = next((n for n in src[1].body if isinstance(n, ast.FunctionDef) and n.name == top), None) if src else None
        if fn is not None and "module" in {a.arg for a in [*fn.args.args, *fn.args.kwonlyargs]}:
            out.add(top)
    return frozenset(out)


def _started(ctx: Project) -> set[str]:
    """Project modules imported at start-up: the entry module and what it imports at module scope, transitively
    (a package's parent runs first)."""
    scan = ctx.scan
    entry = scanned_entry(ctx)
    if scan is None or entry is None:
        return set()
    graph: dict[str, set[str]] = {}
    for imp in scan.imports:
        src = scan.module_of_file(imp.file)
        if src is not None and imp.scope == "module" and imp.project_module and not imp.type_checking:
            graph.setdefault(src.name, set()).add(imp.project_module)
    seen: set[str] = set()
    todo = [entry.name]
    while todo:
        m = todo.pop()
        if m in seen:
            continue
        seen.add(m)
        todo += graph.get(m, ())
        if "." in m:
            todo.append(m.rpartition(".")[0])
    return seen


def _import_sites(ctx: Project, b: Build) -> list[tuple[str, int]]:
    """(file, line) of the imports inside a function that first import the module's file: from the run's record of
    its kernels' creation, else the scan's function-level imports of that Python module."""
    sites = []
    for c in ctx.report.kernel_creations:
        if c.module == b.module:
            site = late_import_site(ctx, c)
            if site is not None:
                sites.append(site)
    if sites or ctx.scan is None:
        return list(dict.fromkeys(sites))
    defs = [ctx.scan_kernel(k) for k in b.kernels]
    pymods = {k.python_module for k in defs if k is not None}
    return list(dict.fromkeys((i.file, i.line) for i in ctx.scan.imports
                              if i.scope == "function" and i.project_module in pymods and not i.type_checking))


def _by_import(ctx: Project, b: Build, started: set[str]) -> tuple[list[Edit], list[str], str, str]:
    """(edits, review, done, why not) for candidate 1."""
    defs = [ctx.scan_kernel(k) for k in b.kernels]
    if not defs or any(k is None for k in defs):
        missing = next((k.key for k, d in zip(b.kernels, defs, strict=True) if d is None), b.module)
        return [], [], "", f"{missing}'s definition was not found in the scanned sources"
    if any(k.nested for k in defs if k is not None):
        return [], [], "", "its kernels are made inside a function when it is called, not by a file's import"
    sites = _import_sites(ctx, b)
    if not sites:
        return [], [], "", "no import inside a function brings in the file that defines its kernels"
    pymod = next(k.python_module for k in defs if k is not None)
    work = import_work(ctx, pymod)
    if work:
        return [], [], "", f"{work}: importing it earlier would run that earlier"
    whys = []
    scan = ctx.scan
    for file, line in sites:
        info = scan.module_of_file(file) if scan is not None else None
        if info is None or info.name not in started:
            whys.append(f"{file} (the file of the import at line {line}) is not itself imported at start-up")
            continue
        step = import_at_module_scope(ctx, file, line)
        if step.ok:
            return step.edits, step.review, step.done, ""
        whys.append(step.why_not)
    return [], [], "", "; ".join(whys)


def call_module_edit(ctx: Project, b: Build, target: str, group: set[str]) -> tuple[list[Edit], str]:
    """(edits, why not): the kernels of `b` the run recorded made by a `wp.Kernel(...)` / `wp.kernel(...)` call that
    names its module (`module=wp.get_module(f"...{key}")`: one module per generated kernel), that call given the
    merged module instead. Refused when that line also made kernels of modules outside the merge (they would join
    it too, after it loaded), or when two kernels it made share a key (in one module the later would replace the
    earlier)."""
    made = [c for c in ctx.report.kernel_creations if c.module == b.module]
    sites = {(c.file, c.line) for c in made}
    if not made or len(sites) != 1:
        return [], f"the run recorded no single line that made the kernels of {b.module}"
    ((file, line),) = sites
    rel = ctx.sources.rel(file)
    src = syntax.parsed(ctx.sources, rel) if rel is not None else None
    if rel is None or src is None:
        return [], f"{file} is not a file of the project"
    lines, tree = src
    call = next((n for n in ast.walk(tree) if isinstance(n, ast.Call) and n.lineno <= line <= (n.end_lineno or line)
                 and isinstance(n.func, ast.Attribute) and n.func.attr in ("Kernel", "kernel")
                 and any(k.arg == "module" for k in n.keywords)), None)
    if call is None:
        return [], f"{rel}:{line} (where the run made {b.module}'s kernels) is no wp.Kernel(...) call naming a module"
    others = sorted({c.module for c in ctx.report.kernel_creations if (c.file, c.line) == (file, line)} - group)
    if others:
        return [], (f"{rel}:{line} also makes the kernels of {', '.join(others)}, which would join the merged module "
                    "late")
    keys = [c.key for c in ctx.report.kernel_creations if (c.file, c.line) == (file, line)]
    if len(set(keys)) != len(set((c.key, c.module) for c in ctx.report.kernel_creations
                                 if (c.file, c.line) == (file, line))):
        return [], f"{rel}:{line} makes kernels of one key in several modules: in one module one would replace another"
    kw = next(k for k in call.keywords if k.arg == "module")
    v = kw.value
    if v.lineno != (v.end_lineno or v.lineno):
        return [], f"the module= of {rel}:{line} spans several lines"
    wp = ast.unparse(call.func.value)  # type: ignore[union-attr]
    text = lines[v.lineno - 1]
    new = text[: v.col_offset] + f'{wp}.get_module("{target}")' + text[v.end_col_offset:]
    e = replace_lines(ctx.sources, rel, v.lineno, v.lineno, new)
    return ([e], "") if e is not None else ([], f"{rel}:{line} cannot be edited")


def _late_made(ctx: Project, b: Build) -> list[KernelCreation]:
    return [c for c in ctx.report.kernel_creations if c.module == b.module and not c.at_import]


def _by_record(ctx: Project, b: Build, target: str, makers: frozenset[str],
               group: set[str]) -> tuple[list[Edit], str]:
    """(the edits naming the merged module, why not) for candidate 3; the calls at import are written once for
    every module it realises (made_before_load), so the versions of one factory share one cache and one block."""
    made = _late_made(ctx, b)
    if not made:
        return [], "the run recorded no late creation of its kernels"
    step = made_at_import_from_run(ctx, made)
    if not step.ok:
        return [], step.why_not
    return _named_target(ctx, b, target, makers, group)


def _by_memoize(ctx: Project, b: Build, target: str, makers: frozenset[str],
                group: set[str]) -> tuple[list[Edit], list[str], str, str]:
    """(the edits: the factory cached and called at import with the argument lists the source's calls give, and the
    definitions naming the merged module; why not) for the candidate between hoist and the run's record."""
    defs = [ctx.scan_kernel(k) for k in b.kernels]
    if not defs or any(k is None or not k.nested for k in defs):
        return [], [], "", "its kernels are not all made by a function of the project's files"
    step = made_at_import(ctx, [k for k in defs if k is not None],
                          ctx.scan.factory_calls if ctx.scan is not None else [])
    if not step.ok:
        return [], [], "", step.why_not
    named, why = _named_target(ctx, b, target, makers, group)
    return ([*step.edits, *named], step.review, step.done, "") if not why else ([], [], "", why)


def _named_target(ctx: Project, b: Build, target: str, makers: frozenset[str],
                  group: set[str]) -> tuple[list[Edit], str]:
    """The definitions of `b`'s kernels (or the call that makes them) given module="<target>"."""
    edits: list[Edit] = []
    for k in b.kernels:
        kd = ctx.scan_kernel(k)
        src = syntax.parsed(ctx.sources, kd.file) if kd is not None else None
        node = syntax.def_at(src[1], kd.line, kd.name) if src is not None and kd is not None else None
        if kd is None:  # made by a call (a generated kernel): that call names the merged module
            got, why = call_module_edit(ctx, b, target, group)
            if why:
                return [], f"{k.key} is made at import by the recorded call, but {why}"
            edits += [e for e in got if e not in edits]
            continue
        if src is None or node is None or kd.form != "decorator":
            return [], (f"{k.key} is made at import by the recorded call, but it is not a @wp.kernel definition of "
                        "the project's files whose module= an edit can name")
        change = decorator_with(src[0], node, {"module": f'"{target}"'}, replace=True, makers=makers)
        e = replace_lines(ctx.sources, kd.file, change.start, change.end, change.new) if change else None
        if e is None:
            return [], f"the decorator of {kd.name} ({kd.file}:{kd.line}) cannot be edited"
        edits.append(e)
    return edits, ""


def made_before_load(ctx: Project, late: list[Build], target: str, group: set[str]) -> Early:
    """Each of `late` (modules created after the group's first load) made at import by the first candidate that
    holds (see the module docstring), or `why_not` naming every candidate tried for the first one that none holds."""
    out = Early()
    started = _started(ctx)
    makers = kernel_makers(ctx)
    hoists: list[Hoist] = []
    recorded: list[Build] = []
    for b in late:
        whys: list[str] = []
        edits, review, done, why = _by_import(ctx, b, started)
        if not why:
            out.edits += [e for e in edits if e not in out.edits]
            out.review += review
            out.done.append(done)
            continue
        whys.append(f"move the late import up: {why}")
        moved, why = hoisted_into(ctx, [b], target, makers)
        if not why:
            hoists += moved
            out.hoisted.add(b.module)
            out.done.append(f"move {', '.join(h.name for h in moved)} to module scope")
            continue
        whys.append(f"hoist: {why}")
        edits, review, done, why = _by_memoize(ctx, b, target, makers, group)
        if not why:
            out.edits += [e for e in edits if e not in out.edits]
            out.review += [r for r in review if r not in out.review]
            out.recorded.add(b.module)
            if done not in out.done:
                out.done.append(done)
            continue
        whys.append(f"memoize: {why}")
        edits, why = _by_record(ctx, b, target, makers, group)
        if not why:
            out.edits += [e for e in edits if e not in out.edits]
            recorded.append(b)
            out.recorded.add(b.module)
            continue
        whys.append(f"from the run's record: {why}")
        out.why_not = f"{b.module}: " + "; ".join(whys)
        return out
    if recorded:  # one step for every module it realises
        step = made_at_import_from_run(ctx, [c for b in recorded for c in _late_made(ctx, b)])
        if not step.ok:
            out.why_not = f"{', '.join(b.module for b in recorded)}: from the run's record, together: {step.why_not}"
            return out
        out.edits = step.edits + [e for e in out.edits if e not in step.edits]
        out.review += step.review
        out.done.append(step.done)
    out.edits += hoist_edits(ctx, hoists)
    out.moved = hoists
    return out


def hoisted_into(ctx: Project, late: list[Build], target: str,
                 makers: frozenset[str] = frozenset()) -> tuple[list[Hoist], str]:
    """Modules made only when a function is called (a kernel defined inside it, capturing nothing): their kernels
    moved to module scope of their file with module="<target>" on the moved decorator, so they exist at import and
    join the merged module before it loads; ([], why not) when one cannot move."""
    out: list[Hoist] = []
    taken: dict[str, set[str]] = {}
    for b in late:
        if not b.kernels:
            return [], f"the measurement names no kernel of {b.module}"
        for k in b.kernels:
            kd = ctx.scan_kernel(k)
            if kd is None or not kd.nested or dependency_of(ctx, k.file):
                return [], f"{k.key} is not a kernel the project makes inside a function"
            h = hoist(ctx, kd, taken=taken.setdefault(kd.file, set()))
            src = syntax.parsed(ctx.sources, kd.file)
            node = syntax.def_at(src[1], kd.line, kd.name) if src is not None else None
            change = (decorator_with(src[0], node, {"module": f'"{target}"'}, makers=makers)
                      if node is not None and src else None)
            if h.why_not or change is None or src is None:
                return [], h.why_not or f"the decorator of {kd.name} names a module or cannot be edited"
            first = syntax.span_of(node)[0]  # type: ignore[arg-type]
            decorator = syntax.dedent_lines(change.new.splitlines(keepends=True), syntax.indent_of(src[0][first - 1]))
            if decorator is None:
                return [], f"the decorator of {kd.name} is not uniformly indented"
            h.text = decorator + h.text[change.end - change.start + 1:]
            out.append(h)
    return out, ""
