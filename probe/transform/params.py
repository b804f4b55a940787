"""A closure kernel's captured values as kernel arguments: one definition at import instead of a kernel per call.

A kernel created inside a factory or a method that reads a value of its function (`gain = self.gain`, a factory
parameter) is a new kernel on every call: each one rebuilds its Warp module (or, with module="unique", builds a
module of its own). When the captured values are plain numbers, the kernel can take them as arguments instead:
defined once at module scope it joins its module at import, the module builds once, and every launch passes the
values it used to capture. That needs every launch of the factory's kernel in sight, so the edit is made only when

- each captured name is a parameter of the factory, or one plain assignment in it from its parameters (`x = self.x`),
- the run recorded the captured values as bool, int or float (the closure's cells, read by the hook),
- every call of the factory in the project is the kernel argument of a `wp.launch` whose `inputs=` is a list and
  that has no `outputs=`/`adj_inputs=` (the new arguments go last), and the values read at those calls are names,
  attributes and literals (evaluated once either way).

The moving itself (name free at module scope, decorator names bound above) is the hoist CS-1 already checks.
"""

from __future__ import annotations

import ast
import copy
import re
from dataclasses import dataclass, field

from ..edits import replace_lines
from ..models import KernelInfo
from ..models.diagnosis import Edit
from ..scan.common import last_ident
from . import syntax
from .context import Project

SCALARS = {"float": "float", "int": "int", "bool": "bool"}  # a captured value's Python type -> the argument's type


@dataclass
class ParamPlan:
    """The values a moved closure kernel takes as arguments, the edits at its launches, or why not."""

    params: list[tuple[str, str]] = field(default_factory=list)  # (name, annotation), in the order appended
    edits: list[Edit] = field(default_factory=list)  # launch sites and assignments that only fed the closure
    launches: list[str] = field(default_factory=list)  # file:line of each rewritten launch
    why_not: str = ""


def captured_sources(fn: ast.FunctionDef, kernel: ast.FunctionDef, names: list[str]) -> dict[str, ast.expr | str] | str:
    """Captured name -> its parameter's name (str) or the expression it is assigned from; a reason when neither."""
    params = [a.arg for a in [*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs]]
    out: dict[str, ast.expr | str] = {}
    for name in names:
        stores = [n for n in ast.walk(fn) if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store)]
        if name in params and not stores:
            out[name] = name
            continue
        assign = next((s for s in fn.body if isinstance(s, ast.Assign) and len(s.targets) == 1
                       and isinstance(s.targets[0], ast.Name) and s.targets[0].id == name), None)
        if assign is None or len(stores) != 1 or assign.lineno > kernel.lineno or not _plain(assign.value):
            return f"{name} is not a parameter of {fn.name}() or one plain assignment from them before the kernel"
        if not syntax.read_names(assign.value) <= set(params):
            return f"{name} is computed from more than {fn.name}()'s parameters"
        out[name] = assign.value
    return out


def _plain(e: ast.expr) -> bool:
    """Names, attribute chains and literals: reading them again at the launch gives the value the call read."""
    if isinstance(e, ast.UnaryOp):
        return _plain(e.operand)
    return isinstance(e, (ast.Name, ast.Constant)) or (isinstance(e, ast.Attribute) and _plain(e.value))


class _Rename(ast.NodeTransformer):
    def __init__(self, by: dict[str, ast.expr]) -> None:
        self.by = by

    def visit_Name(self, node: ast.Name) -> ast.expr:
        return self.by.get(node.id, node)


def _launch_of(parents: dict[ast.AST, ast.AST], call: ast.Call) -> ast.Call | None:
    """The `wp.launch(...)` whose kernel argument is `call`."""
    up = parents.get(call)
    if isinstance(up, ast.keyword) and up.arg == "kernel":
        up = parents.get(up)
    elif not (isinstance(up, ast.Call) and up.args and up.args[0] is call):
        return None
    return up if isinstance(up, ast.Call) and last_ident(up.func) == "launch" else None


