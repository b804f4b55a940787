"""Advice about an installed library's code, said to the right people.

A rule writes its fix text the same way whoever owns the code ("remove wp.clear_kernel_cache() at <file>:4"). When
that file lies in an installed distribution, the user must not be sent there: the change belongs to the library's
maintainers. This post-pass of the diagnosis names such a file as its maintainers do (`pkg/mod.py`), says whose
change it is, and, when the rule made no upstream report, makes one from the finding: its places, its estimate
and how many samples that rests on.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path
from typing import Protocol

from .models import Report
from .models.diagnosis import Finding, Location, UpstreamReport
from .ownership import owner_of


class Project(Protocol):
    """What the ownership questions read: the run's record and the scanned root."""

    report: Report
    root: Path | None

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


def installed_owners(ctx: Project, files: Iterable[str]) -> list[str] | None:
    """The distributions that own `files` when every one of them lies in an installed distribution (recorded when
    measuring); None when any is the project's or unknown. A fix must then not ask the user to edit them."""
    root = str(ctx.root) if ctx.root is not None else ctx.report.cwd
    dists: list[str] = []
    listed = list(files)
    for f in listed:
        hit = owner_of(f, ctx.report.owners, root)
        if hit is None or hit.owner != "dependency":
            return None
        name = hit.distribution or "an installed package"
        if name not in dists:
            dists.append(name)
    return dists if listed else None


def dist_relative(path: str) -> str:
    """An installed file as its maintainers name it (`pkg/mod.py`), without the site-packages prefix of this
    machine: what an upstream report quotes, never a path for the user to open and edit."""
    p = path.replace("\\", "/")
    for marker in ("/site-packages/", "/dist-packages/"):
        if marker in p:
            return p.rsplit(marker, 1)[1]
    return p.rsplit("/", 2)[-2] + "/" + p.rsplit("/", 1)[-1] if p.count("/") >= 2 else p


def dependency_of(ctx: Project, file: str | None) -> str | None:
    """The installed distribution that owns `file` ("an installed package" when unnamed); None for the project's
    files and for files whose owner is unknown."""
    if not file:
        return None
    dists = installed_owners(ctx, [file])
    return dists[0] if dists else None


def upstream_report(
    dist: str, title: str, places: list[tuple[str, int, str]], measured_ms: float, measured: str, change: str,
    estimated: str = "",
) -> UpstreamReport:
    """The report for a library's maintainers: what was measured (`measured_ms` and `measured`: figures of the run
    only), what is estimated from them (`estimated`, said as such: never called measured), where in their code
    (`places`: file as they name it, line, note), the change that removes the cost, and the text ready to paste."""
    where = "\n".join(f"- {f}:{n}: {note}" for f, n, note in places)
    guess = f"\n\nEstimated, not measured: {estimated}." if estimated else ""
    text = (
        f"{title}\n\nMeasured with warp-compile (cold Warp kernel cache): {measured}.{guess}\n\nWhere, in {dist}:\n"
        f"{where}\n\nSuggested change in {dist}: {change}\n"
    )
    locs = [Location(file=f, line=n, note=note, owner="dependency", distribution=dist) for f, n, note in places]
    return UpstreamReport(distribution=dist, places=locs, measured_ms=round(measured_ms, 1), change=change, text=text)
