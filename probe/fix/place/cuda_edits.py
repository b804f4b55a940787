"""Line edits the CUDA rules (CS-5, CS-7, CS-8, CS-13) make, located with `ast` in the project's own lines.

The rules know a construct by its line (a kernel's `def`, a launch, a load call); the exact columns to change come
from parsing the file's text as the SourceView holds it, so an edit rewrites only the decorator, keyword or call it
means and keeps everything else on the line. Every function returns None when the text is not what it expects (a
kernel made by `wp.kernel(f)`, a call spread in a way it cannot rewrite, a file that is not the project's): the rule
then says why there is no edit instead of guessing.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from ...models.diagnosis import Edit
from ...ownership import owner_of
from ..edits import SourceView, insert_before, owned_path, replace_lines

if TYPE_CHECKING:
    from ..transform.context import Project


def is_dependency(ctx: Project, file: str) -> bool:
    """A file an installed distribution owns (as resolved when measuring), or inside one by its path. A project
    file the view cannot read (no sources given) is not a dependency's: it just gets no edit."""
    root = str(ctx.root) if ctx.root is not None else None
    hit = owner_of(file, ctx.report.owners, root)
    if hit is not None:
        return hit.owner == "dependency"
    return not owned_path(file.lstrip("/"))


def _last_name(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def kernel_def(src: SourceView, file: str, line: int) -> ast.FunctionDef | None:
    """The `def` of a decorated kernel at `line` (its def line, or a decorator line as Warp records it)."""
    t = src.tree(file)
    if t is None:
        return None
    for node in ast.walk(t):
        if isinstance(node, ast.FunctionDef) and (
            node.lineno == line or any(d.lineno <= line <= node.lineno for d in node.decorator_list)
        ):
            return node
    return None


def _kernel_decorator(fn: ast.FunctionDef) -> ast.expr | None:
    for d in fn.decorator_list:
        target = d.func if isinstance(d, ast.Call) else d
        if _last_name(target) == "kernel":
            return d
    return None


def splice(src: SourceView, file: str, line: int, col: int, end_col: int, text: str) -> Edit | None:
    """Replace columns col..end_col (0-based, as ast gives them: UTF-8 byte offsets) of one line by `text`."""
    lines = src.lines(file)
    if lines is None or not 1 <= line <= len(lines):
        return None
    raw = lines[line - 1].encode("utf-8")
    new = (raw[:col] + text.encode("utf-8") + raw[end_col:]).decode("utf-8")
    return replace_lines(src, file, line, line, new.rstrip("\n"))


def kernel_module_edit(src: SourceView, file: str, line: int, module: str) -> Edit | None:
    """`@wp.kernel` -> `@wp.kernel(module="<module>")` (or the module= keyword added to / replaced in a call)."""
    fn = kernel_def(src, file, line)
    dec = _kernel_decorator(fn) if fn is not None else None
    if dec is None:
        return None
    lit = f'module="{module}"'
    if not isinstance(dec, ast.Call):
        if dec.end_lineno != dec.lineno or dec.end_col_offset is None:
            return None
        lines = src.lines(file) or []
        text = lines[dec.lineno - 1].encode("utf-8")[dec.col_offset : dec.end_col_offset].decode("utf-8")
        return splice(src, file, dec.lineno, dec.col_offset, dec.end_col_offset, f"{text}({lit})")
    for kw in dec.keywords:
        if kw.arg == "module":
            v = kw.value
            if v.lineno != v.end_lineno or v.end_col_offset is None:
                return None
            return splice(src, file, v.lineno, v.col_offset, v.end_col_offset, f'"{module}"')
    if dec.end_col_offset is None or dec.end_lineno is None:
        return None
    sep = ", " if dec.args or dec.keywords else ""
    # insert before the closing parenthesis of the call, on its last line
    return splice(src, file, dec.end_lineno, dec.end_col_offset - 1, dec.end_col_offset - 1, sep + lit)


def calls_at(src: SourceView, file: str, line: int, names: set[str]) -> list[ast.Call]:
    """Calls of a function named in `names` (last identifier) that start at `line`."""
    t = src.tree(file)
    if t is None:
        return []
    return [
        n for n in ast.walk(t) if isinstance(n, ast.Call) and n.lineno == line and _last_name(n.func) in names
    ]


def keyword_edit(src: SourceView, file: str, call: ast.Call, name: str, value: str) -> Edit | None:
    """Set keyword `name` of `call` to the source text `value`: replace its value, or add it before the `)`."""
    for kw in call.keywords:
        if kw.arg == name:
            v = kw.value
            if v.lineno != v.end_lineno or v.end_col_offset is None:
                return None
            return splice(src, file, v.lineno, v.col_offset, v.end_col_offset, value)
    if call.end_lineno is None or call.end_col_offset is None:
        return None
    sep = ", " if call.args or call.keywords else ""
    return splice(src, file, call.end_lineno, call.end_col_offset - 1, call.end_col_offset - 1, f"{sep}{name}={value}")


def keyword_text(src: SourceView, file: str, call: ast.Call, name: str) -> str | None:
    for kw in call.keywords:
        if kw.arg == name:
            return ast.get_source_segment("".join(src.lines(file) or []), kw.value)
    return None


def statement_at(src: SourceView, file: str, line: int) -> ast.stmt | None:
    """The innermost statement that starts at `line`."""
    t = src.tree(file)
    if t is None:
        return None
    best: ast.stmt | None = None
    for n in ast.walk(t):
        if isinstance(n, ast.stmt) and n.lineno == line:
            best = n
    return best


def after_imports_line(src: SourceView, file: str) -> int | None:
    """The first line after the file's leading block of module-level imports (and any wp.config lines among them).

    A module option set here runs before any kernel of the file is defined and after `import warp as wp`.
    """
    t = src.tree(file)
    if t is None:
        return None
    last = None
    for node in t.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            last = node
            continue
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and last is None:
            continue  # the docstring
        if isinstance(node, ast.Assign) and not any(isinstance(n, ast.Call) for n in ast.walk(node.value)):
            continue  # constants between the imports and the first kernel
        break
    if last is None or last.end_lineno is None:
        return None
    return last.end_lineno + 1


def insert_lines(src: SourceView, file: str, line: int, text: str) -> Edit | None:
    return insert_before(src, file, line, text)
