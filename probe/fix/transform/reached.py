"""The name a call at import can reach a recorded frame's function by, when that function is not a module-level def.

A kernel factory written as a method (`make = _Kernels().make`) or as a closure kept by an object built at import
(`family = _Factory().make`, the closure defined in `__init__`) is called by the program through a module-scope
name of its file, yet its frame's qualname (`_Factory.__init__.<locals>.family`) names no module-level function.
The run's record says which: the next frame out called it on its recorded line. When that line calls exactly one
name that is bound once at module scope of the function's file (in that file, or imported from it), that binding
is the function itself (`X().method`, or `X().attr` where X's method that defines the closure stores it as
`self.attr`), and the next app frame in is the function (no app-level wrapper between them, only the bound method
or a cache), then that name at module scope, after its binding, calls the same function the program called later.

A classmethod or staticmethod of a class defined at module scope (`LMSolver._specialize`, called by the program as
`cls._specialize(key)` from `__new__`) needs no such line: module scope calls it as `LMSolver._specialize(key)` after
the class statement, with no instance made, as long as the name is the class (bound once, no decorator that may
replace it) and, for a classmethod, the run called it on that class and not on a subclass.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from . import syntax
from .context import Project
from .graph import import_targets, package_of

Frame = dict


@dataclass(frozen=True)
class Reach:
    """How module scope of `file` calls a recorded frame's function."""

    name: str  # the module-scope name the program called it by
    after: int  # the last line of the statement binding that name (calls at import go after it)
    bound_first: bool  # a method reached through an instance: its first parameter (self, cls) is not passed


def _own_defs(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> list[ast.stmt]:
    """Functions and classes `fn` defines in its own body (inside ifs, loops, withs and trys, not inside other
    functions or classes): what `fn.<locals>.NAME` can name."""
    out: list[ast.stmt] = []
    stack: list[ast.stmt] = list(fn.body)
    while stack:
        s = stack.pop(0)
        if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.append(s)
            continue
        for field in ("body", "orelse", "finalbody"):
            stack.extend(getattr(s, field, None) or [])
        stack.extend(h for h in getattr(s, "handlers", None) or [])
    return out


def def_by_path(tree: ast.Module, qualname: str, line: int = 0) -> ast.FunctionDef | None:
    """The function `qualname` names (`Solver.step`, `_Factory.__init__.<locals>.family`), or None. Where two
    definitions share a name (one per branch), the one whose lines hold `line` (a line the frame ran)."""
    scopes: list[list[ast.stmt]] = [list(tree.body)]
    parts = qualname.split(".")
    found: list[ast.stmt] = []
    for i, part in enumerate(parts):
        if part == "<locals>":
            scopes = [_own_defs(f) for f in found if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))]
            continue
        found = [s for scope in scopes for s in scope
                 if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and s.name == part]
        if i < len(parts) - 1 and parts[i + 1] != "<locals>":
            scopes = [list(s.body) for s in found if isinstance(s, ast.ClassDef)]
    defs = [f for f in found if isinstance(f, ast.FunctionDef)]
    if line:
        holding = [f for f in defs if syntax.span_of(f)[0] <= line <= (f.end_lineno or f.lineno)]
        defs = holding or defs
    return defs[0] if len(defs) == 1 or (defs and line) else None


def _is_method(qualname: str, node: ast.FunctionDef) -> bool:
    """A function defined in a class body that an instance (or the class, for a classmethod) binds."""
    parts = qualname.split(".")
    if len(parts) < 2 or parts[-2] == "<locals>":
        return False
    return not any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in node.decorator_list)


def _call_names(tree: ast.Module, line: int) -> list[tuple[str | None, str]]:
    """(module alias or None, name) of every call `name(...)` / `alias.name(...)` whose lines hold `line` (a
    decorator's call included), in order."""
    out: list[tuple[str | None, str]] = []
    for n in ast.walk(tree):
        if not isinstance(n, ast.Call) or not n.lineno <= line <= (n.end_lineno or n.lineno):
            continue
        if isinstance(n.func, ast.Name):
            out.append((None, n.func.id))
        elif isinstance(n.func, ast.Attribute) and isinstance(n.func.value, ast.Name):
            out.append((n.func.value.id, n.func.attr))
    return list(dict.fromkeys(out))


def _module_name(ctx: Project, file: str) -> str | None:
    info = ctx.scan.module_of_file(file) if ctx.scan is not None else None
    return info.name if info is not None else None


