"""A kernel defined inside a function, moved to module scope of its file: one definition, made at import.

The move is made when the parsed source shows it is safe:

- the kernel's code reads nothing the function binds, except names the function imports (a late import, moved along
  as a module-level import when the imported module does not import this file back: a cycle is often why the import
  was late), and values `params` can turn into arguments;
- what its decorator and annotations read is bound above the place it moves to (they run at import);
- the kernel is defined once per call path: directly in the function, or in a branch of it (one kernel per branch,
  as a method that picks a kernel by an attribute does), or in a loop when it captures nothing from the loop.

Its name at module scope must be free; when it is not (another module-level name, or a sibling kernel with the same
name in another branch) it gets a numbered name and the function keeps `name = new_name` where the definition was,
so every path of the function still returns the kernel it returned before, now one made at import.
"""

from __future__ import annotations

import ast
import json
import re
from collections import defaultdict
from dataclasses import dataclass, field

from ...models import KernelInfo
from ...models.diagnosis import Edit
from ...models.scan import KernelDef
from ..edits import insert_before, replace_lines
from . import constants, params, syntax
from .context import Project
from .graph import import_targets, imports_back, package_of

_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
_LOOPS = (ast.For, ast.AsyncFor, ast.While)


@dataclass
class Hoist:
    """Moving one nested kernel to module scope: the lines to remove, the text to insert, or why not."""

    name: str  # its name at module scope (the original name, or a numbered one when that was taken)
    file: str
    original: str = ""  # its name inside the function
    insert_at: int = 0  # line before which the moved definition goes (before its outermost enclosing statement)
    text: list[str] = field(default_factory=list)  # the dedented definition
    imports: list[str] = field(default_factory=list)  # late imports carried to module scope, as written (dedented)
    remove: tuple[int, int] = (0, 0)
    keep: str = ""  # what replaces the removed lines ("", an indented `pass`, or `name = new_name`)
    why_not: str = ""  # non-empty: no edit, and this is the reason
    captures: bool = False  # it reads values its function binds: a version per call, not one definition
    params: params.ParamPlan | None = None  # those values taken as arguments instead, and its launch edits
    where: str = ""  # "a branch of f()", "a loop of f()" or "" (directly in f())
    fixed: dict[str, str] = field(default_factory=dict)  # captured names written into the kernel as their one value

    @property
    def renamed(self) -> bool:
        return bool(self.original) and self.name != self.original


def _container(parents: dict[ast.AST, ast.AST], node: ast.AST) -> tuple[list[ast.stmt], ast.AST] | None:
    """(the statement list that holds `node`, the node that owns that list)."""
    up = parents.get(node)
    if up is None:
        return None
    for name in ("body", "orelse", "finalbody"):
        block = getattr(up, name, None)
        if isinstance(block, list) and any(s is node for s in block):
            return block, up
    return None


def enclosing_function(parents: dict[ast.AST, ast.AST], node: ast.AST) -> tuple[ast.AST | None, str]:
    """(the nearest function around `node`, "branch" / "loop" / "" for what lies between them)."""
    kinds: set[str] = set()
    up = parents.get(node)
    while up is not None and not isinstance(up, _FUNCTIONS):
        if isinstance(up, (ast.ClassDef, ast.Module, ast.Lambda)):
            return None, ""
        kinds.add("loop" if isinstance(up, _LOOPS) else "branch")
        up = parents.get(up)
    return up, "loop" if "loop" in kinds else "branch" if kinds else ""


def _launched_in_its_iteration(parents: dict[ast.AST, ast.AST], fn: ast.AST, node: ast.FunctionDef) -> bool:
    """Every use of the kernel defined in a loop is a launch below it in the same loop body, so each launch passes
    the values of the pass that made the kernel: taken as arguments there, they are the values it captured (one
    kept for a later pass would get the later values: refused)."""
    loop = parents.get(node)
    while loop is not None and not isinstance(loop, _LOOPS):
        loop = parents.get(loop)
    if loop is None or not isinstance(fn, ast.FunctionDef):
        return False
    launches = params.local_launches(fn, node)  # the launches by name, when they are its only uses
    end = node.end_lineno or node.lineno
    return launches is not None and all(
        end < la.lineno and la.lineno <= (loop.end_lineno or loop.lineno)
        and any(a is loop for a in syntax.ancestors(parents, la)) for la in launches)


