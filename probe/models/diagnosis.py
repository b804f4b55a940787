"""The diagnosis: findings per mechanism (CS-1..CS-13), why each extra build happened, and what was ruled out.

Read by the CLI (`diagnose --json`), the MCP server and the eval scorer: one schema for all three.
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import Field

from .base import Model as _Model
from .report import Rebuild, Warn

Severity = Literal["high", "medium", "low", "info"]
Confidence = Literal["high", "medium", "low"]
# how far a machine edit may be trusted (after rustc's Applicability and ruff's fix safety):
# automatic: safe to apply as is; review: applies cleanly, but a person must judge what `review` names (public API,
# numerics, a plugin contract); manual: no edit, the fix text says why
Applicability = Literal["automatic", "review", "manual"]


class Location(_Model):
    """The construct to change (file relative to the scanned project root when inside it)."""

    file: str
    line: int
    note: str = ""
    owner: Literal["project", "dependency"] | None = None  # None: not resolved (no interpreter to ask)
    distribution: str | None = None  # the installed distribution that holds the file, e.g. "warp-lang"


class Evidence(_Model):
    """One fact a finding rests on: a sentence plus the numbers and event ids behind it."""

    fact: str
    builds: list[int] = Field(default_factory=list)  # Build.seq of the reference cold run
    ms: float | None = None
    source: Literal["measurement", "scan", "both"] = "measurement"


class Edit(_Model):
    """One change to a file the project owns: lines start_line..end_line (1-based, inclusive) become `new`.

    An insertion has end_line == start_line - 1 and `old` "". `old` is the exact text replaced, so an edit that no
    longer matches its file is refused instead of applied in the wrong place. `create` makes a new file (a launcher).
    """

    file: str  # relative to the diagnosis' source_root, posix; never a path inside an installed distribution
    start_line: int
    end_line: int
    old: str = ""
    new: str = ""
    create: bool = False
    # a launch site that passes new arguments: the kernel launched -> the types it appends (as the hook names a
    # launch's argument types), which the behaviour check expects instead of calling the launches changed
    launch_args: dict[str, list[str]] = Field(default_factory=dict)
    # where those arguments sit in the launch's argument list when not last (before the kernel's outputs): kernel ->
    # the index of the first of them
    launch_args_at: dict[str, int] = Field(default_factory=dict)


class UpstreamReport(_Model):
    """Evidence for a library's maintainers, where the construct is theirs and the application has no lever."""

    distribution: str | None = None  # the installed distribution that owns the code, e.g. "warp-lang"
    places: list[Location] = Field(default_factory=list)  # their module and lines
    measured_ms: float | None = None  # what it cost in this measurement
    change: str = ""  # the change in their code that would remove the cost
    diff: str = ""  # that change as a unified diff against their own source (a/pkg/mod.py), when it is mechanical
    # the same change as edits on their files (paths as they name them, relative to `base_dir`): what `fix` applies
    # to a scratch copy of the library to measure the change, never to the installed files
    edits: list[Edit] = Field(default_factory=list)
    base_dir: str = ""  # where those paths resolve on the measuring machine (read only)
    estimated_ms: float | None = None  # what the change is expected to save, from this measurement
    band_ms: float | None = None  # the noise band of that estimate; None: it rests on one sample
    samples: int = 0
    text: str = ""  # the report, ready to paste into their issue tracker


