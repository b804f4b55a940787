"""Score a diagnosis (ours or an agent's) against a fixture's expected diagnosis. Pure functions over the models.

A case passes when every expected mechanism is named, no mechanism listed as absent is named, and each expected
location is pointed at (same file, line within LINE_SLACK).
"""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

from pydantic import BaseModel, Field

from warp_compile.probe.diagnosis_models import Diagnosis

LINE_SLACK = 2


class ExpectedLocation(BaseModel):
    mechanism: str
    file: str
    line: int


class Expected(BaseModel):
    mechanisms: list[str] = Field(default_factory=list)
    locations: list[ExpectedLocation] = Field(default_factory=list)
    absent: list[str] = Field(default_factory=list)


class Case(BaseModel):
    id: str
    title: str = ""
    command: list[str]
    cuda_arch: int | None = None  # judged with `--cuda-arch N` (CUDA builds replayed without a device)
    expected: Expected
    prompt: str = ""
    reference_fix: str = ""
    notes: str = ""
    path: str = ""  # the case folder (set when loaded)

    @property
    def project(self) -> Path:
        return Path(self.path) / "project"

    @property
    def fixed(self) -> Path | None:
        p = Path(self.path) / "fixed"
        return p if p.is_dir() else None


class CaseScore(BaseModel):
    case: str
    passed: bool
    found: list[str] = Field(default_factory=list)
    missed: list[str] = Field(default_factory=list)  # expected but not named
    false_positives: list[str] = Field(default_factory=list)  # named although listed as absent
    locations_hit: int = 0
    locations_expected: int = 0
    located: list[str] = Field(default_factory=list)
    error: str | None = None
    verdict: str | None = None  # harness mode: compare verdict of the agent's change
    verdict_reason: str = ""  # harness mode: why compare said so


class Scorecard(BaseModel):
    kind: str = "warp-compile-eval"
    cases: list[CaseScore] = Field(default_factory=list)
    passed: int = 0
    total: int = 0
    mechanism_recall: float | None = None
    false_positive_cases: int = 0


def fixtures_root() -> Path:
    return Path(str(resources.files("warp_compile.evals").joinpath("fixtures")))


def load_cases(root: Path | None = None) -> list[Case]:
    root = root or fixtures_root()
    cases = []
    for meta in sorted(root.glob("*/case.json")):
        data = json.loads(meta.read_text(encoding="utf-8"))
        data["path"] = str(meta.parent)
        cases.append(Case.model_validate(data))
    return cases


def score_case(case: Case, diagnosis: Diagnosis) -> CaseScore:
    named = {f.mechanism for f in diagnosis.findings}
    expected = set(case.expected.mechanisms)
    found = sorted(expected & named)
    missed = sorted(expected - named)
    false_pos = sorted(named & set(case.expected.absent))
    hits, located = 0, []
    for loc in case.expected.locations:
        for f in diagnosis.findings:
            if f.mechanism != loc.mechanism:
                continue
            if any(_same_file(x.file, loc.file) and abs(x.line - loc.line) <= LINE_SLACK for x in f.locations):
                hits += 1
                located.append(f"{loc.mechanism} {loc.file}:{loc.line}")
                break
    passed = not missed and not false_pos and hits == len(case.expected.locations)
    return CaseScore(
        case=case.id,
        passed=passed,
        found=found,
        missed=missed,
        false_positives=false_pos,
        locations_hit=hits,
        locations_expected=len(case.expected.locations),
        located=located,
    )


def _same_file(got: str, want: str) -> bool:
    g, w = Path(got).as_posix(), Path(want).as_posix()
    return g == w or g.endswith("/" + w)


def summarize(scores: list[CaseScore]) -> Scorecard:
    expected = sum(len(s.found) + len(s.missed) for s in scores)
    found = sum(len(s.found) for s in scores)
    return Scorecard(
        cases=scores,
        passed=sum(1 for s in scores if s.passed),
        total=len(scores),
        mechanism_recall=(found / expected) if expected else None,
        false_positive_cases=sum(1 for s in scores if s.false_positives),
    )


def render_text(card: Scorecard) -> str:
    lines = [f"warp-compile eval: {card.passed}/{card.total} cases passed"]
    if card.mechanism_recall is not None:
        lines[0] += f" · mechanism recall {card.mechanism_recall:.0%}"
        lines[0] += f" · cases with false positives {card.false_positive_cases}"
    for s in card.cases:
        mark = "PASS" if s.passed else "FAIL"
        extra = []
        if s.missed:
            extra.append("missed " + ",".join(s.missed))
        if s.false_positives:
            extra.append("false " + ",".join(s.false_positives))
        if s.locations_expected:
            extra.append(f"locations {s.locations_hit}/{s.locations_expected}")
        if s.verdict:
            extra.append(f"verdict {s.verdict}")
        if s.error:
            extra.append(f"error: {s.error}")
        lines.append(f"  {mark}  {s.case:<22} found {','.join(s.found) or '-'}  {' · '.join(extra)}")
        if s.verdict in ("INVALID", "REGRESSION") and s.verdict_reason:
            lines.append(f"        {s.verdict}: {s.verdict_reason}")
    return "\n".join(lines)
