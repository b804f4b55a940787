"""The result of `warp-compile fix` (CLI --json and the MCP tool `fix` carry the same model).

Per finding: the candidate (its edits and their diff), whether they applied to a scratch copy, the measured
verdict against the shared baseline arm, the saving on the clock the fix is about with that clock's noise band, and
whether the fixed copy still behaves like the original. Then the combination of the fixes that improved, and what
`--write` wrote into the project (nothing without it).
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from .base import Model as _Model
from .diagnosis import Applicability, Edit
from .report import Warn

FIX_SCHEMA_VERSION = 1

# measured: the candidate ran against the baseline; skipped: nothing to measure (no edit, an upstream report, not
# selected); conflict: its edits did not apply to the copy; invalid: an edited file no longer parses (not run);
# failed: the copy could not be measured (see `reason`)
CandidateStatus = Literal["measured", "skipped", "conflict", "invalid", "failed"]


class KeptPath(_Model):
    """One must-keep invocation (the command plus `argv`) run once in the original copy and once in the fixed one."""

    argv: list[str]
    ok: bool
    note: str = ""


class Behaviour(_Model):
    """Did the fixed copy still do the app's work? Same output, same launch topology, must-keep paths intact."""

    ok: bool
    output: str = ""  # "same" or the first difference
    topology: str = ""  # the comparison's equivalence status ("equivalent", "changed", "unverified")
    kept: list[KeptPath] = Field(default_factory=list)
    flags: list[str] = Field(default_factory=list)  # fix/behaviour.py flags: output_changed, launches_removed, ...
    tolerance: str = ""  # how numbers were compared
    note: str = ""
    error_tail: list[str] = Field(default_factory=list)  # a failed run of the fixed copy: its stderr's last lines
    cause: str = ""  # ... and who caused it (the tool's own edit, when the error names a line the edit wrote)
    # fields and lines that differ between the original's own runs (a printed elapsed time, a date), set aside in the
    # output check: which, and the two values that showed it
    volatile: list[str] = Field(default_factory=list)


class ClockSaving(_Model):
    """One clock of the candidate's comparison: baseline median - candidate median (positive: it saves)."""

    name: str
    saving_ms: float | None = None
    band_ms: float | None = None
    outcome: str = ""  # the comparison's reading: improved / regressed / unchanged / not judged
    decisive: bool = True
    saving_low_ms: float | None = None  # the 95% interval of the saving (None: one sample a side)
    saving_high_ms: float | None = None