class MeasuredSaving(_Model):
    """What `diagnose --verify` measured by running the finding's experiment (`warp-compile try`)."""

    settings: dict[str, bool | int | str | None]
    clock: str  # the finding's one clock (as `fix` reports it), e.g. "compile_cpu"; "cold_module" in older diagnoses
    saving_ms: float | None = None  # positive: the fix saves; paired: the pairs' mean, else the medians
    band_ms: float | None = None  # the clock's noise band in the comparison (the smallest change it counts)
    saving_low_ms: float | None = None  # the 95% interval of the saving (paired t; None: one sample a side)
    saving_high_ms: float | None = None
    saving_pct: float | None = None  # the saving as a share of the before arm on that clock: pair by pair when paired
    compile_elapsed_saving_ms: float | None = None  # what the user waits for, for reference
    verdict: str = ""  # the comparison's verdict
    pairs: int = 0
    decided: bool | None = None  # the interval decided before the limit (False: stopped at the limit; None: fixed N)
    stopped_because: str = ""  # which: the verdict settled after N pairs, or the limit of M pairs was reached
    agreement: str = ""  # how the estimate compares with the measurement, and why they differ when they do
    # how much of the machine other work used while it was measured (0..1, probe/contention.py): from half of it the
    # agreement says the ms read high
    other_share: float | None = None


class Alternative(_Model):
    """Another way to carry out a finding's fix (a kernel hoisted instead of its factory memoized): `fix` measures it
    beside the finding's own edits and keeps the one that saves most, proven (generate and test)."""

    label: str  # what differs from the finding's own edits, in a clause
    edits: list[Edit] = Field(default_factory=list)
    applicability: Applicability | None = None
    review: str = ""


class Finding(_Model):
    mechanism: str  # "CS-n", or "WC-n" for this project's own mechanisms (knowledge/WC-n.md)
    title: str
    severity: Severity
    confidence: Confidence
    modules: list[str] = Field(default_factory=list)
    evidence: list[Evidence] = Field(default_factory=list)
    locations: list[Location] = Field(default_factory=list)
    fix: str
    estimated_saving_ms: float | None = None
    saving_basis: str = ""  # how the estimate was derived (e.g. "sum of the 2 redundant builds, 1 sample")
    # the clock the estimate is on ("compile_cpu": CPU time, the clock fix and --verify measure it on; "": wall time)
    saving_clock: str = ""
    # the estimate as a share of this run's median on that clock: load stretches a saving and its compile alike, so
    # the share is what compares across runs, machines and the measurement (MeasuredSaving.saving_pct)
    estimated_saving_pct: float | None = None
    # where the figure comes from: "rebuild" (the modules rebuilt at exit with the setting changed, measured),
    # "rebuild+model" (partly), "builds" (the run's own builds, e.g. the superseded ones), "model", "" (not said)
    saving_source: str = ""
    caveats: list[str] = Field(default_factory=list)
    excerpt: str = ""  # from knowledge/CS-n.md
    samples: int = 0  # how many measured samples the timing claims rest on
    owner: Literal["project", "dependency", "mixed"] | None = None  # who owns the constructs at its locations
    experiment: dict[str, bool | int | str | None] | None = None  # `warp-compile try` settings that test the fix
    measured: MeasuredSaving | None = None  # filled by `diagnose --verify`
    applicability: Applicability | None = None  # of `edits` (None: the rule has not said)
    edits: list[Edit] = Field(default_factory=list)  # the fix as line edits on project files (see probe/fix/edits.py)
    review: str = ""  # applicability review: what a person must judge; manual: why there is no edit
    # the mechanism whose plan carries this finding out (its edits are that plan's, measured and written once)
    plan_with: str | None = None
    upstream: UpstreamReport | None = None  # the construct is a dependency's: the report for its maintainers
    # argv variants (appended to the measured command) whose behaviour the fix must keep, e.g. ["--rebuild"]
    must_keep: list[list[str]] = Field(default_factory=list)
    # its estimate fell under the line for a finding: it appears only as a ruled-out's candidate, for `fix` to measure
    below_line: bool = False
    # other realisations of the same plan, measured beside `edits` by `fix` (at most MAX_ALTERNATIVES)
    alternatives: list[Alternative] = Field(default_factory=list)


class Withdrawn(_Model):
    """A finding `diagnose --verify` took back: its fix, applied to a copy, regressed, changed the workload, broke
    the app's behaviour or did not apply. Kept with the evidence (a defect of its rule, for the bench to record)."""

    finding: Finding
    reason: str
    verdict: str | None = None


