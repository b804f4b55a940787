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

from ...models import KernelInfo
from ...models.diagnosis import Edit
from ...scan.common import last_ident
from ..edits import replace_lines
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
    position: int | None = None  # the signature place they go (the launches' input count), None: last


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
    """Names, attribute chains, constant subscripts (`model["sparse"]`) and literals: reading them again at the
    launch gives the value the call read."""
    if isinstance(e, ast.UnaryOp):
        return _plain(e.operand)
    if isinstance(e, ast.Subscript):
        return isinstance(e.slice, ast.Constant) and _plain(e.value)
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
    """The launch's `inputs=` list written out (the new arguments go at its end; with `outputs=` the kernel takes
    them right before its outputs), or why it cannot take them."""
    kw = {k.arg: k.value for k in launch.keywords}
    if None in kw or "adj_inputs" in kw or "adj_outputs" in kw or len(launch.args) > 3:
        return "a launch passes adjoint inputs or **kwargs, so the new arguments have no fixed place"
    given = kw.get("inputs", launch.args[2] if len(launch.args) > 2 else None)
    if not isinstance(given, (ast.List, ast.Tuple)) or any(isinstance(e, ast.Starred) for e in given.elts):
        return "a launch's inputs= is not a list written out"
    outputs = kw.get("outputs")
    if outputs is not None and not isinstance(outputs, (ast.List, ast.Tuple)):
        return "a launch's outputs= is not a list written out"
    return given


def is_method(qualname: str) -> bool:
    """A method of a class, by its qualname (`Solver.make`); a closure, even one inside a method, is no method."""
    parts = qualname.split(".")
    return len(parts) > 1 and parts[-2] != "<locals>"


def bound_arguments(fn: ast.FunctionDef, call: ast.Call, method: bool) -> dict[str, ast.expr] | str:
    """The factory's parameters -> the expressions one call gives them (defaults where the call passes nothing)."""
    params = [a.arg for a in [*fn.args.posonlyargs, *fn.args.args]]
    bound: dict[str, ast.expr] = {}
    if method:
        if not params:
            return "the factory is a method without a receiver parameter"
        if isinstance(call.func, ast.Attribute):
            bound[params[0]] = call.func.value
        # else a bound method called by the module-scope name that binds it: its receiver is no name the launch
        # site can write, so a captured value read from it has no source there (refused by _values)
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


def local_launches(fn: ast.FunctionDef, kernel: ast.FunctionDef) -> list[ast.Call] | None:
    """The `wp.launch`es of the kernel by its name inside the function that defines it, when that is the only use of
    the name there (not returned or stored: then every launch is in sight); None otherwise."""
    uses = [n for n in ast.walk(fn) if isinstance(n, ast.Name) and n.id == kernel.name and isinstance(n.ctx, ast.Load)]
    launches = [n for n in ast.walk(fn) if isinstance(n, ast.Call) and last_ident(n.func) == "launch"
                and ((n.args and isinstance(n.args[0], ast.Name) and n.args[0].id == kernel.name)
                     or any(k.arg == "kernel" and isinstance(k.value, ast.Name) and k.value.id == kernel.name
                            for k in n.keywords))]
    if not launches or len(uses) != len(launches):
        return None
    return launches


def _bound_once_before(fn: ast.FunctionDef, kernel: ast.FunctionDef, names: list[str]) -> str:
    """"" when each name holds one value from before the kernel's definition to the end of the function (a
    parameter never rebound, or one assignment above the kernel), else why not."""
    params = {a.arg for a in [*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs]}
    for name in names:
        stores = [n for n in ast.walk(fn) if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store)]
        if (name in params and stores) or len(stores) > 1 or any(n.lineno > kernel.lineno for n in stores):
            return f"{name} is bound again in {fn.name}(), so its value at a launch may not be the one the kernel read"
        if name not in params and not stores:
            return f"{name} is not bound in {fn.name}()"
    return ""