def _late_imports(fn: ast.AST, before: int) -> dict[str, ast.Import | ast.ImportFrom]:
    """Names a function binds by an import statement written above line `before` (a late import)."""
    out: dict[str, ast.Import | ast.ImportFrom] = {}
    for n in ast.walk(fn):
        if isinstance(n, (ast.Import, ast.ImportFrom)) and n.lineno < before:
            for a in n.names:
                out[(a.asname or a.name).split(".")[0]] = n
    return out


def hoist(ctx: Project, kdef: KernelDef, info: KernelInfo | None = None, as_params: bool = False,
          taken: set[str] | None = None, fixed: dict[str, str] | None = None, write_fixed: bool = False) -> Hoist:
    """Plan the move of a kernel defined inside a function to module scope of its file, or say why not (see the
    module's docstring). With `as_params`, values it captures become its arguments when `params` can pass them at
    every launch. `taken`: module-scope names other moves of the same plan already use (a numbered name is picked
    past them, and the one picked is added). `fixed`: captured names every call gives the same value, as the
    file writes it (`constants.fixed_values`): written into the kernel in place of the name; with `write_fixed`
    they are looked up here, and the move is refused with the reason when a captured value is not fixed."""
    fixed = fixed or {}
    h = Hoist(name=kdef.name, file=kdef.file, original=kdef.name)
    src = syntax.parsed(ctx.sources, kdef.file)
    if src is None:
        h.why_not = f"{kdef.file} could not be read as the project's Python source"
        return h
    lines, tree = src
    node = syntax.def_at(tree, kdef.line, kdef.name)
    parents = syntax.parents_of(tree)
    outer, where = enclosing_function(parents, node) if node is not None else (None, "")
    held = _container(parents, node) if node is not None else None
    if node is None or outer is None or held is None:
        h.why_not = f"the definition of {kdef.name} at {kdef.file}:{kdef.line} is not a statement of a function"
        return h
    assert isinstance(outer, _FUNCTIONS)
    h.where = f"a {where} of {outer.name}()" if where else ""
    captured: set[str] = set()
    fn: ast.AST | None = outer
    while isinstance(fn, (*_FUNCTIONS, ast.Lambda)):
        if not isinstance(fn, ast.Lambda):
            captured |= syntax.bound_names(fn, skip=node)
        fn = parents.get(fn)
    passed = _module_from_callers(node, kdef)
    reads = syntax.read_names(node) - {a.arg for a in [*node.args.args, *node.args.kwonlyargs]} - set(passed)
    imported = _late_imports(outer, node.lineno)
    carried = {n: imported[n] for n in reads & captured if n in imported and _only_import(outer, n, node)}
    if carried:
        stmts = list(dict.fromkeys(carried.values()))
        cycle = imports_back(ctx, kdef.file, [m for s in stmts for m in import_targets(s, package_of(ctx, kdef.file))])
        if cycle is not None:
            h.why_not = (f"{kdef.name} uses {', '.join(sorted(carried))}, imported inside {outer.name}(); {cycle} "
                         f"imports {kdef.file} back, so that import is late on purpose (a cycle) and cannot move to "
                         "module scope")
            return h
        for s in stmts:
            text = syntax.dedent_lines(lines[s.lineno - 1 : (s.end_lineno or s.lineno)],
                                       syntax.indent_of(lines[s.lineno - 1]))
            if text is None:
                h.why_not = f"the import at {kdef.file}:{s.lineno} is not uniformly indented"
                return h
            h.imports.append("".join(text).rstrip("\n") + "\n")
    outside = reads & captured - set(carried) - set(fixed)
    if outside and write_fixed:
        got = constants.fixed_values(ctx, outer, node, kdef.file, sorted(outside), kdef.enclosing_function or "")
        if isinstance(got, str):
            h.captures, h.why_not = True, got
            return h
        fixed = {**fixed, **got}
        outside -= set(got)
    if outside and not as_params:
        names = ", ".join(sorted(outside))
        h.captures = True
        h.why_not = (
            f"{kdef.name} reads {names} from {outer.name}() (captured when it is created), so its code depends on the "
            "call: move it by hand, passing those values as kernel arguments or wp.constant()s"
        )
        return h
    if where == "loop" and outside and not _launched_in_its_iteration(parents, outer, node):
        h.why_not = (f"{kdef.name} is created in a loop of {outer.name}() and reads what the loop changes, and not "
                     "every use of it is a launch later in the same pass of the loop")
        return h
    top = syntax.top_statement(tree, node.lineno)
    assert top is not None
    insert_at = syntax.span_of(top)[0]
    while insert_at > 1 and lines[insert_at - 2].lstrip().startswith("#"):
        insert_at -= 1  # keep a comment with the statement it describes
    bound = syntax.module_bindings(tree)
    used = set(bound) | (taken if taken is not None else set())
    again = kdef.name in syntax.bound_names(outer, skip=node)  # a sibling in another branch, or a later assignment
    if kdef.name in used or again:
        h.name = next(f"{kdef.name}_{k}" for k in range(2, 1000) if f"{kdef.name}_{k}" not in used)
    if taken is not None:
        taken.add(h.name)
    eager = set()
    for d in node.decorator_list:
        eager |= syntax.read_names(d)
    for a in [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs]:
        if a.annotation is not None:
            eager |= syntax.read_names(a.annotation)
    for d in [*node.args.defaults, *node.args.kw_defaults]:
        if d is not None:
            eager |= syntax.read_names(d)
    in_function = sorted(eager & captured - set(carried) - set(fixed) - set(passed))
    if in_function:
        h.why_not = (f"its decorator or annotations read {', '.join(in_function)}, which {outer.name}() binds: the "
                     "function chooses them per call")
        return h
    for name in eager & set(fixed):  # a fixed value read by an annotation runs at import: its names must exist
        eager |= syntax.read_names(ast.parse(fixed[name], mode="eval"))
    late = sorted(n for n in eager - set(carried) - set(fixed) if bound.get(n, 0) >= insert_at)
    if late:
        h.why_not = (
            f"its decorator or annotations use {', '.join(late)}, bound at module scope only after line {insert_at}"
        )
        return h
    first, last = syntax.span_of(node)
    indent = syntax.indent_of(lines[first - 1])
    text = syntax.dedent_lines(lines[first - 1 : last], indent)
    if text is None:
        h.why_not = f"the lines of {kdef.name} are not uniformly indented (a multi-line string?)"
        return h
    for name, (value, line) in passed.items():  # `module=module`: the literal every call passes, written in
        row = line - first
        text[row] = re.sub(rf"\bmodule\s*=\s*{re.escape(name)}(?![\w.])", f"module={value}", text[row], count=1)
    if fixed:
        text = constants.substitute(text, node, first, indent, {k: v for k, v in fixed.items() if k in reads})
        h.fixed = {k: v for k, v in fixed.items() if k in reads}
    def renamed(rows: list[str]) -> list[str]:
        """The def line with the new name; applied last, since the parameters' columns are the original's."""
        if not h.renamed:
            return rows
        rows, row = list(rows), node.lineno - first
        rows[row] = re.sub(rf"\bdef\s+{re.escape(kdef.name)}\b", f"def {h.name}", rows[row], count=1)
        return rows

    block, _owner = held
    rest = [s for s in block if s is not node]
    end = last
    later = [s for s in rest if syntax.span_of(s)[0] > last]
    if end < len(lines) and not lines[end].strip() and later:
        end += 1  # the blank line after the definition goes with it
    h.insert_at, h.text, h.remove = insert_at, renamed(text), (first, end)
    if h.renamed:
        h.keep = " " * indent + f"{kdef.name} = {h.name}\n"
    else:
        h.keep = "" if rest else " " * indent + "pass\n"
    taken_values = sorted(outside)
    if taken_values:
        h.params = params.plan(ctx, info, outer, node, kdef.file, taken_values, kdef.enclosing_function or "")
        h.why_not = h.params.why_not
        if not h.why_not:
            h.text = renamed(params.with_params(text, node, indent, h.params.params, h.params.position))
            if h.renamed:  # the launches now run the kernel under its new name: the check sets the values aside there
                for e in h.params.edits:
                    e.launch_args = {h.name if k == kdef.name else k: v for k, v in e.launch_args.items()}
                    e.launch_args_at = {h.name if k == kdef.name else k: v for k, v in e.launch_args_at.items()}
    return h


