"""Reading a project file's syntax tree for an edit: a definition's exact span, the names code reads and binds, the
module-scope statement that holds a line. Pure functions over `ast`; lines are 1-based."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..edits import SourceView


def parsed(view: SourceView, file: str) -> tuple[list[str], ast.Module] | None:
    """(lines, module AST) of a project file, or None (not the project's, unreadable, not valid Python)."""
    lines, tree = view.lines(file), view.tree(file)
    if lines is None or tree is None:
        return None
    return lines, tree


def def_at(tree: ast.AST, line: int, name: str | None = None) -> ast.FunctionDef | None:
    """The function definition whose `def` (or first decorator) sits at `line`."""
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and (name is None or node.name == name):
            first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            if line in (node.lineno, first):
                return node
    return None


def span_of(node: ast.stmt) -> tuple[int, int]:
    """First line (its first decorator) and last line of a statement, 1-based inclusive."""
    decorators = getattr(node, "decorator_list", [])
    first = min([node.lineno, *(d.lineno for d in decorators)])
    return first, node.end_lineno or node.lineno


def parents_of(tree: ast.AST) -> dict[ast.AST, ast.AST]:
    """Child node -> parent node."""
    out: dict[ast.AST, ast.AST] = {}
    for parent in ast.walk(tree):
        for child in ast.iter_child_nodes(parent):
            out[child] = parent
    return out


def ancestors(parents: dict[ast.AST, ast.AST], node: ast.AST) -> list[ast.AST]:
    """The nodes enclosing `node`, innermost first (from `parents_of`)."""
    out = []
    up = parents.get(node)
    while up is not None:
        out.append(up)
        up = parents.get(up)
    return out


def read_names(node: ast.AST) -> set[str]:
    """Every bare name the node's code reads (loads), its decorators and annotations included."""
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def bound_names(fn: ast.FunctionDef | ast.AsyncFunctionDef, skip: ast.AST | None = None) -> set[str]:
    """Names a function binds locally (parameters, assignments, imports, nested defs), `skip` left out."""
    a = fn.args
    out = {x.arg for x in [*a.posonlyargs, *a.args, *a.kwonlyargs]}
    out |= {x.arg for x in (a.vararg, a.kwarg) if x is not None}
    stack: list[ast.AST] = list(fn.body)
    while stack:
        n = stack.pop()
        if n is skip:
            continue
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(n.name)
            stack.extend(getattr(n, "decorator_list", []))
            continue  # their own locals are theirs
        if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del)):
            out.add(n.id)
        elif isinstance(n, (ast.Import, ast.ImportFrom)):
            out |= {(al.asname or al.name).split(".")[0] for al in n.names}
        elif isinstance(n, ast.arg):
            out.add(n.arg)
        stack.extend(ast.iter_child_nodes(n))
    return out


def module_bindings(tree: ast.Module) -> dict[str, int]:
    """Names bound at module scope -> the first line binding them."""
    out: dict[str, int] = {}
    for stmt in tree.body:
        names: set[str] = set()
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(stmt.name)
        elif isinstance(stmt, (ast.Import, ast.ImportFrom)):
            names |= {(al.asname or al.name).split(".")[0] for al in stmt.names}
        else:
            names |= {n.id for n in ast.walk(stmt) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
        for name in names:
            out.setdefault(name, stmt.lineno)
    return out


def top_statement(tree: ast.Module, line: int) -> ast.stmt | None:
    """The module-scope statement that holds `line`."""
    for stmt in tree.body:
        first, last = span_of(stmt)
        if first <= line <= last:
            return stmt
    return None


def dedent_lines(lines: list[str], by: int) -> list[str] | None:
    """Lines with `by` leading spaces removed (blank lines kept); None when a line is indented less (a string
    literal spanning lines, tabs): such a block is not moved mechanically."""
    out = []
    for ln in lines:
        if not ln.strip():
            out.append("\n" if ln.endswith("\n") else "")
            continue
        if not ln.startswith(" " * by):
            return None
        out.append(ln[by:])
    return out


def indent_of(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def norm_value(text: str | None) -> str | None:
    """An option value as source text or str(): quotes dropped, so a quoted and a bare value compare equal."""
    if text is None:
        return None
    t = text.strip()
    if len(t) >= 2 and t[0] == t[-1] and t[0] in "'\"":
        t = t[1:-1]
    return t


def literal_dict(options: dict[str, str]) -> str:
    """Source text of an options dict, string values double-quoted like the keys."""

    def value(v: str) -> str:
        bare = norm_value(v)
        return f'"{bare}"' if bare is not None and bare != v.strip() else v

    return "{" + ", ".join(f'"{k}": {value(v)}' for k, v in options.items()) + "}"