def _position(launches: list[ast.Call], given: list[ast.List | ast.Tuple]) -> tuple[int | None, str]:
    """Where the new parameters go: last, or right after the inputs when a launch passes outputs (all launches must
    then pass the same number of inputs)."""
    with_outputs = [g for la, g in zip(launches, given, strict=True)
                    if any(k.arg == "outputs" for k in la.keywords)]
    if not with_outputs:
        return None, ""
    counts = {len(g.elts) for g in given}
    if len(counts) != 1:
        return None, "the launches pass different numbers of inputs before their outputs"
    return counts.pop(), ""


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
    local = local_launches(fn, kernel)
    if local is not None:  # launched where it is defined: the captured names are in scope at each launch
        return _local_plan(ctx, p, fn, kernel, file, captured, closure, local)
    sources = captured_sources(fn, kernel, captured)
    if isinstance(sources, str):
        p.why_not = sources
        return p
    method = is_method(qualname)
    sites = [c for c in ctx.scan.factory_calls if c.factory == qualname] if ctx.scan is not None else []
    names = {fn.name} | {s.callee.rsplit(".", 1)[-1] for s in sites}  # its own name, and names that bind it
    seen = 0
    found: list[tuple[str, list[str], ast.Call, ast.List | ast.Tuple, list[str]]] = []
    for site in sites:
        src = syntax.parsed(ctx.sources, site.file)
        if src is None:
            p.why_not = f"{site.file} cannot be read back"
            return p
        lines, tree = src
        parents = syntax.parents_of(tree)
        calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and n.lineno == site.line
                 and last_ident(n.func) in names]
        for call in calls:
            launch = _launch_of(parents, call)
            if launch is None:
                outer = _through_wrapper(ctx, tree, parents, call)
                if isinstance(outer, str):
                    p.why_not = (f"{fn.name}() is called at {site.file}:{site.line} other than as a launch's kernel "
                                 f"({outer}), so the kernel it returns may be launched where the edit cannot pass "
                                 "the values")
                    return p
                for o_file, o_lines, o_launch, o_call in outer:
                    given, values = _inputs(o_launch), _values(fn, o_call, sources, method)
                    if isinstance(given, str) or isinstance(values, str):
                        p.why_not = f"{o_file}:{o_launch.lineno}: " + (given if isinstance(given, str) else values)
                        return p
                    found.append((o_file, o_lines, o_launch, given, values))
                seen += 1
                continue
            given, values = _inputs(launch), _values(fn, call, sources, method)
            if isinstance(given, str) or isinstance(values, str):
                p.why_not = f"{site.file}:{site.line}: " + (given if isinstance(given, str) else str(values))
                return p
            found.append((site.file, lines, launch, given, values))
            seen += 1
    total = sum(mentions(ctx, n) for n in names)
    if not seen or total != seen:
        p.why_not = (f"{fn.name}() is called {total} time(s) in the project's files, {seen} of them as a launch's "
                     "kernel the edit can extend: the others would launch without the values")
        return p
    if not _extend(ctx, p, kernel, closure, captured, found):
        return p
    p.params = [(n, SCALARS[closure[n]]) for n in captured]
    p.edits += _drop_feeders(ctx, file, fn, kernel, sources)
    return p


