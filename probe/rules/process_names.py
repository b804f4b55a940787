"""Modules whose names change from one process to the next, so the kernel cache, keyed on the name, never hits.

The measurement runs the command twice against one cache. A module the warm run compiled under a name the cold run
never used, made at the very line where the cold run made a module whose name the warm run never used, is the same
code under a new name: something in its naming differs per process (Python's `hash()` of a string is salted per
process unless PYTHONHASHSEED is fixed). Pairs come from the builds' triggering lines, with the Warp function that
made the kernel from the run's record, so the cause can be looked for where the name is made.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..models import Build, Report
from ..models.report import WarpSite


@dataclass
class Renamed:
    """One module built under a new name in the warm run, at the line where the cold run built it."""

    file: str
    line: int
    function: str
    cold: str
    warm: str
    warm_build: Build
    via: WarpSite | None  # the Warp function that made the kernel, when a Warp API made it for the app


def renamed_modules(report: Report) -> list[Renamed]:
    cold_names = {b.module for b in report.builds}
    warm_names = {b.module for b in report.warm_builds}
    gone: dict[tuple[str, int], list[Build]] = {}
    for b in report.builds:
        if b.module not in warm_names and b.trigger is not None:
            gone.setdefault((b.trigger.file, b.trigger.line), []).append(b)
    via = {c.module: c.via for c in report.kernel_creations}
    out: list[Renamed] = []
    for w in report.warm_builds:
        if w.status != "compiled" or w.module in cold_names or w.trigger is None:
            continue
        olds = gone.get((w.trigger.file, w.trigger.line)) or []
        if not olds:
            continue
        old = olds.pop(0)
        out.append(Renamed(file=w.trigger.file, line=w.trigger.line, function=w.trigger.function, cold=old.module,
                           warm=w.module, warm_build=w, via=via.get(old.module)))
    return out
