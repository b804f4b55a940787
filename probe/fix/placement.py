"""Where a process-wide Warp setting goes in a Python file, read from the file's syntax tree.

A `wp.config.X = V` line only reaches the modules created after it runs, so it must come before anything that could
create a kernel module; yet the lines Python wants first must stay first: a shebang, an encoding line, the leading
comments (a license header), the module docstring and every `from __future__` import (anywhere else such an import
is a SyntaxError). The file's own top-level `import warp` (any alias) is reused, never duplicated:

1. the file imports warp at top level before any statement that could create a kernel module: the setting goes
   right after that import (inside a top-level `try:` that holds it, at its indent);
2. it imports warp later: `import warp` moves up, with the setting, to the end of the header;
3. it does not import warp at top level (or only under `if TYPE_CHECKING:` or in a function): `import warp as wp`
   and the setting go to the end of the header.

"Could create a kernel module" is judged per statement: an import of anything but the standard library and a few
numeric packages that never import Warp (warp's own submodules included: they define kernels), and any statement
that runs code (a call, a decorated definition, a class body). Plain definitions, literal assignments and
`if TYPE_CHECKING:` blocks are harmless. Pure functions over the file's text; `edits.top_insert` makes the edits.
"""

from __future__ import annotations

import ast
import io
import re
import sys
import tokenize
from dataclasses import dataclass

# packages without Warp in them that entry points commonly import before warp
NO_WARP = frozenset({"numpy", "scipy", "matplotlib", "pandas", "yaml", "tqdm", "PIL", "h5py", "typing_extensions"})
SAFE_MODULES = frozenset(sys.stdlib_module_names) | NO_WARP
_CODING = re.compile(r"^[ \t\f]*#.*?coding[:=][ \t]*[-\w.]+")
_WP = re.compile(r"^wp\.", re.M)


@dataclass(frozen=True)
class Placement:
    """Where the setting goes and how it names warp there."""

    line: int  # the setting's lines go before this line of the file (1-based; len + 1 appends)
    alias: str  # the name warp is bound to where the setting runs
    import_line: str  # the import the inserted block brings ("" when the file's own import is reused)
    indent: str = ""  # inside a top-level `try:` that imports warp: its body's indent
    blank_before: bool = False
    blank_after: bool = False
    where: str = ""  # the place in words, for a fix text: "right after `import warp as wp` (line 7)"
    # the file's warp import that moves up: (its first line, the last line replaced, what stays in their place)
    move: tuple[int, int, str] | None = None

    def block(self, body: str) -> str:
        """`body` (lines written against `wp`) as the text to insert here: the alias used, the import when one is
        needed, the indent, and blank lines that keep it apart from its neighbours."""
        text = _WP.sub(self.alias + ".", body.rstrip("\n") + "\n") if self.alias != "wp" else body.rstrip("\n") + "\n"
        if self.import_line:
            text = self.import_line + "\n" + text
        if self.indent:
            text = "".join(self.indent + ln if ln.strip() else ln for ln in text.splitlines(keepends=True))
        return ("\n" if self.blank_before else "") + text + ("\n" if self.blank_after else "")


def _is_docstring(node: ast.stmt) -> bool:
    return isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)


def _is_future(node: ast.stmt) -> bool:
    return isinstance(node, ast.ImportFrom) and node.module == "__future__"


def _type_checking(node: ast.stmt) -> bool:
    if not isinstance(node, ast.If) or node.orelse:
        return False
    t = node.test
    return (isinstance(t, ast.Name) and t.id == "TYPE_CHECKING") or (
        isinstance(t, ast.Attribute) and t.attr == "TYPE_CHECKING"
    )


def _safe_module(name: str | None, level: int = 0) -> bool:
    return level == 0 and bool(name) and name.split(".")[0] in SAFE_MODULES  # type: ignore[union-attr]


def _literal(node: ast.expr | None) -> bool:
    if node is None:
        return True
    try:
        ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False
    return True


def risky(node: ast.stmt) -> bool:
    """Could running this top-level statement create a kernel module (import one, or run code that may)?"""
    if isinstance(node, ast.Import):
        return any(not _safe_module(a.name) for a in node.names)
    if isinstance(node, ast.ImportFrom):
        return not _is_future(node) and not _safe_module(node.module, node.level)
    if _is_docstring(node) or _type_checking(node) or isinstance(node, ast.Pass):
        return False
    if isinstance(node, ast.Assign):
        return not _literal(node.value)
    if isinstance(node, ast.AnnAssign):
        return not _literal(node.value)
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return bool(node.decorator_list) or not all(_literal(d) for d in (*node.args.defaults, *node.args.kw_defaults))
    if isinstance(node, ast.Try):
        return any(risky(s) for s in node.body)
    return True


def _warp_alias(node: ast.Import) -> str | None:
    for a in node.names:
        if a.name == "warp":
            return a.asname or "warp"
    return None


def _import_line(alias: str) -> str:
    return "import warp" if alias == "warp" else f"import warp as {alias}"


def _alone(lines: list[str], node: ast.stmt, tree: ast.Module) -> bool:
    """The statement has its lines to itself: nothing before it on its first line, no other statement on them."""
    end = node.end_lineno or node.lineno
    if lines[node.lineno - 1][: node.col_offset].strip():
        return False
    for other in ast.walk(tree):
        if isinstance(other, ast.stmt) and other is not node and not _contains(other, node):
            if node.lineno <= other.lineno <= end or node.lineno <= (other.end_lineno or other.lineno) <= end:
                return False
    return True


