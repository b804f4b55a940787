"""Statements moved, inserted and removed: the edits every settings and option fix is made of.

Each function reads the file through a `SourceView` and returns `Edit`s (or none, when the statement is not one a
line edit can move safely: it spans a block, a comment sits in the way, a name it reads is assigned in between).
"""

from __future__ import annotations

import ast

from ...models.diagnosis import Edit
from ..edits import SourceView, insert_before, replace_lines


def _source(view: SourceView, file: str) -> tuple[list[str], ast.Module | None]:
    """The project file's lines and its parsed tree (no tree without lines: a file the view does not hold)."""
    lines = view.lines(file)
    return (lines, view.tree(file)) if lines else ([], None)


def statement_end(view: SourceView, file: str, line: int) -> int:
    """The last line of the statement that starts at `file:line` (a parenthesised import spans several)."""
    lines, tree = _source(view, file)
    if not lines or tree is None:
        return line
    for node in ast.walk(tree):
        if isinstance(node, ast.stmt) and node.lineno == line:
            return getattr(node, "end_lineno", None) or line
    return line


def move_line_edits(view: SourceView, file: str, line: int, before: int, prefix: str = "") -> list[Edit]:
    """Move the one-line statement at `file:line` above line `before` (with `prefix` lines first, e.g. an import of
    warp that is not above `before` yet). Empty when the statement spans lines or the file is not the project's."""
    lines = view.lines(file)
    if lines is None or not 1 <= before < line <= len(lines) or statement_end(view, file, line) != line:
        return []
    text = lines[line - 1]
    if text[:1].isspace():  # indented: it belongs to a block, not module scope
        return []
    drop = replace_lines(view, file, line, line, "")
    add = insert_before(view, file, before, prefix + text)
    if drop is None or add is None:
        return []
    return [add, drop]


def after_statement_edit(view: SourceView, file: str, line: int, text: str) -> Edit | None:
    """Insert `text` right after the statement that starts at `file:line`."""
    end = statement_end(view, file, line)
    return insert_before(view, file, end + 1, text)


def remove_statement_edit(view: SourceView, file: str, line: int) -> Edit | None:
    """Delete the simple statement that starts at `file:line` (all its lines); `pass` at its indent when it is the
    only statement of its block. None when no simple statement starts there, or the file is not the project's."""
    lines, tree = _source(view, file)
    if not lines or tree is None:
        return None
    simple = (ast.Expr, ast.Assign, ast.AugAssign, ast.AnnAssign)
    for parent in ast.walk(tree):
        for name in ("body", "orelse", "finalbody"):
            block = getattr(parent, name, None)
            if not isinstance(block, list):
                continue
            for stmt in block:
                if not isinstance(stmt, simple) or stmt.lineno != line:
                    continue
                end = getattr(stmt, "end_lineno", None) or line
                if any(isinstance(s, ast.stmt) and s is not stmt and s.lineno in range(line, end + 1) for s in block):
                    return None  # `a(); b()` on one line: not a statement of its own
                only = len(block) == 1 and not isinstance(parent, ast.Module)
                indent = lines[line - 1][: len(lines[line - 1]) - len(lines[line - 1].lstrip())]
                return replace_lines(view, file, line, end, f"{indent}pass" if only else "")
    return None




def _block_of(tree: ast.AST, line: int) -> tuple[list[ast.stmt], int] | None:
    """(the statement list that holds a statement starting at `line`, its index there)."""
    for parent in ast.walk(tree):
        for name in ("body", "orelse", "finalbody"):
            block = getattr(parent, name, None)
            if isinstance(block, list):
                for i, stmt in enumerate(block):
                    if isinstance(stmt, ast.stmt) and stmt.lineno == line:
                        return block, i
    return None


def move_statement_up_edits(view: SourceView, file: str, line: int, before: int) -> list[Edit]:
    """Move the statement at `file:line` above the statement at `before` of the same block (a reorder inside a
    function). Statically safe only: both in one block, and the moved statement reads no name that the statements
    it jumps over assign. Empty when any of that does not hold."""
    lines = view.lines(file)
    if not lines or before >= line:
        return []
    tree = view.tree(file)
    if tree is None:
        return []
    here, there = _block_of(tree, line), _block_of(tree, before)
    if here is None or there is None or here[0] is not there[0]:
        return []
    block, i = here
    j = there[1]
    moved = block[i]
    reads = {n.id for n in ast.walk(moved) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    for stmt in block[j:i]:
        assigned = {n.id for n in ast.walk(stmt)
                    if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del))}
        if reads & assigned:
            return []
    end = getattr(moved, "end_lineno", None) or line
    if end + 1 <= len(lines) and getattr(block[i - 1], "end_lineno", 0) != line - 1:
        return []  # a comment or blank line between: keep it simple, leave it to a person
    text = "".join(lines[line - 1 : end])
    drop = replace_lines(view, file, line, end, "")
    add = insert_before(view, file, block[j].lineno, text)
    return [add, drop] if drop is not None and add is not None else []
