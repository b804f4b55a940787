"""Where a process-wide Warp setting goes: one line at the entry point, or a launcher when that is installed code.

A module copies `enable_backward` from `wp.config` when it is created, so the line must run before anything imports
the kernel modules. The entry point (script, `python -m` module, console script) and its owner come from the report
(resolved when measuring); module names that carry a content hash are never written into a fix.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from ...hashdiff import content_hashed
from ...models import EntryPoint
from ...models.diagnosis import Edit, Location
from ...models.scan import ModuleInfo
from ..edits import SourceView, launcher_name, settings_edits, settings_place

if TYPE_CHECKING:
    from ..transform.context import Project

LINE = "wp.config.enable_backward = False  # forward-only run; delete to revert"


def launcher(entry: EntryPoint, src: SourceView | None = None) -> str:
    """A launcher of the user's own that sets the option before an installed entry point imports anything (named
    as the edit names it: a free name in the project)."""
    rest = "the same arguments"
    name = launcher_name(entry, src)  # the file the settings edit creates (settings_edits)
    if entry.kind == "console_script" and ":" in entry.name:
        mod, func = entry.name.split(":", 1)
        body = f"from {mod} import {func}\n{func}()"
    elif entry.kind == "module":
        body = f'runpy.run_module("{entry.name}", run_name="__main__", alter_sys=True)'
    else:
        body = f'runpy.run_path("{entry.file}", run_name="__main__")'
    imports = "import runpy\n" if "runpy" in body else ""
    owner = f" (it belongs to the installed {entry.distribution})" if entry.distribution else " (it is installed)"
    return (
        f"The entry point {entry.name or entry.file} is not yours to edit{owner}. Start it through a launcher of "
        f"your own that sets the option before anything imports the kernel modules, e.g. {name}:\n"
        f"{imports}import warp as wp\n{LINE}\n{body}\n"
        f"and run `python {name}` with {rest}. Every module the process creates is then forward-only."
    )


def entry_line_fix(ctx: Project, why: str) -> tuple[str, Location | None]:
    """One line where the measured command enters Python, or a launcher when that file is an installed one. The
    text and the location name the place the edit goes (`placement`): after the file's header, or right after its
    own `import warp`, which it then reuses."""
    entry = ctx.report.entry
    if entry is not None and entry.owner == "dependency":
        return launcher(entry, ctx.sources), None
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


def can_edit(ctx: Project) -> bool:
    """The diagnosis was given the project's sources (without them no rule can quote the text an edit replaces)."""
    return ctx.sources.available


def entry_point(ctx: Project, scanned: ModuleInfo | None = None) -> EntryPoint | None:
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
    ctx: Project, settings: dict[str, object], comment: str = "", scanned: ModuleInfo | None = None
) -> list[Edit]:
    """Process settings at the top of the entry point (or a launcher of the app's own when that is installed)."""
    if not can_edit(ctx):
        return []
    entry = entry_point(ctx, scanned)
    if entry is not None and entry.owner == "project" and (not entry.file or ctx.sources.rel(entry.file) is None):
        return []  # the project's own entry point, outside the sources given: a launcher would be the wrong place
    return settings_edits(ctx.sources, entry, settings, comment)


def scanned_entry(ctx: Project) -> ModuleInfo | None:
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