def _inputs(launch: ast.Call) -> ast.List | ast.Tuple | str:
    kw = {k.arg: k.value for k in launch.keywords}
    if None in kw or "outputs" in kw or "adj_inputs" in kw or len(launch.args) > 3:
        return "a launch passes outputs=, adjoint inputs or **kwargs, after which the new arguments cannot go last"
    given = kw.get("inputs", launch.args[2] if len(launch.args) > 2 else None)
    if not isinstance(given, (ast.List, ast.Tuple)) or any(isinstance(e, ast.Starred) for e in given.elts):
        return "a launch's inputs= is not a list written out"
    return given


def bound_arguments(fn: ast.FunctionDef, call: ast.Call, method: bool) -> dict[str, ast.expr] | str:
    """The factory's parameters -> the expressions one call gives them (defaults where the call passes nothing)."""
    params = [a.arg for a in [*fn.args.posonlyargs, *fn.args.args]]
    bound: dict[str, ast.expr] = {}
    if method:
        if not isinstance(call.func, ast.Attribute) or not params:
            return "the factory is a method called without a receiver"
        bound[params[0]] = call.func.value
        params = params[1:]
    if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
        return "a call of the factory passes *args or **kwargs"
    bound.update(zip(params, call.args, strict=False))
    bound.update({k.arg: k.value for k in call.keywords if k.arg})
    defaults = fn.args.defaults
    for p, d in zip(params[len(params) - len(defaults):], defaults, strict=True):
        bound.setdefault(p, d)
    for a, d in zip(fn.args.kwonlyargs, fn.args.kw_defaults, strict=True):
        if d is not None:
            bound.setdefault(a.arg, d)
    return bound


def _values(fn: ast.FunctionDef, call: ast.Call, sources: dict[str, ast.expr | str], method: bool) -> list[str] | str:
    """The captured values as the launch site reads them: the call's arguments put in for the factory's parameters."""
    bound = bound_arguments(fn, call, method)
    if isinstance(bound, str):
        return bound
    out = []
    for src in sources.values():
        expr = bound.get(src) if isinstance(src, str) else _Rename(bound).visit(copy.deepcopy(src))
        if expr is None or not _plain(expr):
            return "a value the factory captured is not a name, attribute or literal at one of its calls"
        out.append(ast.unparse(expr))
    return out


def _append(lines: list[str], given: ast.List | ast.Tuple, values: list[str]) -> tuple[int, int, str] | None:
    """(first line, last line, new text) of the launch's closing line with `values` appended to its inputs."""
    row, col = (given.end_lineno or 0) - 1, (given.end_col_offset or 0) - 1
    text = lines[row]
    if text[col : col + 1] not in ("]", ")"):
        return None
    head = text[:col]
    joined = ", ".join(values)
    if isinstance(given, ast.Tuple) and not given.elts and len(values) == 1:
        joined += ","  # a one-element tuple
    sep = "" if not given.elts else " " if head.rstrip().endswith(",") else ", "
    return row + 1, row + 1, (head.rstrip() if sep == " " else head) + sep + joined + text[col:]


