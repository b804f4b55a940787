"""The one place a settings finding gets its edit: `experiment` settings become lines at the entry point.

A rule that proposes process-wide Warp settings (CS-10's `enable_backward=False`, CS-11's `max_unroll`, CS-12's
header switch) states them once, as the `experiment` that `warp-compile try` measures. This post-pass turns those
settings into the edit that makes them permanent (`edits.settings_edit`: the top of the entry point, or a launcher
when the entry point is installed), so no settings rule builds its own and `fix` applies exactly what `try`
measured. Settings the hook provides itself (`keep_kernel_cache`) are no config line: such a finding keeps
whatever edit its rule wrote.
"""

from __future__ import annotations

from collections.abc import Iterable

from warp_compile.probe.edits import SourceView, settings_edit
from warp_compile.probe.experiment import SETTINGS
from warp_compile.probe.models import EntryPoint
from warp_compile.probe.models.diagnosis import Finding


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
    if not sources.has_sources:
        return
    for f in findings:
        settings = config_settings(f)
        if settings is None or f.edits:
            continue
        edit = settings_edit(sources, entry, settings, comment=f"warp-compile fix {f.mechanism}")
        if edit is None:
            continue
        f.edits = [edit]
        if f.applicability is None:
            f.applicability = "automatic"
        elif f.applicability == "manual":  # the rule judged it a trade: an edit to weigh, not one without an edit
            f.applicability = "review"
