"""Measure two source trees alternately (A B, B A, ...) so drift on a shared machine hits both arms alike.

Optionally until the verdict settles (`stats.until_decided` per clock, combined by `stats.settled_verdict`).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

from .. import stats
from ..errors import UsageError
from ..models import Report, WarningCode, warn
from ..models.comparison import (
    EXIT_CODES,
    ActsThrough,
    ClockDecision,
    Comparison,
    Interleaved,
    Verdict,
)
from .verdict import compare

RunSample = Callable[..., Any]
BuildReport = Callable[..., Report]


class Step(NamedTuple):
    """Where one interim comparison leaves the run: stop or go on, and the verdict the intervals settled on."""

    stop: bool
    decided: bool
    because: str
    settled: Verdict | None
    decisions: list[ClockDecision]


def _decide(c: Comparison, max_samples: int, min_pairs: int, pairs: int) -> Step:
    """One interim comparison against the stopping rule (see `stats.settled_verdict`)."""
    if c.verdict == "INVALID":
        return Step(True, True, f"INVALID after {pairs} pair{'s' if pairs != 1 else ''}: {c.reason}", None, [])
    if c.verdict == "NO_EFFECT" and pairs >= min_pairs:  # identical work: more pairs cannot give the change an effect
        return Step(True, True, f"identical work after {pairs} pairs: no effect on what Warp compiles", "NO_EFFECT", [])
    decisions: list[ClockDecision] = []
    deciding: list[stats.Decision] = []
    for k in c.clocks:
        if k.role == "informational":
            continue
        if not k.decisive or k.outcome == "not judged":
            decisions.append(ClockDecision(name=k.name, outcome="not judged", reason=k.note))
            continue
        if k.judged == "counts":
            fixed = {"improved": "improved", "regressed": "regressed"}.get(k.outcome, "equivalent")
            outcome = fixed if pairs >= min_pairs else "undecided"
            deciding.append(
                stats.Decision(
                    decided=outcome != "undecided",
                    exhausted=False,
                    outcome=outcome,  # type: ignore[arg-type]
                    pairs=pairs,
                    band=k.band_ms or 0.0,
                )
            )
            decisions.append(
                ClockDecision(name=k.name, outcome="counts", band_ms=k.band_ms, reason=f"judged on counts: {k.outcome}")
            )
            continue
        b, a = (k.basis_before, k.basis_after) if k.basis_before and k.basis_after else (k.before, k.after)
        d = stats.until_decided(b.values, a.values, k.band_ms or 0.0, max_samples, min_pairs=min_pairs)
        deciding.append(d)
        decisions.append(
            ClockDecision(
                name=k.name,
                outcome=d.outcome,
                ci_low_ms=d.interval.low if d.interval else None,
                ci_high_ms=d.interval.high if d.interval else None,
                band_ms=d.band,
                p_value=d.rank_test.p if d.rank_test else None,
                reason=d.reason,
            )
        )
    settled = stats.settled_verdict(deciding) if pairs >= min_pairs else None
    if settled is not None:
        return Step(True, True, f"the verdict settled as {settled} after {pairs} pairs", settled, decisions)
    if pairs >= max_samples:
        return Step(True, False, f"reached the limit of {max_samples} pairs before the verdict settled", None,
                    decisions)
    return Step(False, False, "", None, decisions)


def interleaved_compare(
    command: list[str],
    before_cwd: Path,
    after_cwd: Path,
    samples: int | None = None,
    until_decided: bool = False,
    max_samples: int = 20,
    timeout_s: float = 900.0,
    progress: Callable[[str], None] | None = None,
    *,
    warmup: int = 1,
    run_sample: RunSample | None = None,
    build_report: BuildReport | None = None,
    arm_env: tuple[dict[str, str], dict[str, str]] | None = None,
    arm_labels: tuple[str, str] | None = None,
    acts_through: ActsThrough = "unknown",
) -> Comparison:
    """Measure BEFORE and AFTER alternately (A B, B A, A B, ...), one cold + warm sample per arm per pair.

    `warmup` discarded samples of each arm come first. The order inside a pair alternates, so a position effect
    (the second run of a pair finding warmer caches) cancels over two pairs instead of favouring one arm.

    Without `until_decided`: `samples` pairs (default 5). With it: at least `samples` pairs (default and minimum 3),
    stopping after the first pair at which the verdict can no longer change (`stats.until_decided` per clock,
    combined by `stats.settled_verdict`), at most `max_samples` pairs. Either way, an INVALID interim comparison
    (changed workload, failed AFTER sample, build errors) stops at once: more samples cannot make it valid.

    `run_sample` / `build_report` default to `warp_compile.probe.measure`; tests inject a mock executor.
    `arm_env` gives each arm extra environment for the hook (an experiment: the same tree, other Warp settings);
    `arm_labels` names the arms in the text. `acts_through` (see `compare`): "compiled" for a settings experiment
    or a code fix meant to remove builds, so identical work in both arms reads NO_EFFECT.
    """
    if run_sample is None or build_report is None:
        from .. import measure as _measure  # the sandbox; imported only when measuring

        run_sample = run_sample or _measure.run_sample
        build_report = build_report or _measure.build_report
    before_cwd, after_cwd = Path(before_cwd), Path(after_cwd)
    if not command:
        raise UsageError("interleaved compare needs a command after `--`")
    if until_decided:
        min_pairs = max(stats.MIN_PAIRS, samples or stats.MIN_PAIRS)
        limit = max_samples
        if max_samples < min_pairs:
            raise UsageError(f"--max-samples {max_samples} is below the minimum of {min_pairs} pairs")
    else:
        min_pairs = samples or 5
        limit = min_pairs
        if limit < 1:
            raise UsageError("--samples must be at least 1")

    def say(msg: str) -> None:
        if progress is not None:
            progress(msg)

    arms: tuple[list[Any], list[Any]] = ([], [])
    interim: Comparison | None = None
    stop_because = ""
    decided: bool | None = None
    settled: Verdict | None = None
    decisions: list[ClockDecision] = []
    pairs = 0
    arm_dirs = ((0, before_cwd), (1, after_cwd))
    envs = arm_env or ({}, {})
    names = arm_labels or ("before", "after")

    def sample(side: int, cwd: Path, index: int, prog: Callable[[str], None] | None) -> Any:
        extra = {"extra_env": envs[side]} if envs[side] else {}
        return run_sample(command, cwd, index, timeout_s=timeout_s, progress=prog, **extra)
    for w in range(warmup):
        # hyperfine's discipline: the first runs after a pause pay for cold disk caches and clocks; discard them
        for side, cwd in arm_dirs:
            say(f"warm-up {w + 1}/{warmup}: {names[side]} ({cwd}), not counted")
            sample(side, cwd, -1 - w, None)
    for i in range(limit):
        # A B, then B A: whatever the position in a pair does to a run (a warmer cache, a slower core) hits both
        # arms alike over every two pairs instead of always the same arm
        for side, cwd in arm_dirs if i % 2 == 0 else arm_dirs[::-1]:
            say(f"pair {i + 1}/{limit}: {names[side]} ({cwd})")
            arms[side].append(sample(side, cwd, i, progress))
        pairs = i + 1
        interim = _compare_arms(command, before_cwd, after_cwd, arms, build_report, arm_labels, acts_through)
        step = _decide(interim, max_samples if until_decided else limit, min_pairs, pairs)
        decisions = step.decisions
        if interim.verdict == "INVALID":
            stop_because, decided = step.because, True if until_decided else None
            break
        if until_decided and pairs >= min_pairs and step.stop:
            stop_because, decided, settled = step.because, step.decided, step.settled
            break
    assert interim is not None
    if not stop_because:
        stop_because = f"ran the {pairs} requested pair{'s' if pairs != 1 else ''}"
    interim.interleaved = Interleaved(
        pairs=pairs,
        warmup=warmup,
        until_decided=until_decided,
        decided=decided if until_decided else None,
        stopped_because=stop_because,
        settled=settled,
        rule=stats.UNTIL_DECIDED_RULE.format(min_pairs=min_pairs, max_samples=max_samples) if until_decided else "",
        min_pairs=min_pairs if until_decided else None,
        max_samples=max_samples if until_decided else None,
        clocks=decisions,
        before_cwd=str(before_cwd),
        after_cwd=str(after_cwd),
    )
    if until_decided and decided is False:
        interim.warnings.append(warn(WarningCode.NOT_SETTLED, pairs=pairs))
    elif not until_decided and interim.verdict in ("IMPROVED", "REGRESSION"):
        word = "improved" if interim.verdict == "IMPROVED" else "regressed"
        moved = {k.name for k in interim.clocks if k.decisive and k.outcome == word and k.judged != "counts"}
        shaky = [d for d in decisions if d.name in moved and d.outcome != word]
        if moved and len(shaky) == len(moved):
            # a load spike in one arm can push a median of a few pairs past its band on identical trees; the
            # interval does not move with it, so the medians alone do not make a verdict
            interim.interleaved.by_medians = interim.verdict
            interim.reason = (
                f"{interim.verdict} by the medians only, the 95% interval still reaches inside the band: "
                f"{interim.reason}"
            )
            interim.verdict = "INCONCLUSIVE"
            interim.exit_code = EXIT_CODES["INCONCLUSIVE"]
            interim.warnings.append(warn(WarningCode.TENTATIVE, clocks=[d.name for d in shaky]))
    if settled and interim.verdict in EXIT_CODES and interim.verdict not in (settled, "UNVERIFIED", "INVALID"):
        interim.warnings.append(warn(WarningCode.SETTLED_DIFFERS, settled=settled, verdict=interim.verdict))
    return interim


def _compare_arms(
    command: list[str],
    before_cwd: Path,
    after_cwd: Path,
    arms: tuple[list[Any], list[Any]],
    build_report: BuildReport,
    labels: tuple[str, str] | None = None,
    acts_through: ActsThrough = "unknown",
) -> Comparison:
    n = len(arms[1])
    before = build_report(command, before_cwd, list(arms[0]), label="before", requested=n)
    after = build_report(command, after_cwd, list(arms[1]), label="after", requested=n)
    names = labels or (f"before ({before_cwd})", f"after ({after_cwd})")
    return compare(before, after, before_label=names[0], after_label=names[1], acts_through=acts_through, paired=True)