def _contains(outer: ast.stmt, inner: ast.stmt) -> bool:
    return outer.lineno <= inner.lineno and (outer.end_lineno or 0) >= (inner.end_lineno or inner.lineno)


def _comment(lines: list[str], line: int) -> str:
    """The trailing comment of `line` (tokenized, so a `#` inside a string is not one), with its leading space."""
    try:
        for tok in tokenize.generate_tokens(io.StringIO(lines[line - 1]).readline):
            if tok.type == tokenize.COMMENT:
                return "  " + tok.string
    except (tokenize.TokenError, IndentationError, SyntaxError):
        pass
    return ""


def _without_warp(lines: list[str], node: ast.Import) -> str:
    """The import statement's line once `warp` moved out of it ("" when warp was its only name)."""
    rest = [a for a in node.names if a.name != "warp"]
    if not rest:
        return ""
    names = ", ".join(a.name + (f" as {a.asname}" if a.asname else "") for a in rest)
    return " " * node.col_offset + f"import {names}" + _comment(lines, node.lineno)


def _header(tree: ast.Module, lines: list[str]) -> tuple[int, list[str]] | None:
    """(the line the header ends before, what the header holds in words); None when a statement shares a line
    with the header (`from __future__ import x; import y`: no line lies between them)."""
    body = tree.body
    i = 0
    parts: list[str] = []
    if lines and lines[0].startswith("#!"):
        parts.append("the shebang")
    if any(_CODING.match(ln) for ln in lines[:2]):
        parts.append("the encoding line")
    first = _first_line(body[0]) if body else len(lines) + 1
    leading = lines[: first - 1]
    if any(ln.lstrip().startswith("#") and not ln.startswith("#!") and not _CODING.match(ln) for ln in leading):
        parts.append("the leading comments")
    if body and _is_docstring(body[0]):
        i = 1
        parts.append("the module docstring")
    future = 0
    while i < len(body) and _is_future(body[i]):
        i += 1
        future += 1
    if future:
        parts.append("the `from __future__` import" + ("s" if future > 1 else ""))
    if i == 0:
        return first, parts
    end = body[i - 1].end_lineno or body[i - 1].lineno
    if i < len(body) and _first_line(body[i]) <= end:
        return None
    return end + 1, parts


def _first_line(node: ast.stmt) -> int:
    decorators = getattr(node, "decorator_list", None) or []
    return min([node.lineno, *(d.lineno for d in decorators)])


def _words(parts: list[str]) -> str:
    if not parts:
        return "at the top, before the first statement"
    return "after " + (parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1])


def _find_warp(tree: ast.Module, start: int) -> tuple[ast.Import, ast.Try | None, bool] | None:
    """The first top-level statement from `start` that binds warp (`import warp [as X]`, also in a top-level
    `try:` body), its try, and whether a statement that could create a kernel module runs before it."""
    seen_risky = False
    for node in tree.body[start:]:
        if isinstance(node, ast.Import) and _warp_alias(node):
            others = ast.Import(names=[a for a in node.names if a.name != "warp"])
            return node, None, seen_risky or risky(others)
        if isinstance(node, ast.Try):
            for j, s in enumerate(node.body):
                if isinstance(s, ast.Import) and _warp_alias(s):
                    others = ast.Import(names=[a for a in s.names if a.name != "warp"])
                    return s, node, seen_risky or any(risky(x) for x in node.body[:j]) or risky(others)
        seen_risky = seen_risky or risky(node)
    return None


def place(text: str) -> Placement | None:
    """Where the setting goes in the Python source `text` (newlines as `\\n`); None when it does not parse, or no
    line lies between the header and the next statement."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return None
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    head = _header(tree, lines)
    if head is None:
        return None
    at, parts = head
    start = sum(1 for n in tree.body if (n.end_lineno or n.lineno) < at)
    found = _find_warp(tree, start)

    def at_header(alias: str, move: tuple[int, int, str] | None = None, note: str = "") -> Placement:
        before = at >= 2 and bool(lines[at - 2].strip())
        after = at <= len(lines) and bool(lines[at - 1].strip())
        return Placement(line=at, alias=alias, import_line=_import_line(alias), blank_before=before,
                         blank_after=after, where=_words(parts) + note, move=move)

    if found is None:
        return at_header("wp")
    node, in_try, late = found
    alias = _warp_alias(node) or "wp"
    stmt = node.lineno
    if not late and _alone(lines, node, tree):
        indent = lines[stmt - 1][: node.col_offset] if in_try is not None else ""  # tabs stay tabs
        where = f"right after `{lines[stmt - 1].strip()}` (line {stmt})"
        return Placement(line=(node.end_lineno or stmt) + 1, alias=alias, import_line="", indent=indent, where=where)
    if in_try is None and node.end_lineno == stmt and _alone(lines, node, tree):
        stays = _without_warp(lines, node)
        last = stmt
        if not stays and 2 <= stmt < len(lines) and not lines[stmt - 2].strip() and not lines[stmt].strip():
            last = stmt + 1  # the import stood alone between blank lines: take one of them with it
        note = (f"; the file's `{lines[stmt - 1].strip()}` (line {stmt}) moves up with it, above the imports that "
                "could create kernel modules")
        return at_header(alias, (stmt, last, stays), note)
    return at_header("wp")


def warp_bound_before(text: str, line: int) -> str | None:
    """The name a top-level `import warp [as X]` above `line` binds (None when none does): a block inserted at
    `line` can use it instead of importing warp again."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return None
    for node in tree.body:
        if (node.end_lineno or node.lineno) >= line:
            break
        if isinstance(node, ast.Import) and _warp_alias(node):
            return _warp_alias(node)
    return None