def plan(ctx: Project, info: KernelInfo | None, fn: ast.FunctionDef, kernel: ast.FunctionDef, file: str,
         captured: list[str], qualname: str) -> ParamPlan:
    """Turn `captured` into arguments of `kernel` (defined in factory `fn` of `file`), or say why not."""
    p = ParamPlan()
    closure = (info.closure if info is not None else None) or {}
    missing = [n for n in captured if SCALARS.get(closure.get(n, "")) is None]
    if missing:
        shown = ", ".join(f"{n} ({closure.get(n, 'not recorded')})" for n in missing)
        p.why_not = f"the captured {shown} {'is' if len(missing) == 1 else 'are'} not a bool, int or float"
        return p
    taken = {a.arg for a in [*kernel.args.posonlyargs, *kernel.args.args, *kernel.args.kwonlyargs]}
    if taken & set(captured) or kernel.args.vararg or kernel.args.kwonlyargs:
        p.why_not = f"{kernel.name}'s signature cannot take {', '.join(captured)} as arguments"
        return p
    sources = captured_sources(fn, kernel, captured)
    if isinstance(sources, str):
        p.why_not = sources
        return p
    method = "." in qualname.split(".<locals>.")[0]
    sites = [c for c in ctx.scan.factory_calls if c.factory == qualname] if ctx.scan is not None else []
    seen = 0
    for site in sites:
        src = syntax.parsed(ctx.sources, site.file)
        if src is None:
            p.why_not = f"{site.file} cannot be read back"
            return p
        lines, tree = src
        parents = syntax.parents_of(tree)
        calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and n.lineno == site.line
                 and last_ident(n.func) == fn.name]
        for call in calls:
            launch = _launch_of(parents, call)
            if launch is None:
                p.why_not = (f"{fn.name}() is called at {site.file}:{site.line} other than as a launch's kernel, so "
                             "the kernel it returns may be launched where the edit cannot pass the values")
                return p
            given, values = _inputs(launch), _values(fn, call, sources, method)
            if isinstance(given, str) or isinstance(values, str):
                p.why_not = f"{site.file}:{site.line}: " + (given if isinstance(given, str) else str(values))
                return p
            change = _append(lines, given, values)
            e = replace_lines(ctx.sources, site.file, *change) if change is not None else None
            if e is None:
                p.why_not = f"the launch at {site.file}:{site.line} could not be edited"
                return p
            e.launch_args = {kernel.name: [closure[n] for n in captured]}  # as the hook names a launch's values
            p.edits.append(e)
            p.launches.append(f"{site.file}:{launch.lineno}")
            seen += 1
    total = mentions(ctx, fn.name)
    if not seen or total != seen:
        p.why_not = (f"{fn.name}() is called {total} time(s) in the project's files, {seen} of them as a launch's "
                     "kernel the edit can extend: the others would launch without the values")
        p.edits = []
        return p
    p.params = [(n, SCALARS[closure[n]]) for n in captured]
    p.edits += _drop_feeders(ctx, file, fn, kernel, sources)
    return p


def mentions(ctx: Project, name: str) -> int:
    """Calls of `name(` in every scanned project file, by text (aliases and instances included), its def left out."""
    pattern = re.compile(rf"(?<![\w.])(?:[\w.]+\.)?{re.escape(name)}\s*\(")
    definition = re.compile(rf"^\s*(?:async\s+)?def\s+{re.escape(name)}\s*\(")
    count = 0
    for m in ctx.scan.modules if ctx.scan is not None else []:
        for ln in ctx.sources.lines(m.file) or []:
            if name in ln and not definition.match(ln) and not ln.lstrip().startswith("#"):
                count += len(pattern.findall(ln))
    return count


def _drop_feeders(ctx: Project, file: str, fn: ast.FunctionDef, kernel: ast.FunctionDef,
                  sources: dict[str, ast.expr | str]) -> list[Edit]:
    """Remove `x = self.x` lines that only fed the closure (nothing else in the factory reads them)."""
    out = []
    for name, src in sources.items():
        if isinstance(src, str):
            continue
        reads = [n for n in ast.walk(fn) if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load)]
        inside = {id(n) for n in ast.walk(kernel)}
        if any(id(n) not in inside for n in reads):
            continue
        stmt = next(s for s in fn.body if isinstance(s, ast.Assign) and s.value is src)
        first, last = syntax.span_of(stmt)
        lines = ctx.sources.lines(file) or []
        if last < len(lines) and not lines[last].strip() and syntax.span_of(kernel)[0] == last + 2:
            last += 1  # the blank line between them goes too: the kernel's lines are removed as well
        e = replace_lines(ctx.sources, file, first, last, "")
        if e is not None:
            e.new = ""
            out.append(e)
    return out


def with_params(text: list[str], kernel: ast.FunctionDef, indent: int, params: list[tuple[str, str]]) -> list[str]:
    """The dedented definition `text` with `params` appended to the kernel's signature."""
    first = syntax.span_of(kernel)[0]
    args = [*kernel.args.posonlyargs, *kernel.args.args]
    added = ", ".join(f"{n}: {t}" for n, t in params)
    if args:
        last = args[-1]
        row, col = (last.end_lineno or last.lineno) - first, (last.end_col_offset or 0) - indent
        sep = ", "
    else:
        row = kernel.lineno - first
        line = text[row]
        col, sep = line.index("(", line.index("def ")) + 1, ""
    out = list(text)
    out[row] = out[row][:col] + sep + added + out[row][col:]
    return out
