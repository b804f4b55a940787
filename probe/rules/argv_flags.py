"""Command-line switches that guard a line of the project: the documented behaviour a fix must keep working.

A cache clear behind `--rebuild`, a gradient check behind `--grad`: the code did not run in the measured command,
yet it is the user's contract. A rule that touches what such a line depends on lists the switch in the finding's
`must_keep`, so the fix engine runs the command with it too. Found statically, from the scan's guard index
(`probe.scan.guards`): argparse `add_argument("--x", action="store_true")` switches (and `"--x" in sys.argv`
tests) whose value an enclosing `if` tests, on the line itself or, one or two calls up, around a call of the
function that holds it. Each question is a lookup; nothing here walks a syntax tree per finding.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..scan.calls import index_trees
from ..scan.guards import GuardIndex
from ..scan.guards import flags_guarding as _flags_guarding

if TYPE_CHECKING:
    from .context import RuleContext


def guard_index(ctx: RuleContext) -> GuardIndex:
    """The scan's index; for facts that came without one, an index of the project's files read once per context."""
    made = ctx.scan.guard_index if ctx.scan is not None else None
    if made is not None:
        return made
    if ctx.guard_index is None:
        files = sorted({m.file for m in ctx.scan.modules if m.file}) if ctx.scan is not None else []
        trees = ((f, t) for f in files if (t := ctx.sources.tree(f)) is not None)
        ctx.guard_index = index_trees(trees)
    return ctx.guard_index


def switches(ctx: RuleContext) -> dict[str, str]:
    """{dest: "--flag"} of the argparse switches (no value) the project's files declare."""
    return guard_index(ctx).switches()


def flags_guarding(ctx: RuleContext, file: str, line: int) -> list[str]:
    """The switches whose value decides whether `file:line` runs (empty when none, or the sources are unreadable)."""
    return _flags_guarding(guard_index(ctx), file, line)
