"""Advice about an installed library's code, said to the right people.

A rule writes its fix text the same way whoever owns the code ("remove wp.clear_kernel_cache() at <file>:4"). When
that file lies in an installed distribution, the user must not be sent there: the change belongs to the library's
maintainers. This post-pass of the diagnosis names such a file as its maintainers do (`pkg/mod.py`), says whose
change it is, and, when the rule made no upstream report, makes one from the finding: its places, its estimate
and how many samples that rests on.
"""

from __future__ import annotations

import re

from .models.diagnosis import Finding, UpstreamReport

INSTALLED_PATH = re.compile(r"(?<![\w/])(/[^\s`'\"()]*/(?:site|dist)-packages/([^\s`'\":()]+))")


def installed_paths(text: str) -> list[str]:
    """Absolute paths inside an installed distribution that `text` names."""
    return [m.group(1) for m in INSTALLED_PATH.finditer(text)]


def _dist_name(path: str) -> str:
    m = INSTALLED_PATH.search(path)
    return m.group(2) if m else path


def _owner(f: Finding) -> str:
    dists = [loc.distribution for loc in f.locations if loc.owner == "dependency" and loc.distribution]
    return dists[0] if dists else "the installed library"


def address_to_maintainers(f: Finding) -> None:
    """Rewrite a fix text that points at an installed file: the path as its maintainers name it, the change marked
    as theirs, and an upstream report when the finding has none (nothing of the finding is dropped)."""
    paths = installed_paths(f.fix)
    if not paths:
        return
    dist = _owner(f)
    change = INSTALLED_PATH.sub(lambda m: m.group(2), f.fix)
    f.fix = (
        f"The code to change is {dist}'s (installed: do not edit it in place); the change is for its maintainers, "
        f"in the upstream report: {change}"
    )
    if f.upstream is None:
        places = [loc for loc in f.locations if loc.owner == "dependency"]
        text = (
            f"{f.title}\n\nMeasured with warp-compile (cold Warp kernel cache)"
            + (f": about {f.estimated_saving_ms:,.0f} ms per cold start" if f.estimated_saving_ms else "")
            + (" (one sample)" if f.samples <= 1 else f" ({f.samples} samples)")
            + ".\n\nWhere, in " + dist + ":\n"
            + "\n".join(f"- {_dist_name(p.file)}:{p.line}: {p.note}" for p in places)
            + f"\n\nSuggested change: {change}\n"
        )
        f.upstream = UpstreamReport(
            distribution=None if dist == "the installed library" else dist,
            places=[p.model_copy(update={"file": _dist_name(p.file)}) for p in places],
            measured_ms=f.estimated_saving_ms,
            change=change,
            estimated_ms=f.estimated_saving_ms,
            samples=f.samples,
            text=text,
        )