def _resolve(ctx: Project, caller: str, ctree: ast.Module, alias: str | None, name: str, file: str) -> str | None:
    """The module-scope name of `file` that `alias.name` / `name` in `caller` (at module scope) refers to."""
    if caller == file and alias is None:
        return name
    target = _module_name(ctx, file)
    if target is None:
        return None
    package = package_of(ctx, caller)
    for s in ctree.body:
        if isinstance(s, ast.ImportFrom):
            head = import_targets(s, package)[0]
            for a in s.names:
                bound = a.asname or a.name
                if alias is None and bound == name and head == target:
                    return a.name  # from pkg.mod import name
                if alias is not None and bound == alias and f"{head}.{a.name}" == target:
                    return name  # from pkg import mod; mod.name(...)
        elif isinstance(s, ast.Import) and alias is not None:
            if any(a.asname == alias and a.name == target for a in s.names):
                return name  # import pkg.mod as mod; mod.name(...)
    return None


def _binding(tree: ast.Module, name: str) -> ast.stmt | None:
    """The one module-scope statement that binds `name` (None when none does, or several do)."""
    hits = [s for s in tree.body if name in syntax.module_bindings(ast.Module(body=[s], type_ignores=[]))]
    return hits[0] if len(hits) == 1 else None


def _holder(tree: ast.Module, value: ast.expr) -> ast.ClassDef | None:
    """The module-level class an `X(...).attr` / `X.attr` expression reads its attribute from."""
    base = value.func if isinstance(value, ast.Call) else value
    name = base.id if isinstance(base, ast.Name) else None
    return next((s for s in tree.body if isinstance(s, ast.ClassDef) and s.name == name), None)


def _binds_to(tree: ast.Module, stmt: ast.stmt, node: ast.FunctionDef) -> bool:
    """Does the module-scope statement `stmt` bind its name to `node` itself: `name = X().node_name` (a bound
    method of `node`'s class), or `name = X().attr` where a method of X sets `self.attr = node_name` in the function
    that defines `node` (a closure kept by the object)? What the caller's line called is then the recorded function,
    not a function that returns it (`@named_kernel(...)` calls `named_kernel`, and the decorator it returns runs)."""
    value = stmt.value if isinstance(stmt, (ast.Assign, ast.AnnAssign)) else None
    if not isinstance(value, ast.Attribute):
        return False
    cls = _holder(tree, value.value)
    if cls is None:
        return False
    if value.attr == node.name and any(m is node for m in cls.body):
        return True
    for m in cls.body:
        if not isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef)) or node not in _own_defs(m):
            continue
        for n in ast.walk(m):
            if (isinstance(n, ast.Assign) and isinstance(n.value, ast.Name) and n.value.id == node.name
                    and any(isinstance(t, ast.Attribute) and t.attr == value.attr and isinstance(t.value, ast.Name)
                            and t.value.id == (m.args.args[0].arg if m.args.args else "") for t in n.targets)):
                return True
    return False


_SAME_CLASS = {"dataclass", "final", "total_ordering"}  # class decorators that return the class they are given


def method_binder(node: ast.FunctionDef) -> ast.expr | None:
    """The `@classmethod` / `@staticmethod` decorator of a method (the builtin, by its own name), or None."""
    return next((d for d in node.decorator_list if isinstance(d, ast.Name) and d.id in ("classmethod", "staticmethod")),
                None)


def _class_path(tree: ast.Module, qualname: str) -> list[ast.ClassDef] | None:
    """The classes `Outer.Inner.method` is defined in, from module scope in, when every part but the method is a
    class statement directly in the body of the one before (no function in between); else None."""
    parts = qualname.split(".")
    if len(parts) < 2 or "<locals>" in parts:
        return None
    scope: list[ast.stmt] = list(tree.body)
    out: list[ast.ClassDef] = []
    for part in parts[:-1]:
        hits = [s for s in scope if isinstance(s, ast.ClassDef) and s.name == part]
        if len(hits) != 1:
            return None
        out.append(hits[0])
        scope = list(hits[0].body)
    return out


def _class_decorators(cls: ast.ClassDef) -> list[str]:
    """The class decorators of `cls` that may return another object than the class (its name would not be it)."""
    out = []
    for d in cls.decorator_list:
        base = d.func if isinstance(d, ast.Call) else d
        name = base.attr if isinstance(base, ast.Attribute) else base.id if isinstance(base, ast.Name) else ""
        if name not in _SAME_CLASS:
            out.append(ast.unparse(d))
    return out