class CandidateFix(_Model):
    """One candidate: one finding's edits (or, for the combination, several findings' edits) on a scratch copy."""

    key: str  # "CS-10", or "CS-10#2" when a mechanism has several findings; "combination" for the combination
    mechanisms: list[str] = Field(default_factory=list)
    title: str = ""
    applicability: Applicability | None = None
    review: str = ""
    edits: list[Edit] = Field(default_factory=list)
    diff: str = ""
    # a finding without edits whose experiment the hook applies (diagnose --verify only; nothing to write)
    settings: dict[str, bool | int | str | None] | None = None
    command: list[str] | None = None  # the argv that runs the fixed project when it differs (a launcher it creates)
    # a change in an installed library's code, measured on a patched scratch copy of that library put first on the
    # copy's PYTHONPATH: proof for its maintainers (the finding's upstream report), never written
    upstream: bool = False
    # a next-round candidate: its edits apply to the tree this candidate's edits left (found by diagnosing that tree)
    on_top_of: str | None = None
    # offered though diagnose ruled it out as small (its estimate under the line for a finding): written only if the
    # measurement proves it
    below_line: bool = False
    # another realisation of the finding `alternative_of` (its Finding.alternatives): of a finding's realisations,
    # only the one that saves most stays improved
    alternative_of: str | None = None
    # findings with no edit of their own whose construct this candidate's edits change (composition.join_plans): one
    # plan, measured once as this candidate; when it is written, their mechanisms are carried out too
    carries: list[str] = Field(default_factory=list)
    status: CandidateStatus = "skipped"
    reason: str = ""  # why it was skipped, did not apply, or failed
    verdict: str | None = None  # the comparison's verdict (IMPROVED / INCONCLUSIVE / REGRESSION / INVALID / ...)
    verdict_reason: str = ""
    # the clock the fix is about: compile_cpu (CPU compile work), warm_cpu (a cache fix), cuda_compile_cpu, or their
    # wall twins (compile_elapsed, warm_repeat, cuda_compile) where the comparison decides on wall time
    clock: str | None = None
    saving_ms: float | None = None  # positive: it saves; paired: the pairs' mean (its interval's centre)
    band_ms: float | None = None  # that clock's noise band: the smallest change it counts, not the saving's interval
    saving_pct: float | None = None  # as a share of the baseline: the mean of each pair's share when paired
    # the 95% interval of the saving on that clock (paired t over the rounds; None: one sample a side), the band a
    # saving is reported with
    saving_low_ms: float | None = None
    saving_high_ms: float | None = None
    savings: list[ClockSaving] = Field(default_factory=list)  # every clock of the comparison
    estimated_saving_ms: float | None = None
    other_share: float | None = None  # how much of the machine other work used during its rounds (probe/contention.py)
    pairs: int = 0  # samples of this arm (each a cold and a warm run)
    stopped_because: str = ""
    decided: bool | None = None  # its interval decided before the limit (False: the limit was reached; None: --pairs N)
    behaviour: Behaviour | None = None
    improved: bool = False  # verdict IMPROVED and behaviour kept: what --write may apply

    @property
    def behaviour_ok(self) -> bool | None:
        return self.behaviour.ok if self.behaviour is not None else None


class Costs(_Model):
    """What the proof cost, counted inside the engine (not estimated)."""

    program_runs: int = 0  # every launch of the app: cold and warm runs, must-keep runs, the diagnosis' own
    diagnosis_runs: int = 0  # of those, the diagnosis' measurement (0 when a saved diagnosis was given)
    baseline_samples: int = 0  # baseline arm samples, the reused diagnosis sample included
    reused_diagnosis_sample: bool = False
    wall_s: float = 0.0


class HeldBack(_Model):
    """A proven fix --write leaves out for its applicability (review fixes need --unsafe-fixes)."""

    key: str
    applicability: Applicability | None = None
    reason: str = ""


class FixResult(_Model):
    schema_version: Literal[1] = FIX_SCHEMA_VERSION
    kind: Literal["warp-compile-fix"] = "warp-compile-fix"
    command: list[str] = Field(default_factory=list)
    cwd: str = ""
    source_root: str = ""
    write: bool = False  # --write was asked for
    summary: str = ""
    candidates: list[CandidateFix] = Field(default_factory=list)  # one per finding, in the diagnosis' order
    combination: CandidateFix | None = None  # the fixes that improved, together (when two or more did)
    # findings of the kept tree, diagnosed again from its own samples: what applies once the kept fixes are in
    next_round: list[CandidateFix] = Field(default_factory=list)
    not_offered: list[str] = Field(default_factory=list)  # mechanisms ruled out or gone, and why (nothing silent)
    written: list[str] = Field(default_factory=list)  # project files --write changed (empty: nothing written)
    written_diff: str = ""  # exactly what --write wrote
    applied: list[str] = Field(default_factory=list)  # candidate keys whose edits were written
    # the mechanisms the written edits carry out: each written candidate's, and those of the findings its plan carries
    realised: list[str] = Field(default_factory=list)
    held_back: list[HeldBack] = Field(default_factory=list)  # proven, but not --write's to write (applicability)
    costs: Costs = Field(default_factory=Costs)
    warnings: list[Warn] = Field(default_factory=list)
    rule: str = ""  # how each arm was stopped

    @property
    def exit_code(self) -> int:
        return 0
