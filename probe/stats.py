"""Pure statistics for `compare`: medians, MAD, the noise band, a rank test, a bootstrap interval, and the
stopping rule of `compare --until-decided`.

Standard library only (no numpy, no scipy). Every function is deterministic: the bootstrap takes a seed.

Conventions
-----------
* `mad` is the **raw, unscaled** median absolute deviation: ``median(|x - median(x)|)``. It is *not* multiplied
  by 1.4826 (the factor that makes it estimate a normal standard deviation). The band below is defined on the raw
  value, like the reference protocol ("2 x baseline MAD").
* `band(baseline)` = ``max(0.01 * |median|, 2 * MAD)`` in the clock's own unit (ms): a change smaller than this is
  treated as noise. It is always built from the BEFORE (baseline) arm. (`compare` additionally never lets a band
  fall below its 5 ms timing floor.)
* `effect_interval` is the 95% interval of the effect (after - before) a saving is reported with: Student's t over the
  paired differences of interleaved pairs (each pair shares the machine's state of its moment), Welch's t over two
  independent arms otherwise. It is built to cover the true effect (bench/COVERAGE.md counts how often it does on a
  loaded machine); the band above is a threshold for "too small to count", not an interval.
* `until_decided` (one clock) and `settled_verdict` (all deciding clocks) are the stopping rule of
  `compare --until-decided`: that interval against the band, not a p-value.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from .models import Stat

BAND_FRACTION = 0.01  # 1 % of the baseline median
BAND_MADS = 2.0  # 2 x the baseline's raw MAD
MIN_PAIRS = 4  # --until-decided never stops on fewer pairs: two of each order, and 4 paired diffs to resample
EXACT_MAX_N = 30  # exact Mann-Whitney distribution up to this many values per arm (when there are no ties)


def median(values: Sequence[float]) -> float:
    """The median (mean of the two middle values for an even count). Raises ValueError on an empty sequence."""
    xs = sorted(float(v) for v in values)
    n = len(xs)
    if n == 0:
        raise ValueError("median of an empty sequence")
    mid = n // 2
    if n % 2:
        return xs[mid]
    return (xs[mid - 1] + xs[mid]) / 2.0


def mad(values: Sequence[float]) -> float:
    """Raw (unscaled) median absolute deviation: median(|x - median(x)|). No 1.4826 factor is applied."""
    m = median(values)
    return median([abs(float(v) - m) for v in values])


def stat_of(values: Sequence[float]) -> Stat:
    """A `Stat` (median, raw MAD, values) over `values`; an empty Stat for no values."""
    vals = [float(v) for v in values]
    if not vals:
        return Stat()
    return Stat(median=median(vals), mad=mad(vals), values=vals)


def stat_median(s: Stat) -> float | None:
    """The Stat's median, computed from its values when the field is missing; None when there is neither."""
    return s.middle()


def stat_mad(s: Stat) -> float | None:
    """The Stat's raw MAD, computed from its values when the field is missing; None when there is neither."""
    if s.mad is not None:
        return float(s.mad)
    return mad(s.values) if s.values else None


def band(baseline: Stat) -> float | None:
    """Noise band of a clock, from the BEFORE arm: max(1% of |median|, 2 x raw MAD), in ms. None without data."""
    m = stat_median(baseline)
    if m is None:
        return None
    d = stat_mad(baseline) or 0.0
    return max(BAND_FRACTION * abs(m), BAND_MADS * d)


# ----------------------------------------------------------------------------------------------------------------
# Mann-Whitney U


@dataclass(frozen=True)
class RankTest:
    """Two-sided Mann-Whitney U test of `after` against `before`.

    `u` is U of the AFTER arm (the number of (after, before) pairs with after > before, ties counting 1/2);
    `p` the two-sided p-value; `method` "exact" (no ties, both arms <= EXACT_MAX_N) or "normal" (normal
    approximation with tie correction and a 0.5 continuity correction).
    """

    u: float
    p: float
    method: Literal["exact", "normal"]
    n_before: int
    n_after: int


