"""The gradient paths a forward-only setting must keep working, and how to say them.

CS-10 turns backward code off for modules this run never differentiated. Other paths may: a `wp.Tape` over the same
kernels in a file this command never imported, behind a switch (`--grad`), or in an installed library's own code
the run did not reach (`dependency_tapes`). Each is named with its file:line, and the switches that lead to the
project's own tapes become must-keep invocations that `fix` runs as well.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..models import Build
from ..models.scan import KernelDef, TapeFact
from .argv_flags import flags_guarding
from .context import RuleContext
from .dependency_tapes import unreached_tapes

PATHS_SHOWN = 4

# per target module: (its scanned kernel definitions, tapes over them in files this run never imported, its builds)
Target = tuple[Sequence[KernelDef], Sequence[TapeFact], Sequence[Build]]


def paths_text(paths: list[str]) -> str:
    """The tapes on other paths, a few named: a large project has dozens (tests, examples) and the reader needs the
    count and where to look, not every line."""
    if len(paths) <= PATHS_SHOWN:
        return "; ".join(paths)
    files = {p.split(" at ", 1)[-1].split(":", 1)[0] for p in paths}
    return (f"{len(paths)} wp.Tape sites in {len(files)} files (" + "; ".join(paths[:PATHS_SHOWN])
            + f"; and {len(paths) - PATHS_SHOWN} more)")


def differentiation(ctx: RuleContext, targets: list[Target]) -> tuple[list[str], list[list[str]]]:
    """(what a person must keep working, argv variants that exercise it): the tapes over these kernels on other
    paths (the scan's, and an installed library's own), with the command-line switches that lead there."""
    paths: list[str] = []
    keep: list[list[str]] = []
    tapes = [t for _defs, unreached, _builds in targets for t in unreached]
    if ctx.scan is not None:
        names = {d.name for defs, _u, _b in targets for d in defs}
        tapes += [t for t in ctx.scan.tapes if set(t.launched_kernels) & names and t not in tapes]
    files = {k.file for _d, _u, builds in targets for b in builds for k in b.kernels if k.file}
    for dist, file, line in unreached_tapes(ctx, sorted(files)):
        where = f"the installed {dist}'s wp.Tape / backward at {file}:{line} (code this run did not reach)"
        if where not in paths:
            paths.append(where)
    for t in tapes:
        where = f"the wp.Tape at {t.file}:{t.line}"
        flags = flags_guarding(ctx, t.file, t.line)
        if flags:
            where += f" (run with {' '.join(flags)})"
            if flags not in keep:
                keep.append(flags)
        if where not in paths:
            paths.append(where)
    return paths, keep
