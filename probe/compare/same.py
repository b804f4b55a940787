"""Work both arms did identically, left out of the clock a comparison decides on.

Two arms that build the same header, or a module with the same hash, did the same work: its cost has the same
distribution in both, so it adds nothing to the effect but its noise (on a loaded machine the CPU header build moved
by up to 20% from run to run, which can hide a fix that acts only on module code). Each run records its builds by
what they built (`RunResult.work`); a key present in every cold run of both arms is identical work. The deciding
clocks (compile CPU, cold module CPU, and their wall twins) are judged on their per-sample values with that work
subtracted, while their medians, savings and shares stay those of the whole clock. Pure functions over two Reports.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..fmt import fmt_ms
from ..models import Report, Stat
from ..stats import stat_of

# clock -> (which work it contains: "all" = modules and headers, "modules"; which part of [wall, CPU] it is on)
CLOCK_WORK = {
    "compile_cpu": ("all", 1), "cold_module_cpu": ("modules", 1), "cold_cpu": ("all", 1),
    "compile_elapsed": ("all", 0), "cold_module": ("modules", 0), "cold_wall": ("all", 0),
}


@dataclass
class Same:
    """The identical work of a comparison: its keys, and per clock the values to decide on (one per sample)."""

    keys: list[str]
    basis: dict[str, tuple[Stat, Stat]]  # clock -> (before, after) with the identical work subtracted
    shares: dict[str, float]  # clock -> the median identical work subtracted (ms, before arm)

    def note(self, clock: str) -> str:
        headers = [k for k in self.keys if k.startswith("header:")]
        modules = [k for k in self.keys if not k.startswith("header:")]
        if CLOCK_WORK[clock][0] == "modules":
            headers = []
        parts = []
        if headers:
            parts.append(f"the header{'s' if len(headers) > 1 else ''} both arms built alike")
        if modules:
            parts.append(f"{len(modules)} module build{'s' if len(modules) > 1 else ''} with the same hash on "
                         "both sides")
        if not parts:
            return ""
        return (f"identical work left out of its interval and decision: {' and '.join(parts)} (median "
                f"{fmt_ms(self.shares.get(clock, 0.0))} a run)")


def _runs(r: Report) -> list[dict[str, list[float | None]]] | None:
    """The cold runs' work of the report's successful samples, in the order its clocks list them; None when a run
    compiled without recording its work (an older report)."""
    out = []
    for s in r.sample_results:
        if not s.ok:
            continue
        if s.cold.compiled and not s.cold.work:
            return None
        out.append(s.cold.work)
    return out


def identical_work(before: Report, after: Report) -> Same | None:
    """The work every cold run of both arms did alike, and the deciding clocks with it subtracted; None when there
    is none or the reports do not record it."""
    rb, ra = _runs(before), _runs(after)
    if not rb or not ra:
        return None
    keys = set(rb[0])
    for run in [*rb, *ra]:
        keys &= set(run)
    if not keys:
        return None
    basis: dict[str, tuple[Stat, Stat]] = {}
    shares: dict[str, float] = {}
    for clock, (kind, part) in CLOCK_WORK.items():
        mine = sorted(k for k in keys if kind == "all" or not k.startswith("header:"))
        if not mine:
            continue
        stats = []
        for rep, runs in ((before, rb), (after, ra)):
            values = getattr(rep, _FIELD[clock]).values
            if len(values) != len(runs):
                break
            cut = [sum(run[k][part] or 0.0 for k in mine) for run in runs]
            if any(run[k][part] is None for run in runs for k in mine):
                break
            stats.append((stat_of([round(v - c, 3) for v, c in zip(values, cut, strict=True)]), cut))
        if len(stats) != 2:
            continue
        basis[clock] = (stats[0][0], stats[1][0])
        cuts = sorted(stats[0][1])
        shares[clock] = cuts[len(cuts) // 2]
    return Same(keys=sorted(keys), basis=basis, shares=shares) if basis else None


_FIELD = {
    "compile_cpu": "compile_cpu_ms", "cold_module_cpu": "cold_module_cpu_ms", "cold_cpu": "cold_cpu_ms",
    "compile_elapsed": "compile_elapsed_ms", "cold_module": "cold_module_ms", "cold_wall": "cold_wall_ms",
}
