"""The one place a settings finding gets its edit: `experiment` settings become lines at the entry point.

A rule that proposes process-wide Warp settings (CS-10's `enable_backward=False`, CS-11's `max_unroll`, CS-12's
header switch) states them once, as the `experiment` that `warp-compile try` measures. This post-pass turns those
settings into the edit that makes them permanent (`edits.settings_edits`: the top of the entry point, or a launcher
when the entry point is installed), so no settings rule builds its own and `fix` applies exactly what `try`
measured. Settings the hook provides itself (`keep_kernel_cache`) are no config line: such a finding keeps
whatever edit its rule wrote. A finding its rule rated `manual` (no edit, and why) is left so: `manual` means no
edit. Every settings finding's first location is then the line its edit goes to.
"""

from __future__ import annotations

from collections.abc import Iterable

from ..experiment import SETTINGS
from ..models import EntryPoint
from ..models.diagnosis import Finding, Location
from .edits import SourceView, settings_edits


def config_settings(f: Finding) -> dict[str, bool | int | str | None] | None:
    """The finding's experiment when every setting in it is a `wp.config` line, else None."""
    if not f.experiment:
        return None
    if not all(k in SETTINGS and SETTINGS[k].config for k in f.experiment):
        return None
    return dict(f.experiment)


def add_settings_edits(findings: Iterable[Finding], sources: SourceView, entry: EntryPoint | None) -> None:
    """Give each finding with config settings and no edit the entry-point edit (applicability automatic unless its
    rule said otherwise); a finding whose entry point the tool cannot edit stays as it is. Without project sources
    (a diagnosis of a report alone) no edit is made: where the entry point's file is cannot be told."""
    if not sources.available:
        return
    for f in findings:
        settings = config_settings(f)
        if settings is None:
            continue
        if not f.edits and f.applicability != "manual":
            edits = settings_edits(sources, entry, settings, comment=f"warp-compile fix {f.mechanism}")
            if edits:
                f.edits = edits
                if f.applicability is None:
                    f.applicability = "automatic"
        point_at_edit(f, settings)


def point_at_edit(f: Finding, settings: dict[str, object]) -> None:
    """Make the finding's first location the line its settings edit goes to (a rule may have pointed at the
    import the setting must precede, or at line 1)."""
    for e in f.edits:
        if e.create or e.old or not any(f".config.{k} = " in e.new for k in settings):
            continue
        rest = [loc for loc in f.locations if (loc.file, loc.line) != (e.file, e.start_line)]
        names = ", ".join(settings)
        here = Location(file=e.file, line=e.start_line, note=f"the {names} line goes here", owner="project")
        f.locations = [here, *rest]
        return
