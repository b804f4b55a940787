"""The eval schema: a case as `case.json` states it, the answer an agent delivers, and the graded scorecard.

One module of pydantic models so the CLI's `--json`, `eval --contract` and `eval merge` read and write the same
shapes.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class Site(BaseModel):
    file: str
    line: int


class ExpectedLocation(BaseModel):
    """A construct the diagnosis must point at; `alternatives` are other sites where the same fix is as valid."""

    mechanism: str
    file: str
    line: int
    alternatives: list[Site] = Field(default_factory=list)

    def sites(self) -> list[Site]:
        return [Site(file=self.file, line=self.line), *self.alternatives]


class Expected(BaseModel):
    mechanisms: list[str] = Field(default_factory=list)
    locations: list[ExpectedLocation] = Field(default_factory=list)
    absent: list[str] = Field(default_factory=list)
    # mechanisms whose own text applies as a judgement call: naming them neither earns nor costs anything
    optional: list[str] = Field(default_factory=list)
    not_reached: list[str] = Field(default_factory=list)
    scan_locations: list[ExpectedLocation] = Field(default_factory=list)
    severity: dict[str, str] = Field(default_factory=dict)


class VersionOverride(BaseModel):
    mechanisms: list[str] = Field(default_factory=list)
    locations: list[ExpectedLocation] = Field(default_factory=list)
    why: str = ""


class MustKeep(BaseModel):
    """Another invocation whose output must survive the fix (a flag, a plugin path, a gradient path)."""

    command: list[str]
    expected_output: list[str]


class Reference(BaseModel):
    """What the reference fix did when measured against the project (recorded by evals/record_reference.py)."""

    verdict: str
    saving_pct: float | None = None  # percent of the original on `clock` (positive = faster)
    clock: str | None = None  # the clock the verdict rested on (compile_elapsed, warm_repeat, cold_module)
    runs: int = 1
    measured: str = ""  # warp version, pairs, date


class MaintainerReference(BaseModel):
    """The maintainers' change for the maintainer role: the fixed release unpacked the same way as the project, or a
    unified diff (-p1, relative to the project root) written here from the merged change."""

    kind: Literal["release", "patch"]
    unpack: str = ""  # kind "release": the pip spec of the release with the fix (e.g. "mujoco-warp==3.8.0.1")
    file: str = ""  # kind "patch": the diff, a file in the case folder
    source: str = ""  # kind "patch": where the change is public (repository, pull request, commit)


class Maintainer(BaseModel):
    """The maintainer role of a history case (docs/evals.md): the release's own source as the project. The wheel of
    `unpack` is downloaded (pip download --no-deps, cached) and unpacked; its package folders and `driver` (a file of
    the case folder, copied beside them) are the project, run with `command` on a venv of `deps` (the release's own
    dependencies, pinned; the library itself NOT installed: the unpacked tree is on sys.path)."""

    unpack: str
    deps: list[str] = Field(default_factory=list)
    driver: str
    command: list[str]
    clock: str = "steady"
    expected: Expected = Field(default_factory=Expected)  # paths relative to the project root (the unpacked tree)
    reference: MaintainerReference
    expected_output: list[str] | None = None  # None: the user role's (same driver, same release)
    prompt: str = ""  # the request as a maintainer hears it ("": the user role's)


class History(BaseModel):
    """A case from a library's public history: the release before the maintainers' fix, the release with it, and
    what their change did, so the tool's findings and saving on the old release are judged against theirs."""

    library: str  # the distribution the fix belongs to, as pip names it (e.g. "warp-lang")
    before: list[str]  # pip requirements of the release before the fix, its dependencies pinned too
    after: list[str]  # the same with the release that holds the fix: the reference, measured in the same run
    # no release holds the fix: `after` is the release before it and this diff (a file of the case folder, -p1,
    # paths relative to site-packages, written from the maintainers' merged change) is applied to that venv's copy
    reference_patch: str = ""
    source: str  # where the maintainers' change is public: repository, issue or pull request, commit
    # the maintainers' change as the upstream report must name it: its mechanism id(s) (a CS-n, or another id such as
    # the per-call re-creation one) and its lines in the release before the fix (files as its maintainers name them)
    upstream: Expected = Field(default_factory=Expected)
    clock: str = "compile_elapsed"  # the clock the case is about (a name of the comparison's clocks)
    role: Literal["user", "maintainer"] = "user"
    what_it_shows: str = ""  # before -> after, as measured when the case was made (prose, not a threshold)
    maintainer: Maintainer | None = None  # the maintainer role (newton, mujoco-warp): the release's source as project


