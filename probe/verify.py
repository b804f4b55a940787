"""`diagnose --verify`: run each finding's experiment and put the measured saving next to the estimate.

An estimate tells an agent where to look; a measurement tells it whether the change is worth making. For every
finding that declares an experiment (Warp settings the hook can apply at `import warp`, see `experiment`), the
command runs as it is and with the settings, interleaved, and the difference of the clock the estimate is about
(cold module work: the summed build time) becomes `measured.saving_ms`, with that clock's noise band. Findings are
then ranked by measured saving where there is one. When estimate and measurement disagree by more than the band
(and by more than a quarter of the estimate), the finding says so, with the likeliest reason the run shows.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

from warp_compile.probe.compare_models import Clock, Comparison
from warp_compile.probe.diagnosis_models import Diagnosis, Finding, MeasuredSaving
from warp_compile.probe.experiment import TryResult, describe, run_try
from warp_compile.probe.render.fmt import fmt_ms

ESTIMATE_CLOCK = "cold_module"
AGREE_SHARE = 0.25  # estimate within a quarter of the measurement (or within the band) counts as agreeing

RunTry = Callable[..., TryResult]


def _clock(c: Comparison, name: str) -> Clock | None:
    return next((k for k in c.clocks if k.name == name), None)


def _saving(k: Clock | None) -> float | None:
    if k is None or k.before.median is None or k.after.median is None:
        return None
    return round(k.before.median - k.after.median, 3)


def agreement(f: Finding, m: MeasuredSaving, applied: dict[str, str]) -> str:
    """One sentence: does the estimate hold, and if not, the likeliest reason."""
    est, got, band = f.estimated_saving_ms, m.saving_ms, m.band_ms or 0.0
    if got is None:
        return "not measured: the experiment produced no timing (see the comparison's warnings)"
    if m.verdict == "INVALID":
        return "the experiment changed the workload (INVALID), so its timing does not price this fix"
    not_taken = [k for k, v in applied.items() if v not in ("applied", "hook")]
    if not_taken:
        return f"the setting(s) {', '.join(not_taken)} did not take in the measured process; the measurement shows none"
    if est is None:
        return f"measured {fmt_ms(got)} (band ±{fmt_ms(band)}); the finding had no estimate"
    gap = abs(got - est)
    if gap <= max(band, AGREE_SHARE * max(abs(got), abs(est))):
        return f"the estimate ({fmt_ms(est)}) agrees with the measurement ({fmt_ms(got)}, band ±{fmt_ms(band)})"
    if got < est:
        return (
            f"the measurement ({fmt_ms(got)}) is below the estimate ({fmt_ms(est)}) by more than the band: the "
            "setting may reach only some of the modules (those created before it took keep their options), or "
            "the estimate's model of the compile overstates this code"
        )
    return (
        f"the measurement ({fmt_ms(got)}) is above the estimate ({fmt_ms(est)}) by more than the band: the setting "
        "also changed builds the estimate did not count (e.g. headers or modules it shares)"
    )


def verify(
    diagnosis: Diagnosis,
    command: list[str],
    cwd: Path,
    *,
    pairs: int = 3,
    timeout_s: float = 900.0,
    progress: Callable[[str], None] | None = None,
    cancel: threading.Event | None = None,
    run: RunTry = run_try,
) -> Diagnosis:
    """Measure every finding that declares an experiment; same settings run once even if two findings share them."""
    done: dict[str, tuple[TryResult, MeasuredSaving]] = {}
    for f in diagnosis.findings:
        if not f.experiment:
            continue
        key = describe(f.experiment)
        if key not in done:
            if progress:
                progress(f"verify {f.mechanism}: try {key}")
            result = run(
                command, cwd, f.experiment, pairs=pairs, timeout_s=timeout_s, progress=progress, cancel=cancel
            )
            c = result.comparison
            k = _clock(c, ESTIMATE_CLOCK)
            done[key] = (
                result,
                MeasuredSaving(
                    settings=dict(f.experiment),
                    clock=ESTIMATE_CLOCK,
                    saving_ms=_saving(k),
                    band_ms=k.band_ms if k else None,
                    compile_elapsed_saving_ms=_saving(_clock(c, "compile_elapsed")),
                    verdict=c.verdict,
                    pairs=c.interleaved.pairs if c.interleaved else 0,
                ),
            )
        result, measured = done[key]
        f.measured = measured.model_copy()
        f.measured.agreement = agreement(f, f.measured, result.applied)
    diagnosis.findings.sort(key=_verified_rank)
    return diagnosis


def _verified_rank(f: Finding) -> tuple[float, int]:
    """Measured saving where there is one, else the estimate; a fix with a measurement first among equals."""
    if f.measured is not None and f.measured.saving_ms is not None:
        return (-f.measured.saving_ms, 0)
    return (-(f.estimated_saving_ms if f.estimated_saving_ms is not None else -1.0), 1)