def class_reach(ctx: Project, frame: Frame, file: str, tree: ast.Module, node: ast.FunctionDef) -> Reach | str | None:
    """How module scope of `file` calls a classmethod or staticmethod `node` of a class defined at module scope
    (`LMSolver._specialize`): `Class.method(args)` after the class statement, with no instance made (no `__init__`
    runs). None when `node` is not one (another reach may hold); why not when it is one the name cannot call as the
    program did: the class name rebound or replaced by a decorator, or a classmethod the run called on another
    class (a subclass passes itself as `cls`)."""
    fn = str(frame.get("function", ""))
    binder = method_binder(node)
    classes = _class_path(tree, fn)
    if binder is None or classes is None or not any(m is node for m in classes[-1].body):
        return None
    top = classes[0]
    bound = [s for s in tree.body if top.name in syntax.module_bindings(ast.Module(body=[s], type_ignores=[]))]
    if bound != [top]:
        return f"{fn}() is a method of {top.name}, and {file} binds the name {top.name} more than once"
    odd = [d for c in classes for d in _class_decorators(c)]
    if odd:
        return f"{fn}() is a method of a class decorated with @{odd[0]}, which may bind its name to another object"
    owner = ".".join(c.name for c in classes)
    if isinstance(binder, ast.Name) and binder.id == "classmethod":
        first = [*node.args.posonlyargs, *node.args.args]
        got = (frame.get("args") or {}).get(first[0].arg) if first else None
        info = ctx.scan.module_of_file(file) if ctx.scan is not None else None
        modules = {info.name, info.main_alias} if info is not None else set()
        if not got or got.get("kind") != "type" or got.get("name") != owner or got.get("module") not in modules:
            shown = f"{got.get('module')}.{got.get('name')}" if got and got.get("kind") == "type" else "a value"
            return (f"{fn}() is a classmethod the run called on {shown}, not on {owner}, so {owner}.{node.name}() "
                    "at import would not repeat that call")
    return Reach(name=f"{owner}.{node.name}", after=top.end_lineno or top.lineno,
                 bound_first=isinstance(binder, ast.Name) and binder.id == "classmethod")


def reached_as(ctx: Project, frames: list[Frame], at: int, file: str, tree: ast.Module,
               node: ast.FunctionDef) -> Reach | str:
    """How a call at import of `file` reaches `node` (the function of `frames[at]`, not a module-level def): as
    `Class.method` for a classmethod or staticmethod of a module-level class (class_reach), else from the line of
    the next frame out that called it; or why it cannot (see the module docstring)."""
    fn = str(frames[at].get("function", ""))
    by_class = class_reach(ctx, frames[at], file, tree, node)
    if by_class is not None:
        return by_class
    outer = frames[at + 1] if at + 1 < len(frames) else None
    if outer is None:
        return f"{fn}() is not a module-level function, and the run recorded no frame that called it"
    caller = ctx.sources.rel(str(outer.get("file", "")))
    csrc = syntax.parsed(ctx.sources, caller) if caller is not None else None
    line = int(outer.get("line") or 0)
    if caller is None or csrc is None or not line:
        return f"{fn}() is not a module-level function, and the code that called it is not the project's"
    local: set[str] = set()
    cfn = str(outer.get("function", ""))
    if cfn and cfn != "<module>":
        cdef = def_by_path(csrc[1], cfn, line)
        if cdef is None:
            return f"{fn}() is not a module-level function, and its caller {cfn}() could not be read"
        local = syntax.bound_names(cdef)
    names: dict[str, ast.stmt] = {}
    for alias, name in _call_names(csrc[1], line):
        if (alias or name) in local:
            continue
        target = _resolve(ctx, caller, csrc[1], alias, name, file)
        stmt = _binding(tree, target) if target is not None else None
        if target is None or stmt is None or isinstance(stmt, (ast.ClassDef, ast.Import, ast.ImportFrom)):
            continue
        if not _binds_to(tree, stmt, node):
            continue  # a function of its own would be a frame between them; another object is not this function
        names[target] = stmt
    if len(names) != 1:
        return (f"{fn}() is not a module-level function, and the line that called it ({caller}:{line}) does not "
                f"call it by one module-scope name of {file}")
    (name, stmt), = names.items()
    return Reach(name=name, after=stmt.end_lineno or stmt.lineno, bound_first=_is_method(fn, node))