def _module_from_callers(node: ast.AST, kdef: KernelDef) -> dict[str, tuple[str, int]]:
    """{parameter: (the literal it is written as, the keyword's line)} when the decorator's `module=` names the
    making function's parameter that every scanned call passes as one literal (scan/link.py) and nothing else in the
    kernel reads it: the moved definition is written with that literal, so the name need not exist at module scope."""
    name = kdef.module_param
    if not kdef.module_from_callers or name is None or kdef.module_arg is None:
        return {}
    uses = [n for n in ast.walk(node) if isinstance(n, ast.Name) and n.id == name]
    in_keyword = [kw.value for d in getattr(node, "decorator_list", []) if isinstance(d, ast.Call)
                  for kw in d.keywords if kw.arg == "module" and isinstance(kw.value, ast.Name) and kw.value.id == name]
    if len(uses) != 1 or len(in_keyword) != 1:
        return {}
    return {name: (json.dumps(kdef.module_arg), in_keyword[0].lineno)}


def _only_import(fn: ast.AST, name: str, kernel: ast.AST) -> bool:
    """`name` is bound in the function by imports only (not also assigned), so the module-level import is the same
    object at every call."""
    stores = [n for n in ast.walk(fn) if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store)]
    return not stores


def siblings(ctx: Project, kdef: KernelDef) -> list[KernelDef]:
    """The other kernels the same function defines (a method that picks one per branch): moved together, so the
    module has its final kernel set whichever branch runs first."""
    if ctx.scan is None or not kdef.enclosing_function:
        return []
    return [k for k in ctx.scan.kernels if k.file == kdef.file and k.enclosing_function == kdef.enclosing_function
            and k.line != kdef.line]


