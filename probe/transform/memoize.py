"""A kernel factory's versions declared once, at import: the edit for factories called with constants.

A factory (`make_drag_kernel(coef)`) that builds each kernel with `module="unique"` pays a module per version;
without `"unique"` its versions join the factory file's module, which is one build only if every version exists
before that module first loads. Calling the factory again later (the same value, at run time) creates the kernel
anew, and Warp rebuilds the module for it. So the edit has three parts, all in the factory's file:

- `module="unique"` dropped from the nested kernel's decorator;
- `@functools.lru_cache(maxsize=None)` on the factory: the same arguments return the same kernel object, never a
  new registration;
- the versions the code asks for (the constant arguments of its calls) created right after the factory at module
  scope, so they join the module at import.

Only for module-level factories whose every call passes literals (the scan's factory calls); anything else stays
as it was, with the reason.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from ..edits import insert_before
from ..models.diagnosis import Edit
from ..models.scan import FactoryCallFact, KernelDef
from . import syntax
from .context import Project

CACHE = "@functools.lru_cache(maxsize=None)"


def _literal_call(c: FactoryCallFact) -> str | None:
    """`args` as a call's argument list, when every one is a literal (keywords allowed)."""
    try:
        call = ast.parse(f"f({', '.join(c.args)})", mode="eval").body
    except SyntaxError:
        return None
    if not isinstance(call, ast.Call):
        return None
    for v in [*call.args, *(k.value for k in call.keywords)]:
        try:
            ast.literal_eval(v)
        except ValueError:
            return None
    return ", ".join(c.args)


def _factory_node(tree: ast.Module, name: str) -> ast.FunctionDef | None:
    for stmt in tree.body:
        if isinstance(stmt, ast.FunctionDef) and stmt.name == name:
            return stmt
    return None


def _import_line(tree: ast.Module) -> tuple[int, bool]:
    """(the line a new stdlib import goes before, whether `functools` is imported at module scope already)."""
    has = any(isinstance(s, ast.Import) and any(a.name == "functools" and not a.asname for a in s.names)
              for s in tree.body)
    for s in tree.body:
        if isinstance(s, ast.ImportFrom) and s.module == "__future__":
            continue
        if isinstance(s, (ast.Import, ast.ImportFrom)):
            return s.lineno, has
    first = next((s for s in tree.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))), None)
    return (first.lineno if first is not None else len(tree.body) + 1), has


@dataclass
class FactoryPlan:
    edits: list[Edit]
    review: str
    why_not: str  # set when no edit is made


def declared_at_import(ctx: Project, defs: list[KernelDef], calls: list[FactoryCallFact],
                       drop_unique: dict[str, Edit]) -> FactoryPlan:
    """The three-part edit for every factory of `defs` (all in their files), or why not. `drop_unique`: the edit
    that removes module="unique" from each kernel (by kernel name), made by the caller."""
    edits: list[Edit] = []
    made: list[str] = []
    imports_done: set[str] = set()
    factories_done: set[tuple[str, str]] = set()
    for k in defs:
        factory = k.enclosing_function or ""
        if "." in factory:
            return FactoryPlan([], "", f"{k.name} is made inside {factory}(), not a module-level factory")
        src = syntax.parsed(ctx.sources, k.file)
        node = _factory_node(src[1], factory) if src is not None else None
        if src is None or node is None:
            return FactoryPlan([], "", f"the factory {factory}() of {k.name} was not found at module scope")
        mine = [c for c in calls if c.factory == factory and c.factory_file == k.file]
        args = [_literal_call(c) for c in mine]
        if not mine or any(a is None for a in args):
            return FactoryPlan([], "", f"{factory}() is not called with literal arguments only, so its versions are "
                                       "not known at import")
        if k.name not in drop_unique:
            return FactoryPlan([], "", f'the module="unique" argument of {k.name} is not on one line')
        tree = src[1]
        if (k.file, factory) in factories_done:  # a second kernel of the same factory
            edits.append(drop_unique[k.name])
            continue
        factories_done.add((k.file, factory))
        first = syntax.span_of(node)[0]
        cached = insert_before(ctx.sources, k.file, first, CACHE)
        versions = list(dict.fromkeys(f"{factory}({a})" for a in args))
        note = f"# {factory}()'s versions, made at import so they exist before their module first loads"
        precreate = insert_before(ctx.sources, k.file, (node.end_lineno or first) + 1,
                                  "\n\n" + note + "\n" + "\n".join(versions) + "\n")
        if cached is None or precreate is None:
            return FactoryPlan([], "", f"{k.file} is not a file of the project")
        edits += [drop_unique[k.name], cached, precreate]
        if k.file not in imports_done:
            at, has = _import_line(tree)
            if not has:
                e = insert_before(ctx.sources, k.file, at, "import functools")
                if e is None:
                    return FactoryPlan([], "", f"{k.file} is not a file of the project")
                edits.append(e)
            imports_done.add(k.file)
        made += versions
    review = (
        f"{len(made)} kernel version(s) are now made at import ({', '.join(made[:4])}{' ...' if len(made) > 4 else ''})"
        " and each factory returns the one kernel per argument value it made (functools.lru_cache): a caller that "
        "passes a value not made at import gets a new kernel after the module loaded, which rebuilds it (CS-1); "
        "callers now share kernel objects; the versions' module is their file's own, with its options"
    )
    return FactoryPlan(edits, review, "")
