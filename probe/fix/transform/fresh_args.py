"""Arguments of a kernel factory that are new objects at every call: a function made by a maker called right there.

`sweep_kernel(make_filter(mode))` runs `make_filter`, which defines a new `@wp.func` each time, and hands it to the
factory. A cache or memo on the factory keys on that function object (it hashes by identity), so it misses at every
call, whatever the mode. Two facts decide it, neither a name: the run's record of the factory's argument names the
function by its qualname, which says where Python defined it (`make_filter.<locals>.accept`: inside a call of
`make_filter`); and the syntax tree of the line that called the factory (the innermost recorded frame whose line
calls it) shows that argument written as a call of that maker, directly or through a local name bound once by one.
Then every call of that line made a new object. Pure: reads the record and the sources.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from ...models import KernelCreation
from ...scan.common import last_ident
from . import syntax
from .context import Project

LOCALS = ".<locals>."


@dataclass
class Fresh:
    """One factory parameter given a new function at each call, and where the maker is called for it."""

    param: str  # the factory's parameter
    value: dict  # the run's record of the argument (hook_kernels.encode), `cells` holding what its closure captured
    maker: str  # the function that defined it (the qualname's part before `.<locals>.`)
    module: str  # the module the function was defined in (the record's)
    site_file: str  # the file and line that called the factory
    site_line: int
    call: ast.Call  # the maker's call whose result the factory got
    caller: ast.FunctionDef | None  # the function holding that line (None at module scope)
    tree: ast.Module  # the syntax tree of site_file
    via: list[ast.FunctionDef] = field(default_factory=list)  # functions that passed the argument on unchanged


def maker_of(value: dict) -> str:
    """The qualname of the function that defined a recorded function value, or "" (not defined inside one)."""
    name = str(value.get("name") or "")
    if value.get("kind") != "function" or LOCALS not in name:
        return ""
    return name.rsplit(LOCALS, 1)[0]


def _enclosing(tree: ast.Module, line: int) -> ast.FunctionDef | None:
    best: ast.FunctionDef | None = None
    for n in ast.walk(tree):
        if isinstance(n, ast.FunctionDef) and n.lineno <= line <= (n.end_lineno or n.lineno):
            if best is None or n.lineno >= best.lineno:
                best = n
    return best


def _factory_calls(tree: ast.Module, line: int, factory: str) -> list[ast.Call]:
    return [n for n in ast.walk(tree) if isinstance(n, ast.Call) and last_ident(n.func) == factory
            and n.lineno <= line <= (n.end_lineno or n.lineno)]


def _argument(call: ast.Call, params: list[str], param: str) -> ast.expr | None:
    for k in call.keywords:
        if k.arg == param:
            return k.value
    if any(isinstance(a, ast.Starred) for a in call.args):
        return None
    at = params.index(param) if param in params else -1
    return call.args[at] if 0 <= at < len(call.args) else None


def _made_by(expr: ast.expr | None, maker: str, fn: ast.FunctionDef | None) -> ast.Call | None:
    """The call of `maker` that `expr` is, directly or through a local name `fn` binds once, by that call."""
    if isinstance(expr, ast.Call) and last_ident(expr.func) == maker:
        return expr
    if not isinstance(expr, ast.Name) or fn is None:
        return None
    binds = [n for n in ast.walk(fn) if isinstance(n, ast.Name) and n.id == expr.id and isinstance(n.ctx, ast.Store)]
    if len(binds) != 1:
        return None
    assign = next((s for s in ast.walk(fn) if isinstance(s, ast.Assign) and len(s.targets) == 1
                   and s.targets[0] is binds[0]), None)
    if assign is None or assign.lineno > expr.lineno or not _same_block(fn, assign, expr):
        return None  # bound once before a loop that calls the factory: one object for every call
    value = assign.value
    return value if isinstance(value, ast.Call) and last_ident(value.func) == maker else None


def _same_block(fn: ast.FunctionDef, assign: ast.stmt, expr: ast.expr) -> bool:
    """`assign` is a statement of the block that holds the statement using `expr`: it runs once per such use."""
    parents = syntax.parents_of(fn)
    node: ast.AST = expr
    while node in parents and not isinstance(node, ast.stmt):
        node = parents[node]
    holder = parents.get(node)
    return any(isinstance(b, list) and node in b and assign in b for b in (
        getattr(holder, f, None) for f in ("body", "orelse", "finalbody")))


def fresh_arguments(ctx: Project, made: list[KernelCreation], params: list[str]) -> list[Fresh]:
    """The factory's parameters (`params`, in order) that the recorded calls gave a function made anew right at
    the line calling the factory; one entry per parameter, from its first such call."""
    out: dict[str, Fresh] = {}
    for c in made:
        factory = c.function.rsplit(".", 1)[-1]
        for param, value in c.args.items():
            maker = maker_of(value)
            if not maker or "." in maker or param in out:
                continue
            name, wanted, names, via = factory, param, params, []
            for frame in c.outer:
                file, line = str(frame.get("file") or ""), int(frame.get("line") or 0)
                src = syntax.parsed(ctx.sources, file) if file else None
                if src is None:
                    continue
                calls = _factory_calls(src[1], line, name)
                if not calls:
                    continue
                fn = _enclosing(src[1], line)
                expr = _argument(calls[0], names, wanted)
                call = _made_by(expr, maker, fn)
                if call is not None:
                    out[param] = Fresh(param=param, value=value, maker=maker, module=str(value.get("module") or ""),
                                       site_file=file, site_line=line, call=call, caller=fn, tree=src[1], via=via)
                    break
                if fn is not None and isinstance(expr, ast.Name) and expr.id in params_of(fn) \
                        and not _rebinds(fn, expr.id):
                    # a function that hands its own parameter on (a registry's lookup): follow it to its caller
                    name, wanted, names, via = fn.name, expr.id, bound_params(src[1], fn), [*via, fn]
                    continue
                break  # the innermost line that calls the factory is the one that decides
    return list(out.values())


def params_of(node: ast.FunctionDef) -> list[str]:
    a = node.args
    return [x.arg for x in [*a.posonlyargs, *a.args]]


def bound_params(tree: ast.Module, node: ast.FunctionDef) -> list[str]:
    """The positional parameters a call passes: a method's (of a class body, not a staticmethod) without its first."""
    params = params_of(node)
    in_class = any(isinstance(s, ast.ClassDef) and node in s.body for s in ast.walk(tree))
    static = any(last_ident(d) == "staticmethod" for d in node.decorator_list)
    return params[1:] if in_class and not static and params else params


def _rebinds(fn: ast.FunctionDef, name: str) -> bool:
    return any(isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store) for n in ast.walk(fn))
