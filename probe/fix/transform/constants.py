"""Captured values that never change, written into the kernel: a closure over a type, a function or a number that
every call of its factory gives the same value becomes one module-scope kernel that names that value itself.

`make_kernel(dtype)` called as `make_kernel(wp.float32)` everywhere, or `make_solver(residual)` always given the same
`wp.func`, makes the same kernel at every call; each call still creates it anew after its module loaded. Putting the
value in place of the captured name (`wp.array(dtype=wp.float32)`, `residual(x)`) makes the kernel one definition
that can move to module scope (`hoist`). Preconditions: every call of the factory in the project is one the scan
sees (a text search finds no other), each passes the value as a name, attribute or literal the factory's file can
write (`memoize.carry`), and all pass the same one. A method's values come from its instance: not taken.
"""

from __future__ import annotations

import ast

from ...models.scan import FactoryCallFact
from . import memoize
from .context import Project
from .params import bound_arguments, captured_sources, is_method, mentions


def fixed_values(ctx: Project, fn: ast.FunctionDef, kernel: ast.FunctionDef, file: str, captured: list[str],
                 qualname: str) -> dict[str, str] | str:
    """Captured name -> the one expression every call gives it, as `file` can write it; or why not."""
    if is_method(qualname):
        return f"{fn.name}() is a method: the values it captures come from its instance"
    sources = captured_sources(fn, kernel, captured)
    if isinstance(sources, str):
        return sources
    src = ctx.sources.tree(file)
    if src is None:
        return f"{file} cannot be read back"
    home = memoize.home_of(ctx, file, src)
    calls: list[FactoryCallFact] = (
        [c for c in ctx.scan.factory_calls  # a closure called through the name that binds it: its own qualname
         if c.factory in (qualname.split(".<locals>.")[0], qualname) and c.factory_file == file]
        if ctx.scan is not None else []
    )
    if not calls:
        return f"no call of {fn.name}() was found in the scanned sources"
    if sum(mentions(ctx, n) for n in {fn.name} | {c.callee.rsplit(".", 1)[-1] for c in calls}) != len(calls):
        return f"{fn.name}() is called in places the scan does not follow, which may pass other values"
    seen: dict[str, str] = {}
    for c in calls:
        try:
            call = ast.parse(f"{fn.name}({', '.join(c.args)})", mode="eval").body
        except SyntaxError:
            return f"the arguments of {c.file}:{c.line} could not be read back"
        assert isinstance(call, ast.Call)
        bound = bound_arguments(fn, call, method=False)
        if isinstance(bound, str):
            return bound
        caller = ctx.sources.tree(c.file)
        for name, origin in sources.items():
            if not isinstance(origin, str):
                return f"{name} is computed inside {fn.name}(), not passed in"
            expr = bound.get(origin)
            if expr is None:
                return f"{c.file}:{c.line} does not pass {origin}"
            got = memoize.carry(expr, caller, home, c.file == file)
            if isinstance(got, str):
                return got
            if seen.setdefault(name, got[0]) != got[0]:
                return f"{fn.name}() is called with {name}={seen[name]} and {name}={got[0]}: the kernel differs by call"
    return seen


def substitute(text: list[str], kernel: ast.FunctionDef, first: int, indent: int, values: dict[str, str]) -> list[str]:
    """The dedented definition `text` (its first line is source line `first`) with every read of a name in `values`
    replaced by that value's text."""
    out = list(text)
    hits = sorted(((n.lineno, n.col_offset, n.end_col_offset or 0, n.id) for n in ast.walk(kernel)
                   if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and n.id in values
                   and n.lineno == n.end_lineno), reverse=True)
    for line, start, end, name in hits:
        row = line - first
        a, b = start - indent, end - indent
        out[row] = out[row][:a] + values[name] + out[row][b:]
    return out