def _through_wrapper(ctx: Project, tree: ast.Module, parents: dict[ast.AST, ast.AST], call: ast.Call
                     ) -> list[tuple[str, list[str], ast.Call, ast.Call]] | str:
    """A factory call inside a module-level function that hands it its own parameters unchanged (a registry or a
    plain wrapper: `def init_accel(warm, sparse): ... _init_accel_uncached(warm, sparse)`) stands for that function's
    calls: each must be a launch's kernel. Returns (file, lines, launch, the factory call as that launch site would
    write it) per call of the wrapper, or why not."""
    w = next((a for a in syntax.ancestors(parents, call) if isinstance(a, (ast.FunctionDef, ast.AsyncFunctionDef))),
             None)
    if w is None or parents.get(w) is not tree:
        return "not inside a module-level function that could hand it on"
    params = [a.arg for a in [*w.args.posonlyargs, *w.args.args]]
    if (w.args.vararg or w.args.kwarg or w.args.kwonlyargs or call.keywords
            or not all(isinstance(a, ast.Name) and a.id in params for a in call.args)):
        return f"{w.name}() does not pass its own parameters to it unchanged"
    if any(isinstance(n, ast.Name) and n.id in params and isinstance(n.ctx, ast.Store) for n in ast.walk(w)):
        return f"{w.name}() rebinds a parameter it passes on"
    if any(isinstance(n, ast.Call) and last_ident(n.func) == "launch" for n in ast.walk(w)):
        return f"{w.name}() launches kernels itself"
    if not any(isinstance(n, ast.Return) and n.value is not None for n in ast.walk(w)):
        return f"{w.name}() returns nothing"
    out: list[tuple[str, list[str], ast.Call, ast.Call]] = []
    for m in ctx.scan.modules if ctx.scan is not None else []:
        src = syntax.parsed(ctx.sources, m.file)
        if src is None:
            continue
        o_lines, o_tree = src
        o_parents = syntax.parents_of(o_tree)
        for n in ast.walk(o_tree):
            if not (isinstance(n, ast.Call) and last_ident(n.func) == w.name):
                continue
            launch = _launch_of(o_parents, n)
            bound = bound_arguments(w, n, False)
            if launch is None or isinstance(bound, str):
                return f"{w.name}() is called at {m.file}:{n.lineno} other than as a launch's kernel"
            mapped = ast.Call(func=call.func, args=[bound[a.id] for a in call.args if a.id in bound], keywords=[])
            if len(mapped.args) != len(call.args):
                return f"a call of {w.name}() at {m.file}:{n.lineno} leaves a parameter it passes on unset"
            out.append((m.file, o_lines, launch, mapped))
    if not out or len(out) != mentions(ctx, w.name):
        return f"not every call of {w.name}() is one the scan reads as a launch's kernel"
    return out


def _extend(ctx: Project, p: ParamPlan, kernel: ast.FunctionDef, closure: dict[str, str], captured: list[str],
            found: list[tuple[str, list[str], ast.Call, ast.List | ast.Tuple, list[str]]]) -> bool:
    """Append each launch's values to its inputs (the edits go into `p`); False with `p.why_not` when one cannot."""
    p.position, why = _position([f[2] for f in found], [f[3] for f in found])
    if why:
        p.why_not = why
        return False
    for file, lines, launch, given, values in found:
        change = _append(lines, given, values)
        e = replace_lines(ctx.sources, file, *change) if change is not None else None
        if e is None:
            p.why_not = f"the launch at {file}:{launch.lineno} could not be edited"
            p.edits = []
            return False
        e.launch_args = {kernel.name: [closure[n] for n in captured]}  # as the hook names a launch's values
        if p.position is not None:
            e.launch_args_at = {kernel.name: p.position}
        p.edits.append(e)
        p.launches.append(f"{file}:{launch.lineno}")
    return True


def _local_plan(ctx: Project, p: ParamPlan, fn: ast.FunctionDef, kernel: ast.FunctionDef, file: str,
                captured: list[str], closure: dict[str, str], launches: list[ast.Call]) -> ParamPlan:
    why = _bound_once_before(fn, kernel, captured)
    src = syntax.parsed(ctx.sources, file)
    if why or src is None:
        p.why_not = why or f"{file} cannot be read back"
        return p
    found = []
    for la in launches:
        given = _inputs(la)
        if isinstance(given, str):
            p.why_not = f"{file}:{la.lineno}: {given}"
            return p
        found.append((file, src[0], la, given, list(captured)))
    if _extend(ctx, p, kernel, closure, captured, found):
        p.params = [(n, SCALARS[closure[n]]) for n in captured]
    return p


