"""`diagnose --verify`: every finding with an edit or a setting is measured through the fix engine (fix/engine.py).

An estimate tells an agent where to look; a measurement tells it whether the change is worth making. Each finding's
edits are applied to a scratch copy (a finding with only a hook-applied experiment runs on the original copy with
the setting), all measured against one shared baseline arm (the diagnosis' own run is its first sample) and
stopped per finding by the sequential test. Then:

* IMPROVED with behaviour kept: the measured saving sits next to the estimate (`measured`), with the agreement;
* no effect (INCONCLUSIVE, NO_EFFECT, ...): shown as "measured: no effect", ranked by its measurement (zero); an
  INCONCLUSIVE one whose interval lies wholly on the saving side says "undecided" with that interval instead;
* REGRESSION, INVALID, changed behaviour or an edit that does not apply: withdrawn from `findings` into
  `withdrawn`, with the evidence (that is a defect of its rule).

The measured saving is read on the same clock `fix` reports and `compare` decides on (probe/clocks.py): compile CPU
for CPU compile work where both arms measured the CPU clocks, its wall twin otherwise; `diagnose` puts its estimates
on that clock too (probe/pricing.py). Its band is the 95% interval of the effect over the paired rounds;
`compile_elapsed_saving_ms` is the wall time the user waited, for reference.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..contention import is_contended
from ..fmt import fmt_ms
from ..models.diagnosis import Diagnosis, Finding, MeasuredSaving, Verification, Withdrawn
from ..models.fix import CandidateFix
from .engine import Engine, FixOptions, run_fix
from .policy import finding_keys

ESTIMATE_CLOCK = "compile_cpu"  # where a comparison has no other: see `measured_saving`
AGREE_SHARE = 0.25  # estimate within a quarter of the measurement (or within the band) counts as agreeing
MIN_ROUNDS, MAX_ROUNDS = 2, 10  # per finding: until its interval decides, at most 10 pairs (the stated limit)
# and an IMPROVED finding until its saving is known to within AGREE_SHARE of itself: a saving measured to ±60% cannot
# say whether an estimate agrees (the fem example under load settled as IMPROVED after 3 pairs at 1.1 s, 0.4 to 2.0).
# 10, not 6: with three compile jobs running, 4 of 5 fem runs still stood at ±28 to ±43% after 6 pairs (one of them
# 40% above the quiet truth); the half-width shrinks by about 0.7 from 6 to 10 pairs (bench/LOAD_NUMBERS.md)


def agreement(f: Finding, m: MeasuredSaving, applied: dict[str, str] | None = None) -> str:
    """One sentence: does the estimate hold, and if not, the likeliest reason."""
    est, got, band = f.estimated_saving_ms, m.saving_ms, m.band_ms or 0.0
    low, high = m.saving_low_ms, m.saving_high_ms
    within = low is not None and high is not None and est is not None and low <= est <= high
    if low is not None and high is not None:
        band = max(abs(high - (got or 0.0)), abs((got or 0.0) - low))
    if got is None:
        return "not measured: the comparison produced no timing on this clock"
    if m.verdict == "INVALID":
        return "the fix changed the workload (INVALID), so its timing does not price it"
    not_taken = [k for k, v in (applied or {}).items() if v not in ("applied", "hook")]
    if not_taken:
        return f"the setting(s) {', '.join(not_taken)} did not take in the measured process; the measurement shows none"
    if m.verdict == "REGRESSION":
        return f"measured: slower ({fmt_ms(-got)} more on this clock, band ±{fmt_ms(band)})"
    if m.verdict == "INCONCLUSIVE" and low is not None and low > 0:
        # the interval says it saves; only the before runs' own spread held the verdict back (a loaded machine)
        return (f"measured: undecided after {m.pairs} pairs: {fmt_ms(got)} saved (95% interval {fmt_ms(low)} to "
                f"{fmt_ms(high or got)}), but the original's own runs spread ±{fmt_ms(m.band_ms or 0.0)}, which the "
                "interval does not clear; ranked at zero until a longer run decides (--verify-max-pairs)")
    if m.verdict != "IMPROVED":
        return f"measured: no effect ({m.verdict}; {fmt_ms(got)} against a band of ±{fmt_ms(band)})"
    if est is None:
        return f"measured {fmt_ms(got)} (band ±{fmt_ms(band)}); the finding had no estimate"
    gap = abs(got - est)
    if within or gap <= max(band, AGREE_SHARE * max(abs(got), abs(est))):
        return f"the estimate ({fmt_ms(est)}) agrees with the measurement ({fmt_ms(got)}, band ±{fmt_ms(band)})"
    if got < est:
        return (
            f"the measurement ({fmt_ms(got)}) is below the estimate ({fmt_ms(est)}) by more than the band: the "
            "fix may reach only some of the modules (those created before it took keep their options), or "
            "the estimate's model of the compile overstates this code"
        )
    return (
        f"the measurement ({fmt_ms(got)}) is above the estimate ({fmt_ms(est)}) by more than the band: the fix "
        "also changed builds the estimate did not count (e.g. headers or modules it shares)"
    )


def _saving(c: CandidateFix, name: str) -> tuple[float | None, float | None]:
    k = next((s for s in c.savings if s.name == name), None)
    return (k.saving_ms, k.band_ms) if k is not None else (None, None)


def measured_saving(f: Finding, c: CandidateFix) -> MeasuredSaving:
    """The fix engine's measurement on the finding's one clock (the candidate's, as `fix` reports it)."""
    clock = c.clock or ESTIMATE_CLOCK
    m = MeasuredSaving(
        settings=dict(f.experiment or {}), clock=clock, saving_ms=c.saving_ms, band_ms=c.band_ms,
        saving_low_ms=c.saving_low_ms, saving_high_ms=c.saving_high_ms,
        saving_pct=c.saving_pct, compile_elapsed_saving_ms=_saving(c, "compile_elapsed")[0], verdict=c.verdict or "",
        pairs=c.pairs, decided=c.decided, stopped_because=c.stopped_because, other_share=c.other_share,
    )
    m.agreement = agreement(f, m) + contended(m)
    return m


def contended(m: MeasuredSaving) -> str:
    """What a busy machine does to the figure, when it was busy: CPU time of the same compile rises on shared cores
    and caches (CS-10's saving on the fem example read 10 to 14% high with three compile jobs on two cores)."""
    share = m.other_share
    if not is_contended(share) or m.saving_ms is None:
        return ""
    pct = f" (as a share of the compile, {m.saving_pct:g}%, which moves less)" if m.saving_pct is not None else ""
    return (f"; measured while other work used {share:.0%} of the machine: CPU time runs high on shared cores, so "
            f"a quiet machine likely saves less than {fmt_ms(m.saving_ms)}{pct}")


def withdraw_reason(c: CandidateFix) -> str | None:
    """Why a measured fix is taken back, or None when it stands (improved, or measured to have no effect)."""
    if c.status in ("conflict", "invalid", "failed"):
        return f"its fix could not be measured: {c.reason}"
    if c.status != "measured":
        return None
    if c.verdict in ("REGRESSION", "INVALID"):
        return f"applied to a copy, the fix measured {c.verdict}: {c.verdict_reason}"
    if c.behaviour is not None and not c.behaviour.ok:
        return f"applied to a copy, the fix changed the app's behaviour: {c.behaviour.note}"
    return None


def verify(
    diagnosis: Diagnosis,
    command: list[str],
    cwd: Path,
    *,
    pairs: int | None = None,
    max_pairs: int = MAX_ROUNDS,
    timeout_s: float = 900.0,
    progress: Callable[[str], None] | None = None,
    cancel: threading.Event | None = None,
    seed: Any = None,
    engine: Engine | None = None,
    cuda_arch: int | None = None,
) -> Diagnosis:
    """Measure every finding that has an edit or a setting (one shared baseline); withdraw the ones that fail."""
    options = FixOptions(write=False, combine=False, settings_arms=True, rounds=pairs, until_decided=pairs is None,
                         min_rounds=min(MIN_ROUNDS, max_pairs), max_rounds=max_pairs, timeout_s=timeout_s,
                         precision=AGREE_SHARE, below_line=False)
    result, _ = run_fix(command, cwd, options, diagnosis=diagnosis, progress=progress, cancel=cancel, seed=seed,
                        engine=engine, source=Path(diagnosis.source_root) if diagnosis.source_root else None,
                        cuda_arch=cuda_arch)
    by_key = {c.key: c for c in result.candidates}
    kept: list[Finding] = []
    for key, f in zip(finding_keys(diagnosis.findings), diagnosis.findings, strict=True):
        c = by_key[key]
        why = withdraw_reason(c)
        if c.status == "measured":
            f.measured = measured_saving(f, c)
        if c.upstream and c.improved and f.upstream is not None and c.saving_ms is not None:
            f.upstream.text += (
                f"\nMeasured: the change applied to a scratch copy of {f.upstream.distribution} saved "
                f"{fmt_ms(c.saving_ms)} on {c.clock} (band ±{fmt_ms(c.band_ms)}, {c.pairs} samples), same output.\n"
            )
        if why is None:
            kept.append(f)
        else:
            diagnosis.withdrawn.append(Withdrawn(finding=f, reason=why, verdict=c.verdict))
    diagnosis.findings = sorted(kept, key=_verified_rank)
    costs = result.costs
    diagnosis.verification = Verification(program_runs=costs.program_runs, baseline_samples=costs.baseline_samples,
                                          reused_diagnosis_sample=costs.reused_diagnosis_sample, wall_s=costs.wall_s)
    return diagnosis


def _verified_rank(f: Finding) -> tuple[float, int]:
    """Measured saving where there is one (a fix with no effect counts as zero), else the estimate."""
    m = f.measured
    if m is not None:
        return (-(m.saving_ms or 0.0) if m.verdict == "IMPROVED" else 0.0, 0)
    return (-(f.estimated_saving_ms if f.estimated_saving_ms is not None else -1.0), 1)