class Case(BaseModel):
    model_config = ConfigDict(extra="allow")

    id: str
    title: str = ""
    command: list[str]
    cuda_arch: int | None = None  # judged with `--cuda-arch N` (CUDA builds replayed through NVRTC, no device)
    expected: Expected
    prompt: str = ""
    reference_fix: str = ""
    notes: str = ""
    expected_output: list[str] | None = None  # the original's stdout lines, Warp's own log lines removed
    launches: int | None = None  # kernel launches of the original's cold run (0: the original uses no Warp)
    must_keep: list[MustKeep] = Field(default_factory=list)
    version_overrides: dict[str, VersionOverride] = Field(default_factory=dict)
    reference: Reference | None = None
    history: History | None = None  # set for the history suite (evals/history): releases instead of fixed/
    path: str = ""  # the case folder (set when loaded)

    @property
    def project(self) -> Path:
        return Path(self.path) / "project"

    @property
    def fixed(self) -> Path | None:
        p = Path(self.path) / "fixed"
        return p if p.is_dir() else None

    @property
    def kind(self) -> str:
        """"fix" when the reference changes something, "negative" when the honest answer is nothing to fix."""
        return "fix" if self.expected.mechanisms else "negative"

    def kind_for(self, warp_version: str | None) -> str:
        """The kind on this warp-lang version (an override can leave nothing to fix, e.g. no CPU header in 1.10)."""
        return "fix" if self.expected_for(warp_version).mechanisms else "negative"

    def expected_for(self, warp_version: str | None) -> Expected:
        """The expectation with the longest `version_overrides` prefix matching `warp_version` applied."""
        if not warp_version:
            return self.expected
        best = None
        for prefix, override in self.version_overrides.items():
            if re.match(re.escape(prefix) + r"(\.|$)", warp_version) and (best is None or len(prefix) > len(best[0])):
                best = (prefix, override)
        if best is None:
            return self.expected
        over = best[1]
        dropped = set(self.expected.mechanisms) - set(over.mechanisms)
        return self.expected.model_copy(
            update={
                "mechanisms": list(over.mechanisms),
                "locations": list(over.locations),
                # a mechanism the override drops is not a defect on that version, but naming it is no crime either
                "optional": sorted(set(self.expected.optional) | dropped),
            }
        )


# --- the agent's answer (the contract) -------------------------------------------------------------------------


class AnswerLocation(BaseModel):
    model_config = ConfigDict(extra="ignore")
    file: str  # relative to the project root (the agent's working directory)
    line: int
    note: str = ""


class AnswerUpstream(BaseModel):
    """A report for a library's maintainers (the shape of `diagnose --json`'s `upstream`)."""

    model_config = ConfigDict(extra="ignore")
    distribution: str | None = None
    places: list[AnswerLocation] = Field(default_factory=list, description="their files and lines to change")
    change: str = ""


class AnswerFinding(BaseModel):
    model_config = ConfigDict(extra="ignore")
    mechanism: str = Field(description='"CS-3" (also accepted: "cs-3", "CS3", "3")')
    locations: list[AnswerLocation] = Field(default_factory=list, description="the lines to change")
    title: str = ""
    fix: str = ""
    owner: str | None = Field(default=None, description='"dependency" when the code to change is a library\'s')
    upstream: AnswerUpstream | None = Field(default=None, description="for the library's maintainers")


class Answer(BaseModel):
    """What the agent writes to $WARP_COMPILE_ANSWER. `warp-compile diagnose --json` output is also accepted."""

    model_config = ConfigDict(extra="ignore")
    findings: list[AnswerFinding] = Field(
        default_factory=list, description="one per mechanism found; empty when nothing is wrong"
    )
    summary: str = ""


# --- the scorecard ----------------------------------------------------------------------------------------------


class DiagnosisScore(BaseModel):
    named: list[str] = Field(default_factory=list)  # normalised mechanism ids (optional ones left out)
    expected: list[str] = Field(default_factory=list)
    missed: list[str] = Field(default_factory=list)
    false_positives: list[str] = Field(default_factory=list)
    precision: float = 0.0
    recall: float = 0.0
    location_precision: float = 0.0  # named locations that are accepted sites
    location_recall: float = 0.0  # expected locations pointed at
    locations_named: int = 0
    score: float = 0.0
    error: str | None = None


