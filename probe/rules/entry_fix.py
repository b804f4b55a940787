"""Where a process-wide Warp setting goes: one line at the entry point, or a launcher when that is installed code.

A module copies `enable_backward` from `wp.config` when it is created, so the line must run before anything imports
the kernel modules. The entry point (script, `python -m` module, console script) and its owner come from the report
(resolved when measuring); module names that carry a content hash are never written into a fix.
"""

from __future__ import annotations

import ast
import os
from pathlib import Path
from typing import TYPE_CHECKING

from ..edits import insert_before, replace_lines, settings_edits, settings_place
from ..models import EntryPoint
from ..models.diagnosis import Edit, Location
from ..models.scan import ModuleInfo
from .helpers import content_hashed

if TYPE_CHECKING:
    from .context import RuleContext

LINE = "wp.config.enable_backward = False  # forward-only run; delete to revert"


def launcher(entry: EntryPoint) -> str:
    """A launcher of the user's own that sets the option before an installed entry point imports anything."""
    rest = "the same arguments"
    if entry.kind == "console_script" and ":" in entry.name:
        mod, func = entry.name.split(":", 1)
        body = f"from {mod} import {func}\n{func}()"
        name = f"run_{func}.py"
    elif entry.kind == "module":
        body = f'runpy.run_module("{entry.name}", run_name="__main__", alter_sys=True)'
        name = f"run_{entry.name.rsplit('.', 1)[-1]}.py"
    else:
        body = f'runpy.run_path("{entry.file}", run_name="__main__")'
        name = "run_forward_only.py"
    imports = "import runpy\n" if "runpy" in body else ""
    owner = f" (it belongs to the installed {entry.distribution})" if entry.distribution else " (it is installed)"
    return (
        f"The entry point {entry.name or entry.file} is not yours to edit{owner}. Start it through a launcher of "
        f"your own that sets the option before anything imports the kernel modules, e.g. {name}:\n"
        f"{imports}import warp as wp\n{LINE}\n{body}\n"
        f"and run `python {name}` with {rest}. Every module the process creates is then forward-only."
    )


def entry_line_fix(ctx: RuleContext, why: str) -> tuple[str, Location | None]:
    """One line where the measured command enters Python, or a launcher when that file is an installed one. The
    text and the location name the place the edit goes (`placement`): after the file's header, or right after its
    own `import warp`, which it then reuses."""
    entry = ctx.report.entry
    if entry is not None and entry.owner == "dependency":
        return launcher(entry), None
    if entry is not None and entry.file and entry.owner == "project":
        where = ctx.rel(entry.file)
        p = settings_place(ctx.sources, entry.file)
        if p is None:
            place, line, lines = "at the top", 1, f"import warp as wp\n{LINE}\n"
        else:
            place, line, lines = f"{p.where}, at line {p.line}", p.line, p.block(LINE).strip("\n") + "\n"
            if p.move is not None:
                lines += f"and take warp out of the import at line {p.move[0]} (it moves here)\n"
        return (
            f"In the entry point {where} ({why}), {place}, before anything imports the kernel modules, add:\n"
            f"{lines}"
            "A module copies enable_backward from wp.config when it is created, so the line must run first.",
            ctx.loc(entry.file, line, "set wp.config.enable_backward = False here"),
        )
    return (
        f"At the top of the script or module you run ({why}), before anything imports the kernel modules, add:\n"
        f"import warp as wp\n{LINE}\n"
        "A module copies enable_backward from wp.config when it is created, so the line must run first.",
        None,
    )


def module_lines(names: list[str]) -> tuple[str, list[str]]:
    """Per-module option lines for the names a user can write down; generated (content-hashed) names are left out."""
    stable = [n for n in names if not content_hashed(n)]
    hashed = [n for n in names if content_hashed(n)]
    lines = "\n".join(f'wp.get_module("{n}").options["enable_backward"] = False' for n in stable)
    return lines, hashed


# ------------------------------------------------------------------------------------------------ the fix as edits


def can_edit(ctx: RuleContext) -> bool:
    """The diagnosis was given the project's sources (without them no rule can quote the text an edit replaces)."""
    return ctx.sources.available


def entry_point(ctx: RuleContext, scanned: ModuleInfo | None = None) -> EntryPoint | None:
    """The measured entry point; for a report that did not record one, the scanned file the command runs."""
    if ctx.report.entry is not None:
        return ctx.report.entry
    scanned = scanned or scanned_entry(ctx)
    if scanned is None or ctx.root is None:
        return None
    kind = "module" if "-m" in ctx.report.command else "script"
    name = scanned.name.removesuffix(".__main__") if kind == "module" else scanned.file
    return EntryPoint(kind=kind, name=name, file=str(ctx.root / scanned.file), owner="project")


