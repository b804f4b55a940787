"""Statistics of `compare`, on synthetic samples (no Warp, no subprocesses)."""

from __future__ import annotations

import itertools
import math
import random

import pytest

from warp_compile.probe import stats
from warp_compile.probe.models import Stat


def test_median_odd_even_and_empty():
    assert stats.median([3, 1, 2]) == 2
    assert stats.median([4, 1, 3, 2]) == 2.5
    assert stats.median([7.5]) == 7.5
    with pytest.raises(ValueError):
        stats.median([])


def test_mad_is_raw_and_unscaled():
    # median 3, |x - 3| = [2, 1, 0, 1, 97] -> median 1 (a scaled MAD would be 1.4826)
    assert stats.mad([1, 2, 3, 4, 100]) == 1.0
    assert stats.mad([5, 5, 5]) == 0.0


def test_stat_of_and_fallbacks():
    s = stats.stat_of([10, 12, 11])
    assert (s.median, s.mad, s.values) == (11.0, 1.0, [10.0, 12.0, 11.0])
    assert stats.stat_of([]) == Stat()
    # a Stat with values only: median and MAD are computed from them
    assert stats.stat_median(Stat(values=[1, 2, 3])) == 2
    assert stats.stat_mad(Stat(values=[1, 2, 3])) == 1
    # the recorded fields win when present
    assert stats.stat_median(Stat(median=9.0, values=[1, 2, 3])) == 9.0
    assert stats.stat_median(Stat()) is None


def test_band_is_max_of_one_percent_and_two_mads():
    assert stats.band(Stat(median=3000.0, mad=5.0)) == 30.0  # 1% wins
    assert stats.band(Stat(median=3000.0, mad=40.0)) == 80.0  # 2 x MAD wins
    assert stats.band(Stat(median=-200.0, mad=0.0)) == 2.0  # |median|
    assert stats.band(Stat(values=[100, 110, 90])) == 20.0  # from values: MAD 10
    assert stats.band(Stat()) is None


def _brute_force_p(before, after):
    """Two-sided exact p by enumerating every split of the pooled values (reference implementation)."""
    pooled = list(before) + list(after)
    n_a = len(after)

    def u_of(a_vals, b_vals):
        return sum((x > y) + 0.5 * (x == y) for x in a_vals for y in b_vals)

    observed = u_of(after, before)
    mean = len(after) * len(before) / 2
    extreme = 0
    total = 0
    for idx in itertools.combinations(range(len(pooled)), n_a):
        a_vals = [pooled[i] for i in idx]
        b_vals = [pooled[i] for i in range(len(pooled)) if i not in idx]
        total += 1
        if abs(u_of(a_vals, b_vals) - mean) >= abs(observed - mean) - 1e-9:
            extreme += 1
    return extreme / total


@pytest.mark.parametrize(
    "before,after",
    [
        ([1, 2, 3], [4, 5, 6]),
        ([1, 2, 3, 4, 5], [6, 7, 8, 9, 10]),
        ([1, 3, 5, 7], [2, 4, 6, 8]),
        ([10.5, 11.2, 9.8, 10.1], [9.0, 9.5, 12.0]),
        ([3, 1], [2]),
    ],
)
def test_mann_whitney_exact_matches_enumeration(before, after):
    rt = stats.mann_whitney(before, after)
    assert rt.method == "exact"
    assert rt.p == pytest.approx(_brute_force_p(before, after))


def test_mann_whitney_known_values():
    rt = stats.mann_whitney([1, 2, 3, 4, 5], [6, 7, 8, 9, 10])
    assert rt.u == 25
    assert rt.p == pytest.approx(2 / 252)
    # 3 vs 3 fully separated: the smallest two-sided p there is, 0.1 - never below 0.05
    assert stats.mann_whitney([1, 2, 3], [4, 5, 6]).p == pytest.approx(0.1)
    # symmetric in direction
    assert stats.mann_whitney([4, 5, 6], [1, 2, 3]).p == pytest.approx(0.1)
    assert stats.mann_whitney([4, 5, 6], [1, 2, 3]).u == 0


def test_mann_whitney_normal_with_ties():
    before = [1, 2, 2, 3, 3, 3, 4, 5]
    after = [3, 4, 4, 5, 5, 6, 6, 7]
    rt = stats.mann_whitney(before, after)
    assert rt.method == "normal"
    # by hand: U_after = 4.5 + 2 * 6.5 + 2 * 7.5 + 2 * 8 + 8 = 56.5, mean 32; tie groups of sizes 2, 4, 3, 3, 2
    # give sum(t^3 - t) = 120, so var = 64 / 12 * (17 - 120 / 240) = 88; z = (24.5 - 0.5) / sqrt(88)
    assert rt.u == 56.5
    z = 24.0 / math.sqrt(88.0)
    assert rt.p == pytest.approx(math.erfc(z / math.sqrt(2)))
    assert 0.005 < rt.p < 0.05
    assert stats.mann_whitney([2, 2, 2], [2, 2]).p == 1.0


def test_mann_whitney_needs_values():
    with pytest.raises(ValueError):
        stats.mann_whitney([], [1.0])


