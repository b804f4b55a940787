"""The result of `warp-compile compare`: one model behind the JSON and the text output.

Every duration is in milliseconds. Bands are built from the BEFORE (baseline) arm:
max(1% of its median, 2 x its raw, unscaled MAD).
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from .base import Model as _Model
from .report import Launch, Stat, Warn

COMPARISON_SCHEMA_VERSION = 1

# NO_EFFECT: both arms compiled identical work and the change can only act through what is compiled (a settings
# experiment, a fix meant to remove builds): "no effect on what Warp compiles", whatever the timing noise says
Verdict = Literal["IMPROVED", "INCONCLUSIVE", "REGRESSION", "INVALID", "UNVERIFIED", "NO_EFFECT"]
ClockName = Literal[
    "compile_elapsed", "warm_repeat", "cold_module", "cuda_compile", "cold_wall", "warm_wall", "pch", "native",
    "codegen", "steady", "steady_cpu", "compile_cpu", "cold_module_cpu", "cold_cpu", "warm_cpu", "pch_cpu",
    "native_cpu", "cuda_compile_cpu",
]
# what a change can act through: "compiled" (settings, code fixes: identical work means no effect), "scheduling"
# (preloads, worker threads: identical work, judged on time), "unknown" (a plain compare: judged on time)
ActsThrough = Literal["compiled", "scheduling", "unknown"]

EXIT_CODES: dict[str, int] = {
    "IMPROVED": 0, "INCONCLUSIVE": 0, "UNVERIFIED": 0, "NO_EFFECT": 0, "REGRESSION": 1, "INVALID": 1,
}
GATE_FAILED_EXIT = 1  # --max-regression: the verdict's clock regressed by more than the allowed percentage



class EffectInterval(_Model):
    """The 95% interval of the effect after - before, in ms (see `stats.effect_interval`): Student's t over the paired
    differences of interleaved samples, Welch's t over two independent arms. What a saving is reported with: made to
    cover the true effect, where the band only says how small a change is too small to count.

    The `_pct` bounds are the effect as a share of the before arm on the whole clock: with pairs, the t interval of
    each pair's difference over its own before value; else the ms interval over the before median. On a loaded
    machine the CPU cost of the same compile drifts with the load (by a third within one benchmark), and an effect in
    ms drifts with it; its share of the compile does not, so the share is the figure that carries to another run
    (bench/COVERAGE.md holds both against the truth)."""

    mean_ms: float
    low_ms: float
    high_ms: float
    n: int  # pairs, or the smaller arm
    method: str  # "paired t" | "welch t"
    confidence: float = 0.95
    mean_pct: float | None = None
    low_pct: float | None = None
    high_pct: float | None = None


class Clock(_Model):
    """One clock of the comparison.

    `judged` says how the clock was read: against its band ("improved" / "regressed" / "within band"), or, when
    the baseline median is below the timing floor (a few ms, where a percentage band means nothing), on counts
    ("counts"; the counts are in `counts_before` / `counts_after` and their direction in `outcome`).
    `outcome` is the direction the verdict sees: "improved" / "regressed" / "unchanged", or "not judged" when the
    clock has no data. `decisive` is False when the clock was read but deliberately left out of the verdict
    (`note` says why: identical work makes the summed clock meaningless, or the warm run compiled so cold - warm
    no longer isolates compilation).
    """

    name: ClockName
    title: str
    before: Stat = Field(default_factory=Stat)
    after: Stat = Field(default_factory=Stat)
    delta_ms: float | None = None  # after.median - before.median
    delta_pct: float | None = None  # of before.median; None below the timing floor
    band_ms: float | None = None  # max(1% of before median, 2 x before raw MAD)
    judged: Literal["improved", "regressed", "within band", "counts", "not judged"] = "not judged"
    outcome: Literal["improved", "regressed", "unchanged", "not judged"] = "not judged"
    decisive: bool = True
    left_out: str = ""  # when not decisive: why the clock stayed out of the verdict
    counts_label: str | None = None  # what the counts count, e.g. "compiled events in the warm run"
    counts_before: int | None = None
    counts_after: int | None = None
    p_value: float | None = None  # two-sided Mann-Whitney U over the samples (informational; the band decides)
    p_method: Literal["exact", "normal"] | None = None
    note: str = ""
    # "headline": the clock the comparison is about; "deciding": may decide when the headline stays in its band;
    # "informational": shown with its band and delta, never decides
    role: Literal["headline", "deciding", "informational"] = "deciding"
    # set when the medians are not the time the title names (e.g. cold - warm when the warm run compiled too)
    not_a_time: str = ""
    drift_corrected: bool = False  # AFTER median divided by the drift factor (saved-report compares)
    after_raw_median: float | None = None  # the AFTER median as measured, before the drift correction
    interval: EffectInterval | None = None  # of after - before; None with one sample a side (no spread to go by)
    # the per-sample values the interval and the stopping rule use when work both arms did identically was left
    # out (probe/compare/same.py): the medians above stay those of the whole clock
    basis_before: Stat | None = None
    basis_after: Stat | None = None
    identical_ms: float | None = None  # the median identical work left out of each run (before arm)


class Drift(_Model):
    """Machine drift between two saved reports, estimated on work both did identically (the yardstick).

    `factor` = yardstick time after / before; AFTER time clocks are divided by it before they are judged.
    `band_pct` is the uncertainty of the factor (from the samples' spread); `limit_pct` the largest drift a
    correction is trusted for. `trusted` False (no yardstick, too little of it, too uncertain, or beyond the limit):
    timed verdicts are set aside (INCONCLUSIVE) and the interleaved compare is recommended.
    """

    factor: float | None = None
    yardstick: str = ""  # what was compared, in words
    yardstick_before_ms: float | None = None
    yardstick_after_ms: float | None = None
    pieces: list[str] = Field(default_factory=list)  # modules (and "precompiled header") in the yardstick
    band_pct: float | None = None
    limit_pct: float = 0.0
    trusted: bool = False
    reason: str = ""
    cpu: Drift | None = None  # the same estimate on the CPU clocks, which correct the CPU clocks


class Gate(_Model):
    """`compare --max-regression PCT`: a CI gate on the (drift-corrected) clock the verdict rests on: the headline,
    or the deciding clock that regressed while the headline stayed inside its band."""

    max_regression_pct: float
    headline: ClockName
    delta_pct: float | None = None  # the headline's (drift-corrected) change, percent of BEFORE
    beyond_band: bool = False
    passed: bool = True
    exit_code: int = 0
    reason: str = ""


class Divergence(_Model):
    """The first launch position where the two runs differ (`None` on one side: that run had no launch there)."""

    index: int  # 0-based position in the expanded (count-unrolled) launch sequence
    before: Launch | None = None
    after: Launch | None = None
    fields: list[str] = Field(default_factory=list)  # which compared fields differ (dim, device, dtypes, ...)
    description: str = ""


class Rename(_Model):
    """A kernel name that changed at equal launch positions (allowed: moving a closure to module scope renames it)."""

    before: str
    after: str
    before_module: str = ""
    after_module: str = ""
    launches: int = 0  # launches at which this pair was seen


class Equivalence(_Model):
    """Was the same work done? Launch structure only: order, count, dim, device, dtypes, block_dim, adjoint, tiled.

    Kernel and module names are not part of it; changed names are listed in `renames`.
    """

    status: Literal["equivalent", "changed", "unverified"]
    compared: list[str] = Field(
        default_factory=lambda: ["order", "count", "dim", "device", "dtypes", "block_dim", "adjoint", "tiled"]
    )
    first_divergence: Divergence | None = None
    renames: list[Rename] = Field(default_factory=list)
    before_launches: int = 0
    after_launches: int = 0
    checked_launches: int = 0  # positions actually compared (less than the totals when a list was truncated)
    note: str = ""


class Count(_Model):
    before: int | None = None
    after: int | None = None

    @property
    def changed(self) -> bool:
        return self.before != self.after


class Structure(_Model):
    """What was built, from each report's reference sample."""

    identities: Count = Field(default_factory=Count)
    modules: Count = Field(default_factory=Count)
    generated_source_bytes: Count = Field(default_factory=Count)
    lto_artifacts: Count = Field(default_factory=Count)
    compiled_events: Count = Field(default_factory=Count)  # builds with status "compiled" in the cold run
    warm_compiled_events: Count = Field(default_factory=Count)  # ... in the warm run (should be 0: cache reuse)
    # precompiled headers built in the cold run: outside every module's hash, so identical work can still differ
    # here (use_precompiled_headers), which NO_EFFECT and the drift yardstick take into account
    headers: Count = Field(default_factory=Count)
    # same identities, module hashes and LTO artifacts, and generated source bytes equal within
    # max(256 bytes, 0.1%) (line-number comments in Warp's generated source move with the user's code)
    identical_work: bool = False
    note: str = ""


class ModuleHashRow(_Model):
    """Hashes of one (module, device, block_dim) in the cold run; a changed row is the receipt of a changed build."""

    module: str
    device: str
    block_dim: int | None = None
    before_hashes: list[str] = Field(default_factory=list)  # short hashes, in load order
    after_hashes: list[str] = Field(default_factory=list)
    changed: bool = False


class ClockDecision(_Model):
    """Where one clock stood when the interleaved run stopped (see `warp_compile.probe.stats.until_decided`)."""

    name: ClockName
    outcome: Literal["improved", "regressed", "equivalent", "undecided", "counts", "not judged"]
    ci_low_ms: float | None = None
    ci_high_ms: float | None = None
    band_ms: float | None = None
    p_value: float | None = None
    reason: str = ""


class Interleaved(_Model):
    """How an interleaved (A B, B A, ...) comparison ran."""

    pairs: int
    order: str = "A B, B A, A B, ..."
    warmup: int = 0  # discarded samples of each arm before the first pair
    until_decided: bool = False
    decided: bool | None = None  # None when --until-decided was not asked for
    stopped_because: str = ""
    settled: Verdict | None = None  # the verdict the bootstrap intervals settled on, when that stopped the run
    # IMPROVED / REGRESSION the medians alone gave, set aside (verdict INCONCLUSIVE) because no moved clock's
    # bootstrap interval cleared the band: what an A/A control counts as the medians' false verdicts
    by_medians: Verdict | None = None
    rule: str = ""
    min_pairs: int | None = None
    max_samples: int | None = None
    clocks: list[ClockDecision] = Field(default_factory=list)
    before_cwd: str = ""
    after_cwd: str = ""


class Comparison(_Model):
    """The result of `warp-compile compare`."""

    schema_version: Literal[1] = COMPARISON_SCHEMA_VERSION
    kind: Literal["warp-compile-comparison"] = "warp-compile-comparison"
    verdict: Verdict
    reason: str
    exit_code: int
    headline: ClockName
    clocks: list[Clock] = Field(default_factory=list)
    equivalence: Equivalence
    structure: Structure = Field(default_factory=Structure)
    module_hashes: list[ModuleHashRow] = Field(default_factory=list)
    # the larger of the two reports' `other_share`: how much of the machine other work used while the arms ran
    other_share: float | None = None
    warnings: list[Warn] = Field(default_factory=list)
    interleaved: Interleaved | None = None
    before_label: str = ""
    after_label: str = ""
    before_samples: int = 0  # successful samples behind the BEFORE clocks
    after_samples: int = 0
    before_failed_samples: int = 0
    after_failed_samples: int = 0
    timing_floor_ms: float = 5.0  # below this baseline median a clock is judged on counts
    acts_through: ActsThrough = "unknown"  # what the change can act through (see ActsThrough)
    moved_costs: list[str] = Field(default_factory=list)  # costs that moved between clocks, in words
    drift: Drift | None = None  # saved-report compares: machine drift estimated on identical work
    gate: Gate | None = None  # --max-regression
    # which clocks decide, in words: "cpu" (the CPU clocks decide, wall clocks beside them) or "wall", and why
    clock_basis: str = ""
    clock_basis_reason: str = ""

    def clock(self, name: str) -> Clock | None:
        for c in self.clocks:
            if c.name == name:
                return c
        return None