def entry_settings_edits(
    ctx: RuleContext, settings: dict[str, object], comment: str = "", scanned: ModuleInfo | None = None
) -> list[Edit]:
    """Process settings at the top of the entry point (or a launcher of the app's own when that is installed)."""
    if not can_edit(ctx):
        return []
    entry = entry_point(ctx, scanned)
    if entry is not None and entry.owner == "project" and (not entry.file or ctx.sources.rel(entry.file) is None):
        return []  # the project's own entry point, outside the sources given: a launcher would be the wrong place
    return settings_edits(ctx.sources, entry, settings, comment)


def _source(ctx: RuleContext, file: str) -> tuple[list[str], ast.Module | None]:
    """The project file's lines and its parsed tree (no tree without lines: a file the view does not hold)."""
    lines = ctx.sources.lines(file)
    return (lines, ctx.sources.tree(file)) if lines else ([], None)


def statement_end(ctx: RuleContext, file: str, line: int) -> int:
    """The last line of the statement that starts at `file:line` (a parenthesised import spans several)."""
    lines, tree = _source(ctx, file)
    if not lines or tree is None:
        return line
    for node in ast.walk(tree):
        if isinstance(node, ast.stmt) and node.lineno == line:
            return getattr(node, "end_lineno", None) or line
    return line


def move_line_edits(ctx: RuleContext, file: str, line: int, before: int, prefix: str = "") -> list[Edit]:
    """Move the one-line statement at `file:line` above line `before` (with `prefix` lines first, e.g. an import of
    warp that is not above `before` yet). Empty when the statement spans lines or the file is not the project's."""
    lines = ctx.sources.lines(file)
    if lines is None or not 1 <= before < line <= len(lines) or statement_end(ctx, file, line) != line:
        return []
    text = lines[line - 1]
    if text[:1].isspace():  # indented: it belongs to a block, not module scope
        return []
    drop = replace_lines(ctx.sources, file, line, line, "")
    add = insert_before(ctx.sources, file, before, prefix + text)
    if drop is None or add is None:
        return []
    return [add, drop]


def after_statement_edit(ctx: RuleContext, file: str, line: int, text: str) -> Edit | None:
    """Insert `text` right after the statement that starts at `file:line`."""
    end = statement_end(ctx, file, line)
    return insert_before(ctx.sources, file, end + 1, text)


def remove_statement_edit(ctx: RuleContext, file: str, line: int) -> Edit | None:
    """Delete the simple statement that starts at `file:line` (all its lines); `pass` at its indent when it is the
    only statement of its block. None when no simple statement starts there, or the file is not the project's."""
    lines, tree = _source(ctx, file)
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
                return replace_lines(ctx.sources, file, line, end, f"{indent}pass" if only else "")
    return None


def scanned_entry(ctx: RuleContext) -> ModuleInfo | None:
    """The scanned module the measured command runs as __main__."""
    scan = ctx.scan
    if scan is None:
        return None
    cmd = list(ctx.report.command)
    if "-m" in cmd:
        i = cmd.index("-m")
        if i + 1 < len(cmd):
            name = cmd[i + 1]
            return scan.module_info(name + ".__main__") or scan.module_info(name)
    for tok in cmd[1:]:
        if tok.endswith(".py"):
            p = Path(tok)
            if not p.is_absolute():
                p = Path(ctx.report.cwd) / p
            for base in [ctx.root, Path(scan.root) if scan.root else None]:
                if base is None:
                    continue
                try:
                    rel = Path(os.path.relpath(p, base)).as_posix()
                except ValueError:
                    continue
                m = scan.module_of_file(rel)
                if m is not None:
                    return m
    mains = [m for m in scan.modules if m.main_alias == "__main__" and m.has_main_guard]
    return mains[0] if len(mains) == 1 else None



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


def move_statement_up_edits(ctx: RuleContext, file: str, line: int, before: int) -> list[Edit]:
    """Move the statement at `file:line` above the statement at `before` of the same block (a reorder inside a
    function). Statically safe only: both in one block, and the moved statement reads no name that the statements
    it jumps over assign. Empty when any of that does not hold."""
    lines = ctx.sources.lines(file)
    if not lines or before >= line:
        return []
    tree = ctx.sources.tree(file)
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
        assigned = {n.id for n in ast.walk(stmt) if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del))}
        if reads & assigned:
            return []
    end = getattr(moved, "end_lineno", None) or line
    if end + 1 <= len(lines) and getattr(block[i - 1], "end_lineno", 0) != line - 1:
        return []  # a comment or blank line between: keep it simple, leave it to a person
    text = "".join(lines[line - 1 : end])
    drop = replace_lines(ctx.sources, file, line, end, "")
    add = insert_before(ctx.sources, file, block[j].lineno, text)
    return [add, drop] if drop is not None and add is not None else []
