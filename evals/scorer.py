"""Grade an answer and a fix against a case. Pure functions over the models in evals/models.py.

Diagnosis: F1 of mechanism precision and recall (ids normalised: `cs-3`, `CS3`, `3` all mean CS-3) averaged with
F1 of location precision (each named line must be an accepted site, within LINE_SLACK) and recall (each expected
site pointed at). Fix: credit from the measured verdict, the saving relative to the reference fix, and whether the
app still printed what it printed and launched what it launched. A case scores the mean of the two, or the
diagnosis alone where the judge cannot tell the reference fix from noise, or 0 when a DISQUALIFYING flag is set.
"""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

from ..probe.models.diagnosis import normalize_mechanism
from .models import Answer, Case, CaseResult, DiagnosisScore, Expected, FixScore, Site

LINE_SLACK = 2
DIAGNOSIS_WEIGHT = 0.5
# flags after which nothing in the case counts: the baseline can no longer be trusted (fixtures_modified), or the
# change broke the app (a user would revert it, diagnosis and all)
DISQUALIFYING = ("fixtures_modified", "output_changed", "warp_removed", "launches_removed", "run_failed",
                 "must_keep_broken", "entry_bypassed")


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


def _same_file(got: str, want: str) -> bool:
    g, w = Path(got).as_posix().lstrip("./"), Path(want).as_posix()
    return g == w or g.endswith("/" + w)


def _at(site: Site, file: str, line: int) -> bool:
    return _same_file(file, site.file) and abs(line - site.line) <= LINE_SLACK


def _f1(p: float, r: float) -> float:
    return 2 * p * r / (p + r) if p + r > 0 else 0.0


def score_diagnosis(expected: Expected, answer: Answer) -> DiagnosisScore:
    optional = set(expected.optional)
    want = set(expected.mechanisms)
    by_mech: dict[str, set[tuple[str, int]]] = {}
    for f in answer.findings:
        mech = normalize_mechanism(f.mechanism)
        if mech in optional:
            continue
        by_mech.setdefault(mech, set()).update((loc.file, loc.line) for loc in f.locations)
    named = set(by_mech)
    hit = named & want
    precision = len(hit) / len(named) if named else (1.0 if not want else 0.0)
    recall = len(hit) / len(want) if want else 1.0

    accepted: dict[str, list[Site]] = {}
    for loc in [*expected.locations, *expected.scan_locations]:
        accepted.setdefault(loc.mechanism, []).extend(loc.sites())
    # every named line must be an accepted site of its mechanism (a wrongly named mechanism has none)
    named_locs = [(m, f, ln) for m in sorted(named) for f, ln in sorted(by_mech[m])]
    good = sum(1 for m, f, ln in named_locs if any(_at(s, f, ln) for s in accepted.get(m, [])))
    if named_locs:
        loc_precision = good / len(named_locs)
    else:
        loc_precision = 0.0 if expected.locations or named - want else 1.0
    pointed = sum(
        1 for loc in expected.locations
        if any(_at(s, f, ln) for s in loc.sites() for f, ln in by_mech.get(loc.mechanism, ()))
    )
    loc_recall = pointed / len(expected.locations) if expected.locations else 1.0
    score = (_f1(precision, recall) + _f1(loc_precision, loc_recall)) / 2
    return DiagnosisScore(
        named=sorted(named),
        expected=sorted(want),
        missed=sorted(want - named),
        false_positives=sorted(named - want),
        precision=round(precision, 4),
        recall=round(recall, 4),
        location_precision=round(loc_precision, 4),
        location_recall=round(loc_recall, 4),
        locations_named=len(named_locs),
        score=round(score, 4),
    )


def reference_reliable(case: Case) -> bool | None:
    """True when the reference fix was measured IMPROVED, False when it was not, None when never measured."""
    if case.reference is None:
        return None
    return case.reference.verdict == "IMPROVED"


def fix_credit(case: Case, fix: FixScore, warp_version: str = "") -> float | None:
    """0..1, or None when the change cannot be judged by measurement here (the reference itself is noise-level)."""
    if not fix.behaviour_ok:
        return 0.0
    negative = case.kind_for(warp_version) == "negative"
    if not fix.changed:
        if negative:
            return 1.0
        # where the reference fix itself does not measure faster here (a GPU-only preload on a CPU machine), leaving
        # the project unchanged is as unjudgeable as applying it: the diagnosis alone scores the case, as it does
        # for an agent that applies the reference
        return None if reference_reliable(case) is False else 0.0
    if case.history is not None:
        return _history_credit(fix)
    verdict = fix.verdict
    if verdict == "REGRESSION" and case.reference is not None and case.reference.verdict == "REGRESSION":
        # the reference fix itself measures slower here (a correctness fix whose timing depends on idle cores):
        # a change that does the same cannot be judged by this clock, so the diagnosis alone scores the case
        return None
    if verdict in ("INVALID", "REGRESSION", None):
        return 0.0
    if verdict == "UNVERIFIED":
        # no kernel built or launched in either arm: only right where the original itself runs no Warp
        return 1.0 if negative and case.launches == 0 else 0.0
    if negative:
        return 1.0
    if verdict == "IMPROVED":
        ref = fix.reference_saving_pct
        same_clock = fix.reference_clock in (None, fix.saving_clock)
        if ref and ref > 0 and fix.saving_pct is not None and same_clock:
            return round(max(0.0, min(1.0, fix.saving_pct / ref)), 4)
        return 1.0
    # INCONCLUSIVE: no credit where the reference reliably improves; unjudgeable where it does not
    return None if reference_reliable(case) is False else 0.0


def _history_credit(fix: FixScore) -> float | None:
    """A history case's change, judged on the case's own clock against the release with the maintainers' fix:
    the saving as a share of theirs (capped at 1) where it improved beyond the clock's band; 0 where it did not
    while theirs did; not judged where neither did (the clock cannot tell the releases apart here)."""
    if fix.verdict == "INVALID":
        return 0.0
    ref_moved = fix.reference_clock_judged == "improved"
    if fix.clock_judged != "improved":
        return 0.0 if ref_moved or fix.reference_clock_judged is None else None
    ref = fix.reference_saving_pct
    if ref_moved and ref and ref > 0 and fix.saving_pct is not None:
        return round(max(0.0, min(1.0, fix.saving_pct / ref)), 4)
    return 1.0


def case_score(result: CaseResult) -> float:
    """0.5 x diagnosis + 0.5 x fix credit. In a history case's user role the diagnosis is the mean of what the
    application can change (its own lines) and the upstream report (the maintainers' mechanism and lines, in the
    library); in its maintainer role the diagnosis is against the maintainers' lines in their own source."""
    if any(f in DISQUALIFYING for f in result.flags):
        return 0.0
    d = result.diagnosis.score
    if result.history is not None and result.history.role == "user":  # the maintainer role has no upstream report
        d = (d + result.history.upstream.score) / 2
    if result.fix is None or result.fix.credit is None:
        return round(d, 4)
    return round(DIAGNOSIS_WEIGHT * d + (1 - DIAGNOSIS_WEIGHT) * result.fix.credit, 4)
