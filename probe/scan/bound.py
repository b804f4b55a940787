"""Module-scope names that bind a function which is not a module-level def: a kernel factory called through them.

A factory written as a method (`make = _Kernels().make`) or as a closure an object keeps (`make = _Factory().make`,
where `_Factory.__init__` defines `make` and stores `self.make = make`) is called by the program through that
module-scope name. Its qualname (`_Kernels.make`, `_Factory.__init__.<locals>.make`) names no module-level function,
so a call `make(...)` is linked to it only through the binding. Only bindings whose value is a module-level class's
attribute, read from the class or from an instance built on the spot, are followed: the attribute is then the
function itself (a method of the class, or a closure one of its methods stores on `self`), not whatever an arbitrary
call returns.
"""

from __future__ import annotations

import ast

FuncDef = ast.FunctionDef | ast.AsyncFunctionDef


def own_defs(fn: FuncDef) -> list[FuncDef]:
    """Functions `fn` defines in its own body (inside ifs, loops, withs and trys, not inside other functions or
    classes): what `fn.<locals>.NAME` can name."""
    out: list[FuncDef] = []
    stack: list[ast.stmt] = list(fn.body)
    while stack:
        s = stack.pop(0)
        if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)):
            out.append(s)
            continue
        if isinstance(s, ast.ClassDef):
            continue
        for field in ("body", "orelse", "finalbody"):
            stack.extend(getattr(s, field, None) or [])
        stack.extend(h for h in getattr(s, "handlers", None) or [])
    return out


def _stored_closures(method: FuncDef) -> dict[str, str]:
    """attr -> the closure's name, for each `self.attr = name` in `method` where `name` is a def of its own body."""
    if not method.args.args:
        return {}
    me = method.args.args[0].arg
    local = {d.name for d in own_defs(method)}
    out: dict[str, str] = {}
    for n in ast.walk(method):
        if isinstance(n, ast.Assign) and isinstance(n.value, ast.Name) and n.value.id in local:
            for t in n.targets:
                if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == me:
                    out[t.attr] = n.value.id
    return out


def attribute_function(cls: ast.ClassDef, attr: str) -> str | None:
    """The qualname of the function `cls().attr` is: a method of `cls`, or a closure one of its methods stores as
    `self.attr`; None when it is neither (or more than one method stores one)."""
    methods = [s for s in cls.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))]
    if any(m.name == attr for m in methods):
        return f"{cls.name}.{attr}"
    hits = [f"{cls.name}.{m.name}.<locals>.{closure}" for m in methods
            for a, closure in _stored_closures(m).items() if a == attr]
    return hits[0] if len(hits) == 1 else None


def bound_functions(tree: ast.Module) -> dict[str, str]:
    """Module-scope name -> qualname of the function it binds (`name = X().attr` or `name = X.attr`, X a
    module-level class, the name bound once at module scope)."""
    classes = {s.name: s for s in tree.body if isinstance(s, ast.ClassDef)}
    counts: dict[str, int] = {}
    found: dict[str, str] = {}
    for s in tree.body:
        targets = s.targets if isinstance(s, ast.Assign) else [s.target] if isinstance(s, ast.AnnAssign) else []
        for t in targets:
            if isinstance(t, ast.Name):
                counts[t.id] = counts.get(t.id, 0) + 1
        value = getattr(s, "value", None)
        if len(targets) != 1 or not isinstance(targets[0], ast.Name) or not isinstance(value, ast.Attribute):
            continue
        base = value.value.func if isinstance(value.value, ast.Call) else value.value
        cls = classes.get(base.id) if isinstance(base, ast.Name) else None
        qual = attribute_function(cls, value.attr) if cls is not None else None
        if qual is not None:
            found[targets[0].id] = qual
    for s in tree.body:
        if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            counts[s.name] = counts.get(s.name, 0) + 1
        elif isinstance(s, (ast.Import, ast.ImportFrom)):
            for a in s.names:
                bound = a.asname or a.name.split(".")[0]
                counts[bound] = counts.get(bound, 0) + 1
    return {name: qual for name, qual in found.items() if counts.get(name) == 1}
