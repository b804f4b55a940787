"""Read-only questions about an installed dependency's source, for the lines an upstream report quotes.

The run records where a dependency's code made something (a frame inside Warp); naming *why* it misbehaves sometimes
needs that file's text, e.g. the line that calls Python's salted `hash()`. Files are only read, never written.
"""

from __future__ import annotations

import ast
from functools import lru_cache


@lru_cache(maxsize=32)
def _tree(path: str) -> ast.Module | None:
    try:
        with open(path, encoding="utf-8") as fh:
            return ast.parse(fh.read())
    except (OSError, SyntaxError, ValueError):
        return None


def builtin_calls(path: str, name: str) -> list[int]:
    """Lines of `path` that call the builtin `name` (a bare `name(...)`, not a method), where the file never binds
    `name` itself; empty when the file cannot be read or parsed."""
    tree = _tree(path)
    if tree is None:
        return []
    for node in ast.walk(tree):
        bound = (isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store) and node.id == name) or (
            isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name == name
        ) or (isinstance(node, ast.alias) and (node.asname or node.name) == name)
        if bound:
            return []
    return sorted({n.lineno for n in ast.walk(tree)
                   if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == name})
