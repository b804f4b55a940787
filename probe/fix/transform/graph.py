"""The project's own import graph, read from the scan: which module a file's import names, and whether a module
imports a file back (the cycle a late import is often there to avoid)."""

from __future__ import annotations

import ast
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass

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
    graph = _module_graph(ctx)
    files = {m.name: m.file for m in scan.modules}
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


def _module_graph(ctx: Project) -> dict[str, set[str]]:
    """Project module -> the project modules it imports at module scope (what importing it runs)."""
    graph: dict[str, set[str]] = defaultdict(set)
    if ctx.scan is None:
        return graph
    for imp in ctx.scan.imports:
        if imp.scope == "module" and imp.project_module and not imp.type_checking:
            src = ctx.scan.module_of_file(imp.file)
            if src is not None:
                graph[src.name].add(imp.project_module)
    return graph


def _import_time(tree: ast.Module) -> list[ast.stmt]:
    """The import statements a module runs when it is imported: at module scope and in class bodies, under ifs and
    trys, not inside functions."""
    out: list[ast.stmt] = []
    stack: list[ast.AST] = list(tree.body)
    while stack:
        n = stack.pop()
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            continue
        if isinstance(n, (ast.Import, ast.ImportFrom)):
            out.append(n)
        stack.extend(ast.iter_child_nodes(n))
    return out


@dataclass
class BackImport:
    """A late import, run by a call at import of `file`, whose module imports `file` back while it is half run."""

    module: str  # the module the late import loads
    names: dict[str, str]  # name it (or a module on the way) imports from `file` -> the module that imports it


def imported_back(ctx: Project, file: str, fn_file: str, fn: ast.FunctionDef | ast.AsyncFunctionDef,
                  parse: Callable[[str], ast.Module | None]) -> list[BackImport] | str:
    """The imports inside `fn` (a function of `fn_file`) that a call at import of `file` runs while `file` is half
    imported, each with the names the modules it loads import from `file` at import time: every one must be bound
    above the call, or the import fails there. Why not, when that cannot be known (a module imported whole, or `*`),
    or when another project module imports one of those modules at module scope: imported before `file`, its import
    of `file` would run the call, and the late import would find it half run."""
    scan = ctx.scan
    me = scan.module_of_file(file) if scan is not None else None
    if scan is None or me is None:
        return []
    graph = _module_graph(ctx)
    out: list[BackImport] = []
    for stmt in (n for n in ast.walk(fn) if isinstance(n, (ast.Import, ast.ImportFrom))):
        for start in import_targets(stmt, package_of(ctx, fn_file)):
            if scan.module_info(start) is None or start == me.name or imports_back(ctx, file, [start]) is None:
                continue
            seen: set[str] = set()
            stack = [start]
            while stack:  # every project module importing `start` runs, `file`'s own module left out (half run)
                m = stack.pop()
                if m in seen or m == me.name:
                    continue
                seen.add(m)
                stack.extend(graph.get(m, ()))
            outside = sorted(src for src, targets in graph.items() if targets & seen and src not in seen | {me.name})
            if outside:
                return (f"{outside[0]} imports {', '.join(sorted(graph[outside[0]] & seen))} at module scope: imported "
                        f"before {me.name}, it would run the call at import while {start} is half imported")
            names: dict[str, str] = {}
            for m in sorted(seen):
                info = scan.module_info(m)
                tree = parse(info.file) if info is not None else None
                if info is None or tree is None:
                    return f"{m} imports {me.name} back and could not be read"
                package = info.name if info.is_package else info.name.rpartition(".")[0]
                for imp in _import_time(tree):
                    heads = import_targets(imp, package)
                    if isinstance(imp, ast.Import):
                        if any(h == me.name or h.startswith(me.name + ".") for h in heads):
                            return f"{m} imports {me.name} as a module; which of its names it reads then is not known"
                        continue
                    for a in imp.names:
                        if heads[0] == me.name and a.name == "*":
                            return f"{m} imports * from {me.name}; which names it needs is not known"
                        if heads[0] == me.name:
                            names.setdefault(a.name, m)
                        elif f"{heads[0]}.{a.name}" == me.name:
                            return f"{m} imports {me.name} as a module; which of its names it reads then is not known"
            if names:
                out.append(BackImport(module=start, names=names))
    return out


def package_of(ctx: Project, file: str) -> str:
    info = ctx.scan.module_of_file(file) if ctx.scan is not None else None
    if info is None:
        return ""
    return info.name if info.is_package else info.name.rpartition(".")[0]
