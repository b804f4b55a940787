"""Drift between two saved reports, measured on work both did identically, and the CI gate.

Two reports taken minutes (or machines) apart differ by the machine as well as by the change. Work that is
identical in both (a module built with the same hash and source, the precompiled header when both built it) took
longer or shorter only because the machine did: its time ratio after / before is the drift factor. `compare_reports`
divides the AFTER clocks by it before judging; with no such yardstick, too little of it, or a drift beyond the
limit, it says so and a timed verdict is set aside (INCONCLUSIVE, interleaved compare recommended).
"""

from __future__ import annotations

import math

from .. import stats
from ..models import Build, Report, Stat
from ..models.comparison import GATE_FAILED_EXIT, ActsThrough, Clock, Comparison, Drift, Gate
from .equivalence import SOURCE_BYTES_SLACK, module_hash_rows, structure
from .verdict import compare

MIN_YARDSTICK_MS = 50.0  # less identical work than this cannot tell a drift from the timer's noise
DRIFT_LIMIT_PCT = 100.0  # a factor beyond x2 (or below /2): another class of machine, a linear correction is a guess
MAX_BAND_PCT = 50.0  # a factor more uncertain than this corrects nothing
MIN_BAND_PCT = 3.0  # the factor's uncertainty is never taken below this
THIN_BAND_PCT = 10.0  # ... nor below this when an arm has fewer than 3 samples (no spread to go by)


def _rel_mad(s: Stat) -> float:
    m, d = stats.stat_median(s), stats.stat_mad(s)
    return (d or 0.0) / m if m else 0.0


def _samples(r: Report) -> int:
    return max(len(r.cold_wall_ms.values), len(r.cold_module_ms.values))


def _compiled(r: Report) -> dict[tuple[str, str, int | None, str], Build]:
    return {(b.module, b.device, b.block_dim, b.hash): b for b in r.builds if b.status == "compiled"}


def _ms(x: object, cpu: bool) -> float:
    """A build's or header's time on the clock asked for (its CPU time, or its wall time)."""
    value = getattr(x, "cpu_ms", None) if cpu else getattr(x, "ms", 0.0)
    return float(value or 0.0)


def _pieces(before: Report, after: Report, cpu: bool = False) -> tuple[list[str], float, float]:
    """The yardstick from the reference samples: modules compiled with the same hash and source in both, plus the
    precompiled header when both built one. (names, ms before, ms after), on the CPU clock with `cpu`."""
    b_builds, a_builds = _compiled(before), _compiled(after)
    names: list[str] = []
    tb = ta = 0.0
    for key, b in b_builds.items():
        a = a_builds.get(key)
        if a is None or abs(a.source_bytes - b.source_bytes) > SOURCE_BYTES_SLACK or _ms(b, cpu) <= 0 \
                or _ms(a, cpu) <= 0:
            continue
        names.append(b.module if b.device == "cpu" else f"{b.module} ({b.device})")
        tb, ta = tb + _ms(b, cpu), ta + _ms(a, cpu)
    pb, pa = sum(_ms(p, cpu) for p in before.pch), sum(_ms(p, cpu) for p in after.pch)
    if before.pch and after.pch and pb > 0 and pa > 0:
        names.append("the precompiled header")
        tb, ta = tb + pb, ta + pa
    return names, tb, ta


def _whole_work(r: Report, cpu: bool = False) -> Stat:
    """Per-sample module + header time of the cold run: the yardstick when all the work is identical."""
    if cpu:
        vals = [(s.cold.module_cpu_ms or 0.0) + (s.cold.pch_cpu_ms or 0.0) for s in r.sample_results if s.ok]
        return stats.stat_of(vals) if vals else r.cold_module_cpu_ms
    vals = [s.cold.module_ms + s.cold.pch_ms for s in r.sample_results if s.ok]
    return stats.stat_of(vals) if vals else r.cold_module_ms


def has_cpu_clocks(r: Report) -> bool:
    """The report measured the CPU clocks (a run's rusage and its builds' thread CPU time)."""
    return bool(r.compile_cpu_ms.values) and bool(r.cold_module_cpu_ms.values)