class Verification(_Model):
    """What `diagnose --verify` cost, counted by the fix engine (every launch of the app)."""

    program_runs: int = 0
    baseline_samples: int = 0
    reused_diagnosis_sample: bool = False
    wall_s: float = 0.0


class Cause(_Model):
    """One reason a module's identity changed between two consecutive loads."""

    kind: Literal[
        "kernel_added",
        "kernel_removed",
        "kernel_changed",
        "overload_added",
        "overload_removed",
        "option_changed",
        "block_dim_variant",
        "function_changed",
        "same_hash_reload",
        "different_device",
        "unique_module_member",
        "unexplained",
    ]
    detail: str  # one readable line, e.g. "option fast_math: False -> True"
    kernel: str | None = None
    option: str | None = None
    before: str | None = None
    after: str | None = None
    file: str | None = None
    line: int | None = None


class HashChange(_Model):
    """A module loaded again under a new identity (or the same one, rebuilt): the diff from its previous load."""

    module: str
    device: str
    from_hash: str
    to_hash: str
    from_seq: int
    to_seq: int
    status: str  # status of the later load (compiled / cached / error)
    cost_ms: float  # ms of the later load
    causes: list[Cause] = Field(default_factory=list)
    trigger: str = ""  # "file:line (api)" of the later load


class RuledOut(_Model):
    mechanism: str
    signal: str  # what was checked and not seen
    # the finding it would have been, edits included, when only its estimate kept it under the line for a finding:
    # `fix` measures that edit too (an estimate below the line is still a saving the proof can decide)
    candidate: Finding | None = None


class NotReached(_Model):
    mechanism: str
    reason: str  # e.g. "CUDA only; this run compiled for the CPU"


class Totals(_Model):
    builds: int = 0
    compiled: int = 0
    identities: int = 0
    modules: int = 0
    cold_module_ms: float | None = None
    pch_ms: float | None = None  # summed over the header builds, which may overlap on several threads
    pch_builds: int = 0
    pch_threads: int = 0
    compile_elapsed_ms: float | None = None
    warm_module_ms: float | None = None


class Diagnosis(_Model):
    schema_version: Literal[1] = 1
    kind: Literal["warp-compile-diagnosis"] = "warp-compile-diagnosis"
    command: list[str] = Field(default_factory=list)
    cwd: str = ""
    source_root: str | None = None
    warp_version: str | None = None
    samples: int = 0  # successful measured samples behind the timing figures
    compiled_nothing: bool = False  # no Warp module was built or loaded
    summary: str = ""
    findings: list[Finding] = Field(default_factory=list)  # ranked by estimated saving, then severity
    withdrawn: list[Withdrawn] = Field(default_factory=list)  # taken back by `diagnose --verify`, with the reason
    verification: Verification | None = None  # filled by `diagnose --verify`
    rebuild: Rebuild | None = None  # the settings rebuilds that priced CS-10 / CS-12: their cost, what was skipped
    hash_changes: list[HashChange] = Field(default_factory=list)
    ruled_out: list[RuledOut] = Field(default_factory=list)
    not_reached: list[NotReached] = Field(default_factory=list)
    totals: Totals = Field(default_factory=Totals)
    warnings: list[Warn] = Field(default_factory=list)


class RuleResult(_Model):
    """What one rule returns: its findings, or why it did not fire."""

    findings: list[Finding] = Field(default_factory=list)
    ruled_out: list[RuledOut] = Field(default_factory=list)
    not_reached: list[NotReached] = Field(default_factory=list)


def normalize_mechanism(raw: str) -> str:
    """`cs-3`, `CS3`, `3`, `CS 3` -> `CS-3`; `wc1` -> `WC-1`; anything else is kept (upper-cased), matches nothing."""
    m = re.fullmatch(r"\s*(cs|wc)?[\s_-]*0*(\d{1,2})\s*", raw, flags=re.IGNORECASE)
    return f"{(m.group(1) or 'CS').upper()}-{int(m.group(2))}" if m else raw.strip().upper()