class FixScore(BaseModel):
    verdict: str | None = None  # the interleaved compare of the original and the agent's copy; None: not measured
    raw_verdict: str | None = None  # compare's own verdict, before a median-only (tentative) one is set aside
    reason: str = ""
    changed: bool = False  # did the agent's copy differ from the project?
    behaviour_ok: bool = True
    behaviour: str = ""  # what differed
    saving_pct: float | None = None  # saved on `saving_clock` (the clock the verdict rests on), percent
    saving_clock: str | None = None
    reference_saving_pct: float | None = None
    reference_clock: str | None = None
    # "same run": the reference fixed/ tree was a third arm of this interleaved run; "recorded": case.json's figure
    reference_source: str | None = None
    reference_verdict: str | None = None
    credit: float | None = 0.0  # None: the judge cannot tell this fix from noise, so it is not scored
    pairs: int = 0
    # a history case: how its own clock was judged (improved, within band, regressed, ...) for the agent's copy and
    # for the reference release; the comparison's verdict rests on its headline, which may be another clock
    clock_judged: str | None = None
    reference_clock_judged: str | None = None


class HistoryScore(BaseModel):
    """The user role of a history case: did the answer say the cost is the library's, report it upstream at the
    maintainers' lines, and how much of the maintainers' saving does the application's own change reach."""

    library: str = ""
    role: Literal["user", "maintainer"] = "user"  # maintainer: the release's source was the project, no upstream
    before: str = ""  # the library release measured (the original and the agent's copy run on it)
    after: str = ""  # the release with the maintainers' fix (the reference arm)
    owned_by_dependency: bool = False  # a finding names the library as the owner of the cost
    upstream: DiagnosisScore = Field(default_factory=DiagnosisScore)  # its report against the maintainers' change
    clock: str = ""
    clock_judged: str | None = None  # the agent's copy against the original on `clock`
    reference_clock_judged: str | None = None  # the release with the fix against the original on `clock`
    saving_pct: float | None = None  # the agent's copy on the old release, on `clock`
    reference_saving_pct: float | None = None  # the release with the fix, same project, same run, same clock
    reference_verdict: str | None = None
    saving_fraction: float | None = None  # saving_pct / reference_saving_pct (None: the reference did not save)
    program_runs: int | None = None  # the agent's own runs of the program (builtin:fix counts them)
    agent_minutes: float = 0.0
    judge_minutes: float = 0.0


class AgentRun(BaseModel):
    wall_s: float = 0.0
    exit_status: int | None = None
    timed_out: bool = False
    transcript: str = ""  # folder under --out with stdout.txt / stderr.txt, when kept


class CaseResult(BaseModel):
    id: str
    kind: str = "fix"
    trial: int = 0
    score: float = 0.0
    diagnosis: DiagnosisScore = Field(default_factory=DiagnosisScore)
    fix: FixScore | None = None
    flags: list[str] = Field(default_factory=list)
    agent: AgentRun = Field(default_factory=AgentRun)
    warp_version: str = ""
    history: HistoryScore | None = None


class CaseSummary(BaseModel):
    id: str
    kind: str
    score: float  # mean over trials
    spread: float = 0.0  # population standard deviation over trials
    diagnosis: DiagnosisScore = Field(default_factory=DiagnosisScore)  # of the first trial
    fix: FixScore | None = None  # of the first trial
    flags: list[str] = Field(default_factory=list)  # union over trials
    history: HistoryScore | None = None  # of the first trial
    trials: list[CaseResult] = Field(default_factory=list)


class Scorecard(BaseModel):
    kind: Literal["warp-compile-eval"] = "warp-compile-eval"
    schema_version: Literal[2] = 2
    agent: str
    score: float = 0.0  # mean of the case scores
    spread: float = 0.0  # standard deviation of the per-trial suite scores
    trials: int = 1
    trial_scores: list[float] = Field(default_factory=list)
    cases: list[CaseSummary] = Field(default_factory=list)
    shard: str = ""  # "i/n" when this card covers one shard
    warp_version: str = ""
    suite: str = ""  # "history" for the history suite; "" for the bundled fixtures or a --cases folder
