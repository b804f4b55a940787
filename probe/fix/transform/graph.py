"""The project's own import graph, read from the scan: which module a file's import names, and whether a module
imports a file back (the cycle a late import is often there to avoid)."""

from __future__ import annotations

import ast
from collections import defaultdict
from collections.abc import Iterable

from .context import Project


def import_targets(stmt: ast.Import | ast.ImportFrom, package: str) -> list[str]:
    """The absolute module names an import statement loads (relative ones resolved against `package`)."""
    if isinstance(stmt, ast.Import):
        return [a.name for a in stmt.names]
    base = package.split(".") if package else []
    if stmt.level:
        base = base[: len(base) - (stmt.level - 1)] if stmt.level > 1 else base
        head = ".".join(base + ([stmt.module] if stmt.module else []))
    else:
        head = stmt.module or ""
    return [head] + [f"{head}.{a.name}" for a in stmt.names]


def imports_back(ctx: Project, file: str, modules: Iterable[str]) -> str | None:
    """The first of `modules` (a project module) that imports `file`'s module at module scope, directly or through
    other project modules: moving its import to `file`'s module scope would close a cycle. None when none does."""
    scan = ctx.scan
    if scan is None:
        return None
    me = scan.module_of_file(file)
    if me is None:
        return None
    graph: dict[str, set[str]] = defaultdict(set)
    files = {m.name: m.file for m in scan.modules}
    for imp in scan.imports:
        if imp.scope == "module" and imp.project_module and not imp.type_checking:
            src = scan.module_of_file(imp.file)
            if src is not None:
                graph[src.name].add(imp.project_module)
    for start in modules:
        if start not in files:
            continue
        seen, stack = set(), [start]
        while stack:
            m = stack.pop()
            if m == me.name:
                return start
            if m in seen:
                continue
            seen.add(m)
            stack.extend(graph.get(m, ()))
            parent = m.rpartition(".")[0]  # importing pkg.mod runs pkg/__init__.py first
            if parent:
                stack.append(parent)
    return None


def package_of(ctx: Project, file: str) -> str:
    info = ctx.scan.module_of_file(file) if ctx.scan is not None else None
    if info is None:
        return ""
    return info.name if info.is_package else info.name.rpartition(".")[0]
