"""Measure several candidate trees against ONE shared baseline arm, in rotated rounds, each stopped on its own.

`interleave.interleaved_compare` alternates two trees. Proving N fixes that way costs N baselines; here every
round runs the baseline and each still-undecided candidate once (cold + warm), the order rotated by one position
per round (A F1 F2, F1 F2 A, F2 A F1, ...) so a position in the round favours no arm over a cycle. After each round
every candidate is compared with all the baseline samples so far and stopped by the same rule as
`interleaved_compare` (`stats.until_decided` per clock, combined by `stats.settled_verdict`); a decided candidate
stops running while the others go on. Baseline samples measured before the rounds (the diagnosis' own cold+warm
run) are passed in as its `samples` and stand for its runs of the first rounds (`skip_baseline_rounds`).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import stats
from ..models import Report, WarningCode, warn
from ..models.comparison import EXIT_CODES, ClockDecision, Comparison, Interleaved
from .equivalence import without_added_args
from .interleave import BuildReport, RunSample, _decide
from .verdict import compare

ORDER = "one shared baseline; each round runs the baseline and every undecided candidate, rotated by one"


@dataclass
class Arm:
    """One tree to measure: its name, where it runs, the argv it runs (paths mapped into its copy)."""

    name: str
    cwd: Path
    command: list[str]
    samples: list[Any] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)  # extra environment for the hook (an experiment's settings)
    active: bool = True
    comparison: Comparison | None = None
    stopped_because: str = ""
    decided: bool | None = None
    decisions: list[ClockDecision] = field(default_factory=list)
    acts_through: str | None = None  # this arm's change ("scheduling" for a preload); None: the run's default
    launch_args: dict[str, list[str]] = field(default_factory=dict)  # arguments its edits add to launches, by kernel
    launch_args_at: dict[str, int] = field(default_factory=dict)  # where they sit when not last (Edit.launch_args_at)
    # per sample of a candidate, the index of the baseline sample of the same round: the pairs it is judged on
    rounds_with: list[int] = field(default_factory=list)
    clock: str = ""  # the clock its saving is read on (`clocks.finding_clock`); "" for the comparison's headline


# a precision needs a spread from at least 2 degrees of freedom: from 2 pairs one difference's luck decides it (the fem
# example under load stopped after 2 pairs "known to ±2%" as shares while its ms interval ran 853 to 1,846)
PRICE_MIN_PAIRS = 3


def relative_half_width(c: Comparison, intended: str) -> tuple[float | None, str]:
    """How precisely the saving is known: the 95% interval's half width over its centre, on the clock the saving is
    read on; as a share when the pairs give one (a load stretches a pair's difference and its before value alike),
    else in ms; with the unit it was judged in. None without an interval or with a centre of zero."""
    from ..clocks import finding_clock

    k = c.clock(finding_clock(c, intended or "compile_elapsed"))
    iv = k.interval if k is not None else None
    if iv is None:
        return None, ""
    if iv.mean_pct is not None and iv.low_pct is not None and iv.high_pct is not None:
        centre, half, unit = iv.mean_pct, (iv.high_pct - iv.low_pct) / 2.0, "as a share of the compile"
    else:
        centre, half, unit = iv.mean_ms, (iv.high_ms - iv.low_ms) / 2.0, "in ms"
    return (abs(half / centre) if centre else None), unit


# clocks a fix of a cost paid at every call is judged on alone (WC-1)
PER_CALL_CLOCKS = frozenset({"steady", "steady_cpu"})
_BY_OUTCOME = {"improved": "IMPROVED", "regressed": "REGRESSION"}


def per_call_clock(c: Comparison, name: str) -> str:
    """The per-call clock a comparison judges on: the CPU twin (steady_cpu) where the comparison decides on CPU time
    and both arms read it (the calls are Python and CPU-kernel work on the app's thread: a machine shared with other
    jobs stretches their wall time, not their CPU time), else the wall clock named."""
    from ..clocks import CPU_CLOCK_OF

    twin = CPU_CLOCK_OF.get(name, "")
    k = c.clock(twin) if twin and c.clock_basis == "cpu" else None
    return twin if k is not None and k.before.median is not None and k.after.median is not None else name


def on_clock(c: Comparison, name: str) -> Comparison:
    """The comparison judged on the one clock `name` (a per-call fix: the compile clocks it leaves alone would call it
    NO_EFFECT, identical work, and stop it after two pairs). That clock becomes the headline and the only one that
    decides; an INVALID comparison stays INVALID. The compile clocks' verdict is kept in the reason."""
    k = c.clock(name)
    if k is None or c.verdict == "INVALID":
        return c
    view = c.model_copy(deep=True)
    for clock in view.clocks:
        if clock.name == name:
            clock.role, clock.decisive, clock.left_out = "headline", True, ""
        else:
            clock.role = "informational"
    view.headline = name  # type: ignore[assignment]
    view.verdict = _BY_OUTCOME.get(k.outcome, "INCONCLUSIVE")  # type: ignore[assignment]
    view.exit_code = EXIT_CODES[view.verdict]
    view.reason = (f"judged on {k.title} alone (a cost paid at every call): {k.before.median} -> {k.after.median} ms, "
                   f"band ±{k.band_ms} ms; the compile clocks say {c.verdict}: {c.reason}")
    return view


def _accepts(fn: Callable[..., Any], name: str) -> bool:
    try:
        return name in inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False


def compare_arm(base: Report, after: Report, base_name: str, arm_name: str, acts_through: str | None,
                paired: bool = False) -> Comparison:
    """`compare`, with `acts_through` passed only where this version of compare takes it (issue 17 adds it)."""
    kw: dict[str, Any] = {}
    if acts_through is not None and _accepts(compare, "acts_through"):
        kw["acts_through"] = acts_through
    if paired and _accepts(compare, "paired"):
        kw["paired"] = True
    return compare(base, after, before_label=base_name, after_label=arm_name, **kw)


def _shaky(c: Comparison, decisions: list[ClockDecision]) -> list[ClockDecision]:
    """The decisive clocks of a verdict of the medians when every one of their 95% intervals (paired t) still
    reaches inside the band; empty when the verdict stands on at least one interval (or is no timing verdict)."""
    if c.verdict not in ("IMPROVED", "REGRESSION"):
        return []
    word = "improved" if c.verdict == "IMPROVED" else "regressed"
    moved = {k.name for k in c.clocks if k.decisive and k.outcome == word and k.judged != "counts"}
    shaky = [d for d in decisions if d.name in moved and d.outcome != word]
    return shaky if moved and len(shaky) == len(moved) else []


def _tentative(c: Comparison, decisions: list[ClockDecision]) -> None:
    """A verdict of the medians whose 95% intervals (paired t) all still reach inside the band is not a verdict (the
    same guard as `interleaved_compare` applies to a fixed number of pairs)."""
    if c.interleaved is None:
        return
    shaky = _shaky(c, decisions)
    if shaky:
        c.interleaved.by_medians = c.verdict
        c.reason = f"{c.verdict} by the medians only, the 95% interval still reaches inside the band: {c.reason}"
        c.verdict = "INCONCLUSIVE"
        c.exit_code = EXIT_CODES["INCONCLUSIVE"]
        c.warnings.append(warn(WarningCode.TENTATIVE, clocks=[d.name for d in shaky]))


def multiarm_compare(
    baseline: Arm,
    arms: list[Arm],
    *,
    rounds: int | None = None,
    until_decided: bool = True,
    min_rounds: int = 2,
    max_rounds: int = 6,
    timeout_s: float = 900.0,
    progress: Callable[[str], None] | None = None,
    run_sample: RunSample,
    build_report: BuildReport,
    acts_through: str | None = None,
    on_sample: Callable[[Arm, Any], None] | None = None,
    skip_baseline_rounds: int = 0,
    warmup: int = 0,
    precision: float | None = None,
    settle_up_to: int | None = None,
) -> None:
    """Fill each arm's `comparison` against the baseline (and its `samples`, `stopped_because`, `decided`).

    Without `until_decided`: exactly `rounds` samples per candidate. With it: at least `min_rounds`, at most
    `max_rounds`, each candidate stopping once its verdict cannot change or turns INVALID. `on_sample(arm, sample)`
    sees every sample (the fix engine records output and counts runs there). The baseline sits out its first
    `skip_baseline_rounds` rounds: samples it already holds (the diagnosis' own run) stand for them. `warmup`
    discarded samples of every arm come first (the eval's judge keeps hyperfine's discipline). `precision`: an
    IMPROVED arm also goes on until its saving's 95% interval is within ±precision of the saving
    (`relative_half_width`), or the limit; `stopped_because` says which. `settle_up_to` (fixed rounds only): an arm
    whose medians make a verdict its intervals do not yet bear out goes on, up to that many rounds, until they do;
    a load spike in a few rounds then costs rounds instead of the verdict (the eval's judge uses it).
    """
    limit = max_rounds if until_decided else (rounds or min_rounds)
    floor = min(min_rounds, limit) if until_decided else limit
    last = max(limit, settle_up_to or 0) if not until_decided else limit
    say = progress or (lambda _m: None)

    def sample(arm: Arm) -> None:
        index = len(arm.samples)
        say(f"fix: {arm.name} sample {index + 1}")
        extra = {"extra_env": arm.env} if arm.env else {}
        got = run_sample(arm.command, arm.cwd, index, timeout_s=timeout_s, progress=None, **extra)
        arm.samples.append(got)
        if on_sample is not None:
            on_sample(arm, got)

    for w in range(warmup):
        for arm in (baseline, *arms):
            say(f"warm-up {w + 1}/{warmup}: {arm.name}, not counted")
            extra = {"extra_env": arm.env} if arm.env else {}
            run_sample(arm.command, arm.cwd, -1 - w, timeout_s=timeout_s, progress=None, **extra)
    start = len(baseline.samples) - min(skip_baseline_rounds, len(baseline.samples))  # this call's first round
    for r in range(last):
        active = [a for a in arms if a.active]
        if not active:
            break
        order: list[Arm] = [baseline, *active]
        shift = r % len(order)
        order = order[shift:] + order[:shift]
        for arm in order:
            if arm is baseline and r < skip_baseline_rounds:
                continue  # a sample measured before the rounds stands for the baseline's run of this round
            sample(arm)
            if arm is not baseline:
                arm.rounds_with.append(start + r)
        for arm in active:
            # judged against the baseline samples of its own rounds, pair by pair: each pair shares its moment's
            # machine state, which a load that comes and goes would otherwise put between the arms
            mine = [baseline.samples[i] for i in arm.rounds_with if i < len(baseline.samples)]
            base = build_report(baseline.command, baseline.cwd, mine, label="before", requested=len(mine))
            n = len(arm.samples)
            after = build_report(arm.command, arm.cwd, list(arm.samples), label="after", requested=n)
            added = without_added_args(after, arm.launch_args, arm.launch_args_at)
            c = compare_arm(base, after, baseline.name, arm.name, arm.acts_through or acts_through,
                            paired=len(mine) == n)
            if added:
                c.equivalence.note = "; ".join(x for x in (c.equivalence.note, added) if x)
            if arm.clock in PER_CALL_CLOCKS:
                c = on_clock(c, per_call_clock(c, arm.clock))
            step = _decide(c, limit, floor, n)
            arm.comparison, arm.decisions = c, step.decisions
            if c.verdict == "INVALID":
                arm.active, arm.stopped_because, arm.decided = False, step.because, True
            elif until_decided and n >= floor and step.stop:
                # diagnose --verify prices a fix: an IMPROVED verdict also waits for its saving to be precise
                pricing = precision is not None and step.settled == "IMPROVED"
                rel, unit = relative_half_width(c, arm.clock) if pricing else (None, "")
                few = n < PRICE_MIN_PAIRS
                wide = rel is not None and (rel > precision or few)  # type: ignore[operator]
                if wide and n < limit:
                    continue  # decided, but the saving is not yet known to the precision asked
                because = step.because
                if pricing:
                    known = f"±{rel:.0%} {unit}" if rel is not None else "no interval"
                    if few and rel is not None:
                        known += f" from {n} pair(s), too few to trust a spread"
                    because += (f"; its saving still {known} at the limit of {limit} pairs (asked ±{precision:.0%})"
                                if wide else f"; its saving known to {known} (asked ±{precision:.0%})")
                arm.active, arm.stopped_because, arm.decided = False, because, step.decided
                if step.settled is None and not step.decided:
                    c.warnings.append(warn(WarningCode.NOT_SETTLED, pairs=n))
            elif n >= limit:
                if n < last and _shaky(c, step.decisions):
                    continue  # the medians moved past the band, the intervals not yet: more rounds, not a guess
                arm.active = False
                arm.stopped_because = f"ran the {n} requested sample{'s' if n != 1 else ''}"
                if n > limit:
                    arm.stopped_because = (f"ran {n} samples: the {limit} requested, then more until the 95% interval "
                                           f"bore out the medians' verdict (at most {last})")
                arm.decided = False if until_decided else None
    rule = stats.UNTIL_DECIDED_RULE.format(min_pairs=floor, max_samples=limit) if until_decided else ""
    for arm in arms:
        c = arm.comparison
        if c is None:
            continue
        c.interleaved = Interleaved(
            pairs=len(arm.samples), order=ORDER, until_decided=until_decided,
            decided=arm.decided if until_decided else None, stopped_because=arm.stopped_because, rule=rule,
            min_pairs=floor if until_decided else None, max_samples=limit if until_decided else None,
            clocks=arm.decisions, before_cwd=str(baseline.cwd), after_cwd=str(arm.cwd),
        )
        if arm.decided is not True:
            _tentative(c, arm.decisions)