def _ranks(values: Sequence[float]) -> tuple[list[float], list[int]]:
    """Mid-ranks (1-based, ties averaged) of `values` in input order, and the sizes of the tie groups."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    ranks = [0.0] * len(values)
    ties: list[int] = []
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        r = (i + j) / 2.0 + 1.0
        for k in range(i, j + 1):
            ranks[order[k]] = r
        if j > i:
            ties.append(j - i + 1)
        i = j + 1
    return ranks, ties


def _exact_u_counts(n1: int, n2: int) -> list[int]:
    """Number of arrangements giving each U = 0 .. n1*n2 (no ties), by the standard recurrence."""
    # f[m][n] list over u; build iteratively: counts(m, n, u) = counts(m-1, n, u-n) + counts(m, n-1, u)
    prev_row: list[list[int]] = [[1] for _ in range(n2 + 1)]  # m = 0: only U = 0, one way
    for m in range(1, n1 + 1):
        row: list[list[int]] = [[1]]  # n = 0: only U = 0
        for n in range(1, n2 + 1):
            size = m * n + 1
            c = [0] * size
            a = prev_row[n]  # (m-1, n): the largest value belongs to arm 1 -> it beats all n of arm 2
            for u, k in enumerate(a):
                if k:
                    c[u + n] += k
            b = row[n - 1]  # (m, n-1): the largest value belongs to arm 2
            for u, k in enumerate(b):
                if k:
                    c[u] += k
            row.append(c)
        prev_row = row
    return prev_row[n2]


def mann_whitney(before: Sequence[float], after: Sequence[float]) -> RankTest:
    """Two-sided Mann-Whitney U test (see `RankTest`). Each arm needs at least one value."""
    b = [float(v) for v in before]
    a = [float(v) for v in after]
    n1, n2 = len(a), len(b)
    if n1 == 0 or n2 == 0:
        raise ValueError("mann_whitney needs at least one value in each arm")
    ranks, ties = _ranks(a + b)
    r_after = sum(ranks[:n1])
    u = r_after - n1 * (n1 + 1) / 2.0
    mean_u = n1 * n2 / 2.0
    if not ties and n1 <= EXACT_MAX_N and n2 <= EXACT_MAX_N:
        counts = _exact_u_counts(n1, n2)
        total = sum(counts)
        ui = int(round(u))
        lo_u, hi_u = min(ui, n1 * n2 - ui), max(ui, n1 * n2 - ui)
        tail = sum(counts[: lo_u + 1]) + sum(counts[hi_u:]) if lo_u != hi_u else total
        p = min(1.0, tail / total)
        return RankTest(u=u, p=p, method="exact", n_before=n2, n_after=n1)
    n = n1 + n2
    tie_term = sum(t**3 - t for t in ties) / (n * (n - 1)) if n > 1 else 0.0
    var_u = n1 * n2 / 12.0 * ((n + 1) - tie_term)
    if var_u <= 0:  # every value identical
        return RankTest(u=u, p=1.0, method="normal", n_before=n2, n_after=n1)
    z = (abs(u - mean_u) - 0.5) / math.sqrt(var_u)
    z = max(z, 0.0)
    p = min(1.0, math.erfc(z / math.sqrt(2.0)))
    return RankTest(u=u, p=p, method="normal", n_before=n2, n_after=n1)


# ----------------------------------------------------------------------------------------------------------------
# Bootstrap interval of the median difference


@dataclass(frozen=True)
class Interval:
    """A percentile bootstrap interval of median(after) - median(before), with the observed difference."""

    low: float
    high: float
    observed: float
    confidence: float
    resamples: int
    paired: bool


def _quantile(sorted_xs: Sequence[float], q: float) -> float:
    """Linear-interpolation quantile of an already sorted, non-empty sequence."""
    if len(sorted_xs) == 1:
        return sorted_xs[0]
    pos = q * (len(sorted_xs) - 1)
    lo = math.floor(pos)
    hi = min(lo + 1, len(sorted_xs) - 1)
    frac = pos - lo
    return sorted_xs[lo] + (sorted_xs[hi] - sorted_xs[lo]) * frac


def bootstrap_median_diff(
    before: Sequence[float],
    after: Sequence[float],
    *,
    confidence: float = 0.95,
    resamples: int = 2000,
    seed: int = 0,
    paired: bool = False,
) -> Interval:
    """Percentile bootstrap interval of median(after) - median(before), seeded and therefore reproducible.

    `paired=True` (both arms the same length, measured as interleaved pairs) resamples pair *indices* and takes
    the same indices from both arms, which keeps what each pair shared (the machine's state at that moment);
    otherwise the arms are resampled independently.
    """
    b = [float(v) for v in before]
    a = [float(v) for v in after]
    if not b or not a:
        raise ValueError("bootstrap_median_diff needs at least one value in each arm")
    if paired and len(a) != len(b):
        raise ValueError("paired bootstrap needs arms of equal length")
    rng = random.Random(seed)
    diffs: list[float] = []
    nb, na = len(b), len(a)
    for _ in range(resamples):
        if paired:
            idx = [rng.randrange(nb) for _ in range(nb)]
            diffs.append(median([a[i] for i in idx]) - median([b[i] for i in idx]))
        else:
            diffs.append(
                median([a[rng.randrange(na)] for _ in range(na)]) - median([b[rng.randrange(nb)] for _ in range(nb)])
            )
    diffs.sort()
    alpha = 1.0 - confidence
    return Interval(
        low=_quantile(diffs, alpha / 2.0),
        high=_quantile(diffs, 1.0 - alpha / 2.0),
        observed=median(a) - median(b),
        confidence=confidence,
        resamples=resamples,
        paired=paired,
    )


# ----------------------------------------------------------------------------------------------------------------
# Student's t: the interval of the effect


def _betacf(a: float, b: float, x: float) -> float:
    """Continued fraction of the regularized incomplete beta function (modified Lentz)."""
    tiny = 1e-300
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 300):
        m2 = 2 * m
        for aa in (m * (b - m) * x / ((qam + m2) * (a + m2)), -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))):
            d = 1.0 + aa * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + aa / c
            c = c if abs(c) > tiny else tiny
            h *= d * c
        if abs(d * c - 1.0) < 1e-14:
            break
    return h


def _betainc(a: float, b: float, x: float) -> float:
    """Regularized incomplete beta I_x(a, b)."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    front = math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x))
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _betacf(a, b, x) / a
    return 1.0 - front * _betacf(b, a, 1.0 - x) / b


def t_cdf(t: float, df: float) -> float:
    """P(T <= t) for Student's t with `df` degrees of freedom (df may be fractional, as Welch's is)."""
    x = df / (df + t * t)
    tail = 0.5 * _betainc(df / 2.0, 0.5, x)
    return 1.0 - tail if t > 0 else tail


def t_quantile(p: float, df: float) -> float:
    """The t with P(T <= t) = p (0 < p < 1), by bisection on `t_cdf`: exact to 1e-9, no table."""
    if not 0.0 < p < 1.0 or df <= 0:
        raise ValueError("t_quantile needs 0 < p < 1 and df > 0")
    if p < 0.5:
        return -t_quantile(1.0 - p, df)
    lo, hi = 0.0, 1.0
    while t_cdf(hi, df) < p:
        hi *= 2.0
    for _ in range(200):
        mid = (lo + hi) / 2.0
        if t_cdf(mid, df) < p:
            lo = mid
        else:
            hi = mid
        if hi - lo < 1e-9:
            break
    return (lo + hi) / 2.0


@dataclass(frozen=True)
class Effect:
    """The `confidence` interval of the effect after - before (ms): its centre `mean`, bounds, and how it was made."""

    mean: float
    low: float
    high: float
    n: int  # pairs (paired) or the smaller arm (Welch)
    method: Literal["paired t", "welch t"]
    confidence: float = 0.95


def _sd(xs: Sequence[float]) -> float:
    m = sum(xs) / len(xs)
    return math.sqrt(sum((x - m) ** 2 for x in xs) / (len(xs) - 1))


def effect_interval(
    before: Sequence[float], after: Sequence[float], *, paired: bool, confidence: float = 0.95
) -> Effect | None:
    """The interval of after - before, or None with fewer than two values a side (one sample says nothing of its
    spread).

    `paired`: the values at one position were measured together (an interleaved pair, a round of the fix engine),
    so their differences carry the effect without the machine's drift between pairs; Student's t over those
    differences. Otherwise Welch's t over two independent arms (its degrees of freedom from both spreads).
    """
    b = [float(v) for v in before]
    a = [float(v) for v in after]
    q = 1.0 - (1.0 - confidence) / 2.0
    if paired:
        n = min(len(a), len(b))
        if n < 2:
            return None
        d = [a[i] - b[i] for i in range(n)]
        mean = sum(d) / n
        half = t_quantile(q, n - 1) * _sd(d) / math.sqrt(n)
        return Effect(mean=mean, low=mean - half, high=mean + half, n=n, method="paired t", confidence=confidence)
    if len(a) < 2 or len(b) < 2:
        return None
    va, vb = _sd(a) ** 2 / len(a), _sd(b) ** 2 / len(b)
    mean = sum(a) / len(a) - sum(b) / len(b)
    se = math.sqrt(va + vb)
    if se == 0:
        return Effect(mean=mean, low=mean, high=mean, n=min(len(a), len(b)), method="welch t", confidence=confidence)
    df = (va + vb) ** 2 / (va**2 / (len(a) - 1) + vb**2 / (len(b) - 1))
    half = t_quantile(q, df) * se
    return Effect(mean=mean, low=mean - half, high=mean + half, n=min(len(a), len(b)), method="welch t",
                  confidence=confidence)


# ----------------------------------------------------------------------------------------------------------------
# The stopping rule of --until-decided

UNTIL_DECIDED_RULE = (
    "per clock, the 95% Student-t interval of the effect after - before over the paired differences of the "
    "interleaved pairs against that clock's band max(1% of the before median, 2 x raw MAD); "
    "stop once the verdict cannot change: REGRESSION when one interval lies entirely above +band, IMPROVED when "
    "one lies entirely below -band and no interval reaches above +band, INCONCLUSIVE when every interval lies "
    "inside +-band; at least {min_pairs} pairs, at most {max_samples}"
)

Outcome = Literal["improved", "regressed", "equivalent", "undecided"]


@dataclass(frozen=True)
class Decision:
    """Where one clock stands under the --until-decided rule.

    `decided`: the interval has settled (outcome improved / regressed / equivalent).
    `exhausted`: `max_samples` pairs were reached without settling; stop anyway, outcome "undecided".
    `stop` is `decided or exhausted`.
    """

    decided: bool
    exhausted: bool
    outcome: Outcome
    pairs: int
    band: float
    interval: Interval | None = None
    rank_test: RankTest | None = None
    reason: str = ""

    @property
    def stop(self) -> bool:
        return self.decided or self.exhausted


def until_decided(
    before: Sequence[float],
    after: Sequence[float],
    band_ms: float,
    max_samples: int,
    *,
    min_pairs: int = MIN_PAIRS,
    confidence: float = 0.95,
    resamples: int = 2000,
    seed: int = 0,
) -> Decision:
    """Has this clock's comparison settled? The rule (an interval of the effect against the band, not a p-value):

    1. Fewer than `min_pairs` (default 4, never less than 2) complete pairs: not yet.
    2. Compute the `confidence` (95%) interval [lo, hi] of the effect after - before (`effect_interval`): Student's
       t over the paired differences when both arms have the same length (interleaved pairs), Welch's otherwise.
    3. hi < -band: decided, "improved".  lo > +band: decided, "regressed".
       -band <= lo and hi <= +band: decided, "equivalent" (the whole interval is inside the noise band).
    4. Otherwise not yet; at `max_samples` pairs the caller stops anyway: `exhausted`, outcome "undecided".

    Why an interval against the band and not a rank test: the rank test only says "different or not" and with
    3 vs 3 values its smallest two-sided p is 0.1, so it can never stop early; the interval says by how much, so
    it can also stop on "no change larger than the noise band", which is what an INCONCLUSIVE verdict needs.
    The Mann-Whitney result is attached (`rank_test`) for the report, but does not decide. Why t and not the
    percentile bootstrap of medians used before: with 4-6 pairs that bootstrap interval is too narrow to hold the
    true effect as often as it claims, while t's width grows as it should with few pairs and a wide spread (the
    coverage benchmark, bench/COVERAGE.md, measures both).
    """
    b = [float(v) for v in before]
    a = [float(v) for v in after]
    pairs = min(len(a), len(b))
    floor = max(2, min_pairs)
    band_ms = abs(float(band_ms))
    iv: Interval | None = None
    rt: RankTest | None = None
    if pairs < floor:
        outcome: Outcome = "undecided"
        reason = f"{pairs} of at least {floor} pairs"
    else:
        paired = len(a) == len(b)
        eff = effect_interval(b, a, paired=paired, confidence=confidence)
        if eff is None:  # one value on a side (unpaired): the bootstrap is all there is
            iv = bootstrap_median_diff(b, a, confidence=confidence, resamples=resamples, seed=seed, paired=paired)
        else:
            iv = Interval(low=eff.low, high=eff.high, observed=eff.mean, confidence=confidence, resamples=0,
                          paired=paired)
        rt = mann_whitney(b, a)
        outcome, reason = _against_band(iv, band_ms, confidence)
    decided = outcome != "undecided"
    exhausted = not decided and pairs >= max_samples
    if exhausted and iv is not None:
        reason += f"; stopped at the maximum of {max_samples} pairs"
    return Decision(decided=decided, exhausted=exhausted, outcome=outcome, pairs=pairs, band=band_ms, interval=iv,
                    rank_test=rt, reason=reason)


def _against_band(iv: Interval, band_ms: float, confidence: float) -> tuple[Outcome, str]:
    """Where the interval of the median difference lies against the noise band +-band_ms, and why in words."""
    span = f"{round(confidence * 100)}% interval [{iv.low:+.1f}, {iv.high:+.1f}] ms against band +-{band_ms:.1f} ms"
    if iv.high < -band_ms:
        return "improved", f"{span}: entirely below -band"
    if iv.low > band_ms:
        return "regressed", f"{span}: entirely above +band"
    if iv.low >= -band_ms and iv.high <= band_ms:
        return "equivalent", f"{span}: entirely inside the band"
    return "undecided", f"{span}: straddles the band edge"


def settled_verdict(decisions: Sequence[Decision]) -> Literal["IMPROVED", "REGRESSION", "INCONCLUSIVE"] | None:
    """The clock verdict that more pairs can no longer change, or None (keep measuring).

    Each `Decision` is one deciding clock (see `until_decided`). A clock *can* still regress while its interval
    reaches above +band, and *can* still improve while it reaches below -band; a clock without an interval (too few
    pairs) can do either. A clock judged on counts is passed as a Decision without interval whose outcome is fixed.

    * REGRESSION: some clock's interval lies entirely above +band (a regression on any deciding clock is final);
    * IMPROVED: some clock's interval lies entirely below -band and no clock can still regress;
    * INCONCLUSIVE: no clock can still improve or regress (every interval inside +-band);
    * otherwise None.
    """

    def can_regress(d: Decision) -> bool:
        if d.interval is None:
            return d.outcome in ("regressed", "undecided")
        return d.outcome == "regressed" or d.interval.high > d.band

    def can_improve(d: Decision) -> bool:
        if d.interval is None:
            return d.outcome in ("improved", "undecided")
        return d.outcome == "improved" or d.interval.low < -d.band

    if any(d.outcome == "regressed" for d in decisions):
        return "REGRESSION"
    if any(d.outcome == "improved" for d in decisions) and not any(can_regress(d) for d in decisions):
        return "IMPROVED"
    if not any(can_regress(d) or can_improve(d) for d in decisions):
        return "INCONCLUSIVE"
    return None


def overlap_factor(spans: Sequence[tuple[float, float]]) -> float | None:
    """Summed span length over the length of their union: 1.0 means the spans ran one at a time.

    Used for module loads (start_ms, end_ms): a factor near 1 says builds were serial, N says N ran at once.
    """
    iv = sorted((float(s), float(e)) for s, e in spans if e > s)
    if not iv:
        return None
    union, cur_s, cur_e = 0.0, iv[0][0], iv[0][1]
    for s, e in iv[1:]:
        if s > cur_e:
            union += cur_e - cur_s
            cur_s, cur_e = s, e
        else:
            cur_e = max(cur_e, e)
    union += cur_e - cur_s
    return sum(e - s for s, e in iv) / union if union > 0 else None
