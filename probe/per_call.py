"""The per-call clock of a run: kernel objects made again at the same place, pass after pass, and what that costs.

From the hook's record of every kernel creation (`Report.kernel_creations`: where, by which call, when, and how long
making it took: the whole wp.kernel decorator where it was one, else Kernel.__init__) this finds the places that
made kernels again after the run's first launch, and cuts the run into passes: a pass starts at each creation by
the anchor place (the re-creating place with the fewest creations, ties to the earliest: once per step in a step
loop), so a pass is one call of the loop that re-creates them. A pass in which a module was built or loaded is a
first call, paying compile time, and is left out. Per pass it sums the construction time of every kernel made
inside it. What this gives, all from the one run:

- the time per pass (median of the gaps between anchor creations) and its noise band: max(1 % of it, 2 x MAD of
  the gaps / sqrt(passes)), probe/stats.band's convention for the median of that many passes;
- the construction time per pass (median), and its share of the passes' time (both summed over them).

Nothing here is an absolute threshold: the rule judges the construction time against the pass and its band. Pure.
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from dataclasses import dataclass, field

from .models import KernelCreation, Report
from .stats import BAND_FRACTION, BAND_MADS, mad, median

MIN_MADE = 3  # a place that made kernels this many times after the first launch makes them "again and again"


@dataclass
class Place:
    """One creation site: the line of the making function that ran the decorator, and its creations after the
    first launch (in time order)."""

    file: str
    line: int
    function: str
    made: list[KernelCreation] = field(default_factory=list)
    via: bool = False  # a Warp function the app called made them (wp.map): the place is that line inside Warp

    @property
    def keys(self) -> list[str]:
        return sorted({c.key for c in self.made})

    @property
    def again(self) -> int:
        """Creations whose making call had the arguments of an earlier one here: what a cache would have returned."""
        seen: set[str] = set()
        n = 0
        for c in self.made:
            sig = json.dumps(c.args, sort_keys=True, default=str)
            n += sig in seen
            seen.add(sig)
        return n

    @property
    def callers(self) -> list[tuple[str, int, str]]:
        """(file, line, function) of the code that called the making function, most frequent first."""
        count: dict[tuple[str, int, str], int] = defaultdict(int)
        for c in self.made:
            if self.via:  # the app's own frame called the Warp function that made it
                count[(c.file, c.line, c.function)] += 1
            elif c.caller is not None:
                count[(c.caller.file, c.caller.line, c.caller.function)] += 1
        return sorted(count, key=lambda k: -count[k])

    @property
    def init_ms(self) -> float:
        return round(sum(c.cost_ms or 0.0 for c in self.made), 3)


@dataclass
class PerCall:
    """The run's passes and what kernel construction costs in each."""

    places: list[Place]  # the places that made kernels again after the first launch, most creations first
    anchor: Place | None = None
    first_launch_ms: float | None = None
    pass_ms: float | None = None  # median gap between anchor creations: one call of the loop that re-creates them
    band_ms: float | None = None  # the noise band of that gap
    made_ms: float | None = None  # median construction time of re-made kernels per pass
    passes: int = 0  # full passes measured (anchor gaps), those in which no module was built or loaded
    building: int = 0  # passes left out because a module was built or loaded inside them (first calls)
    gaps: list[float] = field(default_factory=list)
    made_per_pass: list[float] = field(default_factory=list)
    timed: bool = True  # every creation carried its construction time (an older hook records none)

    @property
    def share(self) -> float | None:
        """Construction time over the passes' time, both summed over the passes measured."""
        whole = sum(self.gaps)
        if self.made_ms is None or whole <= 0:
            return None
        return min(1.0, sum(self.made_per_pass) / whole)

    @property
    def made(self) -> int:
        return sum(len(p.made) for p in self.places)


def first_launch(report: Report) -> float | None:
    starts = [launch.first_ms for launch in report.launches if launch.first_ms is not None]
    return min(starts) if starts else None


def places_after(report: Report, start_ms: float) -> list[Place]:
    """Kernel creations (not generic instances) after `start_ms`, grouped by the line that made them: the app's, or
    the line inside Warp where a Warp function the app called made them (its callers are then the app's lines)."""
    by: dict[tuple[str, int, str], Place] = {}
    for c in sorted(report.kernel_creations, key=lambda c: c.start_ms):
        if c.made_by != "kernel" or c.start_ms <= start_ms or c.at_import or not c.file:
            continue
        site = c.via or c
        key = (site.file, site.line, site.function)
        by.setdefault(key, Place(file=site.file, line=site.line, function=site.function,
                                 via=c.via is not None)).made.append(c)
    return sorted(by.values(), key=lambda p: (-len(p.made), p.made[0].start_ms))


def per_call(report: Report, min_made: int = MIN_MADE) -> PerCall:
    """The places that re-made kernels at least `min_made` times after the first launch, and the pass clock."""
    start = first_launch(report)
    if start is None:
        return PerCall(places=[])
    places = [p for p in places_after(report, start) if len(p.made) >= min_made]
    out = PerCall(places=places, first_launch_ms=start)
    if not places:
        return out
    anchor = min(places, key=lambda p: (len(p.made), p.made[0].start_ms))
    out.anchor = anchor
    marks = [c.start_ms for c in anchor.made]
    every = sorted((c for p in places for c in p.made), key=lambda c: c.start_ms)
    out.timed = all(c.cost_ms is not None for c in every)
    loads = [(b.start_ms, b.end_ms) for b in report.builds if b.status in ("compiled", "cached") and b.end_ms > 0]
    for a, b in zip(marks, marks[1:], strict=False):
        if any(s < b and e > a for s, e in loads):
            out.building += 1  # a module built or loaded inside it: a first call, not a repeated one
            continue
        out.gaps.append(round(b - a, 3))
        # a creation is stamped when it ends; the anchor's own creation opens its pass
        out.made_per_pass.append(round(sum(c.cost_ms or 0.0 for c in every if a - 1e-9 <= c.start_ms < b), 3))
    out.passes = len(out.gaps)
    if out.gaps:
        out.pass_ms = round(median(out.gaps), 3)
        # the band of a median over n passes (a pass on a shared machine varies a lot; the median of many far less)
        out.band_ms = round(max(BAND_FRACTION * out.pass_ms, BAND_MADS * mad(out.gaps) / math.sqrt(out.passes)), 3)
        out.made_ms = round(median(out.made_per_pass), 3) if out.timed else None
    return out