def mentions(ctx: Project, name: str) -> int:
    """Calls of `name(...)` or `obj.name(...)` in every scanned project file, read from their syntax trees (a name
    in a docstring or comment is no call); a file that does not parse counts its text matches instead."""
    pattern = re.compile(rf"(?<![\w.])(?:[\w.]+\.)?{re.escape(name)}\s*\(")
    definition = re.compile(rf"^\s*(?:async\s+)?def\s+{re.escape(name)}\s*\(")
    count = 0
    for m in ctx.scan.modules if ctx.scan is not None else []:
        tree = ctx.sources.tree(m.file)
        if tree is not None:
            count += sum(1 for n in ast.walk(tree) if isinstance(n, ast.Call) and last_ident(n.func) == name)
            continue
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


def with_params(text: list[str], kernel: ast.FunctionDef, indent: int, params: list[tuple[str, str]],
                position: int | None = None) -> list[str]:
    """The dedented definition `text` with `params` in the kernel's signature: last, or right after its first
    `position` parameters (the inputs, before the outputs); and `wp.static(...)` over only those names read as plain
    expressions, since they are no longer known when the kernel is built. Positions are read from `text` itself when
    it parses (earlier steps may have changed its lines: a value written in, a new name), else from `kernel`."""
    try:
        kernel = next(n for n in ast.parse("".join(text)).body if isinstance(n, ast.FunctionDef))
        indent = 0
    except (SyntaxError, StopIteration):
        pass
    first = syntax.span_of(kernel)[0]
    args = [*kernel.args.posonlyargs, *kernel.args.args]
    added = ", ".join(f"{n}: {t}" for n, t in params)
    after = args[:position] if position is not None else args
    rows = {a.lineno for a in args}
    if after and len(rows) == len(args) > 1 and all(a.lineno == a.end_lineno for a in args):
        # one parameter per line: the new ones get lines of their own, indented like the others
        last = after[-1]
        row = last.lineno - first
        line = text[row]
        pad = line[: len(line) - len(line.lstrip())]
        out = _unwrap_static(list(text), kernel, first, indent, {n for n, _t in params})
        out[row + 1:row + 1] = [f"{pad}{n}: {t},\n" for n, t in params]
        if not out[row].rstrip().endswith(","):
            out[row] = out[row].rstrip("\n").rstrip() + ",\n"
        return out
    if after:
        last = after[-1]
        row, col = (last.end_lineno or last.lineno) - first, (last.end_col_offset or 0) - indent
        sep, tail = ", ", ""
    else:
        row = kernel.lineno - first
        line = text[row]
        col, sep = line.index("(", line.index("def ")) + 1, ""
        tail = ", " if args else ""
    out = _unwrap_static(list(text), kernel, first, indent, {n for n, _t in params})
    out[row] = out[row][:col] + sep + added + tail + out[row][col:]
    return out


def _unwrap_static(text: list[str], kernel: ast.FunctionDef, first: int, indent: int, names: set[str]) -> list[str]:
    """`wp.static(expr)` whose expression reads only `names` (and constants) becomes `(expr)` in `text`."""
    hits = []
    for n in ast.walk(kernel):
        if (isinstance(n, ast.Call) and last_ident(n.func) == "static" and len(n.args) == 1 and not n.keywords
                and n.lineno == n.end_lineno and syntax.read_names(n.args[0]) <= names
                and syntax.read_names(n.args[0])):
            hits.append((n.lineno, n.col_offset, n.end_col_offset or 0, ast.unparse(n.args[0])))
    for line, start, end, inner in sorted(hits, reverse=True):
        row = line - first
        bare = inner.removeprefix("not ")
        shown = inner if bare.isidentifier() else f"({inner})"
        text[row] = text[row][: start - indent] + shown + text[row][end - indent:]
    return text
