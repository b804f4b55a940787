"""Where a process-wide Warp setting goes: one line at the entry point, or a launcher when that is installed code.

A module copies `enable_backward` from `wp.config` when it is created, so the line must run before anything imports
the kernel modules. The entry point (script, `python -m` module, console script) and its owner come from the report
(resolved when measuring); module names that carry a content hash are never written into a fix.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from warp_compile.probe.diagnosis_models import Location
from warp_compile.probe.models import EntryPoint
from warp_compile.probe.rules.helpers import content_hashed

if TYPE_CHECKING:
    from warp_compile.probe.rules.context import RuleContext

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
    """One line where the measured command enters Python, or a launcher when that file is an installed one."""
    entry = ctx.report.entry
    if entry is not None and entry.owner == "dependency":
        return launcher(entry), None
    if entry is not None and entry.file and entry.owner == "project":
        where = ctx.rel(entry.file)
        return (
            f"At the top of the entry point {where} ({why}), before anything imports the kernel modules, add:\n"
            f"import warp as wp\n{LINE}\n"
            "A module copies enable_backward from wp.config when it is created, so the line must run first.",
            ctx.loc(entry.file, 1, "set wp.config.enable_backward = False at the top"),
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