def test_bootstrap_is_seeded_and_covers_the_shift():
    rng = random.Random(1)
    before = [1000 + rng.gauss(0, 10) for _ in range(15)]
    after = [900 + rng.gauss(0, 10) for _ in range(15)]
    a = stats.bootstrap_median_diff(before, after, seed=7)
    b = stats.bootstrap_median_diff(before, after, seed=7)
    assert a == b
    assert a.low < -100 + 15 and a.high > -100 - 15
    assert a.low <= a.observed <= a.high
    assert a.high < 0
    paired = stats.bootstrap_median_diff(before, after, paired=True)
    assert paired.paired and paired.high < 0
    with pytest.raises(ValueError):
        stats.bootstrap_median_diff([1, 2], [1, 2, 3], paired=True)


def test_paired_bootstrap_removes_shared_drift():
    # both arms drift together by 0..90 ms; AFTER is always 5 ms faster than its BEFORE partner
    drift = [0, 30, 60, 90, 15, 45, 75]
    before = [1000 + d for d in drift]
    after = [995 + d for d in drift]
    paired = stats.bootstrap_median_diff(before, after, paired=True)
    independent = stats.bootstrap_median_diff(before, after, paired=False)
    assert paired.high - paired.low < independent.high - independent.low


def test_until_decided_needs_minimum_pairs():
    d = stats.until_decided([1000, 1001], [500, 501], band_ms=10, max_samples=20)
    assert not d.decided and not d.stop and d.outcome == "undecided"


def test_until_decided_waits_for_four_pairs_by_default():
    d = stats.until_decided([1000, 1003, 998], [500, 502, 499], band_ms=10, max_samples=20)
    assert not d.decided and d.outcome == "undecided" and "3 of at least 4 pairs" in d.reason


def test_until_decided_improved_after_three_clear_pairs():
    d = stats.until_decided([1000, 1003, 998], [500, 502, 499], band_ms=10, max_samples=20, min_pairs=3)
    assert d.decided and d.outcome == "improved" and d.pairs == 3
    assert d.interval is not None and d.interval.high < -10
    assert d.rank_test is not None and d.rank_test.p == pytest.approx(0.1)  # attached, not deciding


def test_until_decided_regressed():
    d = stats.until_decided([500, 502, 499, 501], [700, 710, 690, 705], band_ms=10, max_samples=20)
    assert d.decided and d.outcome == "regressed"


def test_until_decided_equivalent_inside_band():
    before = [1000, 1001, 999, 1000, 1002]
    after = [1001, 1000, 1000, 999, 1001]
    d = stats.until_decided(before, after, band_ms=10, max_samples=20)
    assert d.decided and d.outcome == "equivalent"


def test_until_decided_noisy_waits_then_exhausts():
    before = [1000, 1100, 950, 1080]
    after = [1040, 960, 1120, 990]
    d = stats.until_decided(before, after, band_ms=20, max_samples=20)
    assert not d.decided and not d.exhausted and not d.stop
    d = stats.until_decided(before, after, band_ms=20, max_samples=4)
    assert not d.decided and d.exhausted and d.stop and d.outcome == "undecided"
    assert "maximum" in d.reason


def test_until_decided_straddling_edge_is_not_decided():
    # pair differences -5, -25, -10, -15, -20 straddle the band edge at -15
    before = [1000, 1010, 990, 1005, 995]
    after = [995, 985, 980, 990, 975]
    d = stats.until_decided(before, after, band_ms=15, max_samples=20)
    assert not d.decided


def test_until_decided_rule_text_names_the_rule():
    text = stats.UNTIL_DECIDED_RULE.format(min_pairs=3, max_samples=20)
    assert "Student-t interval" in text and "band" in text and "3 pairs" in text


def _dec(before, after, band, max_samples=20):
    return stats.until_decided(before, after, band_ms=band, max_samples=max_samples)


def test_settled_verdict_improved_needs_one_clear_gain_and_no_possible_regression():
    gain = _dec([1000, 1003, 998, 1001], [500, 502, 499, 501], band=10)
    # a second clock whose interval straddles -band but cannot reach +band: it can only improve further
    maybe_gain = _dec([1000, 1010, 990, 1005], [995, 985, 980, 990], band=10)
    assert not maybe_gain.decided and maybe_gain.interval.high < 10
    assert stats.settled_verdict([gain, maybe_gain]) == "IMPROVED"
    # ... but one that could still regress beyond its band keeps the verdict open
    could_regress = _dec([1000, 1100, 950, 1080], [1040, 960, 1120, 990], band=20)
    assert stats.settled_verdict([gain, could_regress]) is None


def test_settled_verdict_regression_is_final_and_inconclusive_needs_every_clock_inside():
    loss = _dec([500, 502, 499, 501], [700, 710, 690, 705], band=10)
    gain = _dec([1000, 1003, 998, 1001], [500, 502, 499, 501], band=10)
    assert stats.settled_verdict([gain, loss]) == "REGRESSION"
    flat = _dec([1000, 1001, 999, 1000, 1002], [1001, 1000, 1000, 999, 1001], band=10)
    assert stats.settled_verdict([flat, flat]) == "INCONCLUSIVE"
    too_few = _dec([1000, 1001], [1000, 1001], band=10)
    assert stats.settled_verdict([flat, too_few]) is None
    assert stats.settled_verdict([]) == "INCONCLUSIVE"