def took_text(h: Hoist) -> str:
    p = h.params
    assert p is not None
    args = ", ".join(f"{n}: {t}" for n, t in p.params)
    return f"{h.name} takes {args}, passed at {', '.join(p.launches)}"


def moved_text(h: Hoist) -> str:
    """What the move did to one kernel, for the review: its new name, the imports that came along, the values
    written in."""
    parts = []
    if h.fixed:
        vals = ", ".join(f"{k} = {v}" for k, v in h.fixed.items())
        parts.append(f"{h.name} names the value{'s' if len(h.fixed) > 1 else ''} every call gave it ({vals}): its "
                     "factory's parameter no longer changes the kernel, so a new caller passing another value gets "
                     "this one")
    if h.renamed:
        parts.append(f"{h.original} becomes {h.name} at module scope (the name was taken)")
    if h.imports:
        parts.append(f"{h.name}'s late import{'s' if len(h.imports) > 1 else ''} "
                     f"({'; '.join(i.strip() for i in h.imports)}) now run{'s' if len(h.imports) == 1 else ''} at "
                     "import of its file too")
    return "; ".join(parts)


def hoist_edits(ctx: Project, plans: list[Hoist]) -> list[Edit]:
    """One insertion per target line (the carried imports first, then the definitions in source order), one
    replacement per moved definition."""
    edits: list[Edit] = []
    by_target: dict[tuple[str, int], list[Hoist]] = defaultdict(list)
    for h in plans:
        by_target[(h.file, h.insert_at)].append(h)
    for (file, line), group in by_target.items():
        group = sorted(group, key=lambda h: h.remove)
        imports = list(dict.fromkeys(i for h in group for i in h.imports))
        body = "\n\n".join("".join(h.text).rstrip("\n") + "\n" for h in group)
        e = insert_before(ctx.sources, file, line, "".join(imports) + ("\n\n" if imports else "") + body + "\n\n")
        if e is not None:
            edits.append(e)
    for h in plans:
        e = replace_lines(ctx.sources, h.file, h.remove[0], h.remove[1], h.keep)
        if e is not None:
            if not h.keep:
                e.new = ""
            edits.append(e)
    return edits
