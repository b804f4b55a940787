"""Command-line switches that guard a line of the project: the documented behaviour a fix must keep working.

A cache clear behind `--rebuild`, a gradient check behind `--grad`: the code did not run in the measured command,
yet it is the user's contract. A rule that touches what such a line depends on lists the switch in the finding's
`must_keep`, so the fix engine runs the command with it too. Found statically from the project's sources (read
through `ctx.sources`, never imported): argparse `add_argument("--x", action="store_true")` switches (and
`"--x" in sys.argv` tests) whose value an enclosing `if` tests, on the line itself or, one or two calls up, on a
call of the function that holds it.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from warp_compile.probe.rules.context import RuleContext

_SWITCH_ACTIONS = {"store_true", "store_false", "store_const", "count", "append_const"}
_MAX_DEPTH = 2


@dataclass
class _File:
    tree: ast.Module
    parents: dict[ast.AST, ast.AST]


def _parse(ctx: RuleContext, file: str, cache: dict[str, _File | None]) -> _File | None:
    if file not in cache:
        tree = ctx.sources.tree(file)
        parents = {c: p for p in ast.walk(tree) for c in ast.iter_child_nodes(p)} if tree is not None else {}
        cache[file] = None if tree is None else _File(tree, parents)
    return cache[file]


def _project_files(ctx: RuleContext) -> list[str]:
    if ctx.scan is None:
        return []
    return sorted({m.file for m in ctx.scan.modules if m.file})


def switches(ctx: RuleContext, cache: dict[str, _File | None] | None = None) -> dict[str, str]:
    """{dest: "--flag"} of the argparse switches (no value) the project's files declare."""
    cache = {} if cache is None else cache
    out: dict[str, str] = {}
    for file in _project_files(ctx):
        f = _parse(ctx, file, cache)
        if f is None:
            continue
        for node in ast.walk(f.tree):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
                continue
            if node.func.attr != "add_argument":
                continue
            longs = [a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
            longs = [s for s in longs if s.startswith("--")]
            kw = {k.arg: k.value for k in node.keywords if k.arg}
            action = kw.get("action")
            if not longs or not (isinstance(action, ast.Constant) and action.value in _SWITCH_ACTIONS):
                continue
            dest_node = kw.get("dest")
            dest = (
                dest_node.value
                if isinstance(dest_node, ast.Constant) and isinstance(dest_node.value, str)
                else longs[0][2:].replace("-", "_")
            )
            out.setdefault(dest, longs[0])
    return out


def _tested_flags(test: ast.AST, dests: dict[str, str]) -> list[str]:
    """The switches an `if` test reads: `args.rebuild`, `rebuild`, `"--rebuild" in sys.argv`."""
    found: list[str] = []
    for n in ast.walk(test):
        if isinstance(n, ast.Attribute) and n.attr in dests:
            found.append(dests[n.attr])
        elif isinstance(n, ast.Name) and n.id in dests:
            found.append(dests[n.id])
        elif isinstance(n, ast.Constant) and isinstance(n.value, str) and n.value.startswith("--"):
            if n.value.lstrip("-") and " " not in n.value:
                found.append(n.value)
    return found


def _enclosing(f: _File, line: int) -> ast.AST | None:
    """The innermost statement that starts at `line`."""
    best = None
    for n in ast.walk(f.tree):
        if isinstance(n, ast.stmt) and n.lineno == line:
            if best is None or getattr(n, "col_offset", 0) >= getattr(best, "col_offset", 0):
                best = n
    return best


def _guards(f: _File, node: ast.AST, dests: dict[str, str]) -> tuple[list[str], ast.AST | None]:
    """(switches the enclosing ifs test, the function that holds the node when no if guards it)."""
    found: list[str] = []
    cur: ast.AST | None = node
    while cur is not None:
        parent = f.parents.get(cur)
        if isinstance(parent, ast.If) and cur in parent.body + parent.orelse:
            found.extend(_tested_flags(parent.test, dests))
        if isinstance(parent, ast.IfExp):
            found.extend(_tested_flags(parent.test, dests))
        if isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return found, parent
        cur = parent
    return found, None


def flags_guarding(ctx: RuleContext, file: str, line: int) -> list[str]:
    """The switches whose value decides whether `file:line` runs (empty when none, or the sources are unreadable)."""
    cache: dict[str, _File | None] = {}
    dests = switches(ctx, cache)
    seen: list[str] = []
    todo: list[tuple[str, int, int]] = [(file, line, 0)]
    visited: set[tuple[str, int]] = set()
    while todo:
        fl, ln, depth = todo.pop()
        if (fl, ln) in visited:
            continue
        visited.add((fl, ln))
        f = _parse(ctx, fl, cache)
        node = _enclosing(f, ln) if f is not None else None
        if f is None or node is None:
            continue
        found, func = _guards(f, node, dests)
        for s in found:
            if s not in seen:
                seen.append(s)
        if found or func is None or depth >= _MAX_DEPTH:
            continue
        name = func.name  # type: ignore[attr-defined]
        for other in _project_files(ctx):
            g = _parse(ctx, other, cache)
            if g is None:
                continue
            for n in ast.walk(g.tree):
                if isinstance(n, ast.Call) and _callee(n) == name:
                    stmt = n
                    while stmt is not None and not isinstance(stmt, ast.stmt):
                        stmt = g.parents.get(stmt)
                    if stmt is not None:
                        todo.append((other, stmt.lineno, depth + 1))
    return seen


def _callee(call: ast.Call) -> str | None:
    if isinstance(call.func, ast.Name):
        return call.func.id
    if isinstance(call.func, ast.Attribute):
        return call.func.attr
    return None