def estimate_drift(before: Report, after: Report, cpu: bool = False) -> Drift:
    """The drift factor after / before on identical work, its uncertainty, and whether a correction is trusted.

    With `cpu` on the CPU clocks (a loaded machine drifts far less there); otherwise on wall time, and then the CPU
    clocks' own factor is attached as `cpu` when both reports measured them."""
    d = Drift(limit_pct=DRIFT_LIMIT_PCT)
    if not cpu and has_cpu_clocks(before) and has_cpu_clocks(after):
        d.cpu = estimate_drift(before, after, cpu=True)
    st = structure(before, after, module_hash_rows(before, after))
    names, tb, ta = _pieces(before, after, cpu)
    if st.identical_work and not st.headers.changed:
        wb, wa = _whole_work(before, cpu), _whole_work(after, cpu)
        mb, ma = stats.stat_median(wb), stats.stat_median(wa)
        if mb and ma:
            tb, ta = mb, ma
            names = names or ["all modules"]
            d.yardstick = "all the work (identical in both reports: same identities, module hashes and source)"
        spread = 2.0 * math.hypot(_rel_mad(wb), _rel_mad(wa))
    else:
        # the header's per-sample times when it is in the yardstick (the same build in every sample), else the
        # cold wall's spread as the machine's noise
        pb, pa = (before.pch_cpu_ms, after.pch_cpu_ms) if cpu else (before.pch_ms, after.pch_ms)
        header = "the precompiled header" in names and len(pb.values) >= 2 and len(pa.values) >= 2
        walls = (before.cold_cpu_ms, after.cold_cpu_ms) if cpu else (before.cold_wall_ms, after.cold_wall_ms)
        noise = (pb, pa) if header else walls
        spread = 2.0 * math.hypot(_rel_mad(noise[0]), _rel_mad(noise[1]))  # independent arms: in quadrature
        if names:
            d.yardstick = "work identical in both reports: " + ", ".join(names[:6]) + (
                f" and {len(names) - 6} more" if len(names) > 6 else "")
    d.pieces = names
    if not names or tb <= 0 or ta <= 0:
        d.reason = ("no yardstick: no module was built with the same hash and source in both reports, and they do "
                    "not both build the precompiled header")
        return d
    d.yardstick_before_ms, d.yardstick_after_ms = round(tb, 3), round(ta, 3)
    d.factor = round(ta / tb, 4)
    floor = MIN_BAND_PCT if min(_samples(before), _samples(after)) >= 3 else THIN_BAND_PCT
    d.band_pct = round(max(floor, 100.0 * spread), 2)
    drift_pct = 100.0 * (d.factor - 1.0)
    if tb < MIN_YARDSTICK_MS:
        d.reason = f"the yardstick is too small ({tb:.0f} ms before, below {MIN_YARDSTICK_MS:.0f} ms)"
    elif d.band_pct > MAX_BAND_PCT:
        d.reason = (f"the drift factor {d.factor:.3f} is too uncertain (±{d.band_pct:.0f}%, more than "
                    f"±{MAX_BAND_PCT:.0f}%): the samples spread too much")
    elif abs(math.log(d.factor)) > math.log(1.0 + DRIFT_LIMIT_PCT / 100.0):
        d.reason = (f"the machine drifted by a factor of {d.factor:.2f} ({drift_pct:+.0f}%), beyond the ±"
                    f"{DRIFT_LIMIT_PCT:.0f}% a correction is trusted for")
    else:
        d.trusted = True
        d.reason = (f"identical work took {tb:,.0f} -> {ta:,.0f} ms ({drift_pct:+.1f}%): the AFTER clocks are divided "
                    f"by {d.factor:.3f} and each band widened by ±{d.band_pct:.1f}% of the BEFORE median")
    return d


def compare_reports(
    before: Report, after: Report, *, before_label: str = "", after_label: str = "",
    acts_through: ActsThrough = "unknown", max_regression_pct: float | None = None,
) -> Comparison:
    """Two saved reports, judged on drift-corrected clocks (see `estimate_drift`), optionally as a CI gate."""
    c = compare(before, after, before_label=before_label, after_label=after_label, acts_through=acts_through,
                drift=estimate_drift(before, after))
    if max_regression_pct is not None:
        apply_gate(c, max_regression_pct)
    return c


def apply_gate(c: Comparison, max_regression_pct: float) -> Comparison:
    """`--max-regression PCT`: exit GATE_FAILED_EXIT when the clock the verdict rests on regressed beyond its band by
    more than PCT percent (the headline; a deciding clock when the headline stayed inside its band), or the
    comparison is INVALID; otherwise exit 0. Informational clocks never fail it."""
    head = c.clock(c.headline)
    g = Gate(max_regression_pct=max_regression_pct, headline=c.headline)
    if head is not None and head.delta_ms is not None:
        g.delta_pct = _pct(head)
        g.beyond_band = head.outcome == "regressed"
    rests_on = [head] if head is not None and head.decisive and head.outcome == "regressed" else [
        k for k in c.clocks if k.decisive and k.outcome == "regressed"]
    over = [k for k in rests_on if (_pct(k) or 0.0) > max_regression_pct]
    if c.verdict == "INVALID":
        g.passed, g.reason = False, f"INVALID: {c.reason}"
    elif c.verdict == "REGRESSION" and over:
        g.passed = False
        g.reason = "; ".join(f"the {k.title} regressed by {_pct(k):+.1f}%" for k in over) + (
            f", beyond its band and more than the allowed {max_regression_pct:g}%")
    else:
        pct = f" ({g.delta_pct:+.1f}% {head.title})" if g.delta_pct is not None and head is not None else ""
        g.reason = (f"{c.verdict}{pct}: no clock the verdict rests on regressed beyond its band by more than the "
                    f"allowed {max_regression_pct:g}%")
    g.exit_code = 0 if g.passed else GATE_FAILED_EXIT
    c.gate = g
    c.exit_code = g.exit_code
    return c


def _pct(k: Clock) -> float | None:
    """A clock's change in percent of its BEFORE median (also for one judged on counts)."""
    if k.delta_pct is not None:
        return k.delta_pct
    bm = stats.stat_median(k.before)
    return 100.0 * k.delta_ms / bm if bm and k.delta_ms is not None else None
