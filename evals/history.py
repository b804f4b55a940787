"""The history suite: cases from the public history of libraries built on Warp, judged against their maintainers.

A case (evals/history/<case>/case.json, the synthetic fixtures' schema plus `history`) pins the library release
before the maintainers' fix and the release with it. The original project and the agent's copy run on the old
release (a cached venv per release set, see history_env.py); the reference arm is the same project on the release
with the fix, measured in the same interleaved run. The user role is scored on what a user of the library can get:
the cost named as the library's, an upstream report at the maintainers' lines with their mechanism, and the
application's own saving as a fraction of the maintainers'.
"""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

from ..probe.errors import UsageError
from .history_env import cached_venv
from .models import Answer, AnswerFinding, Case, DiagnosisScore, FixScore, HistoryScore
from .scorer import score_diagnosis

SUITE = "history"


def history_root() -> Path:
    return Path(str(resources.files("warp_compile.evals").joinpath("history")))


def interpreters(case: Case, progress=None) -> tuple[str, str]:  # type: ignore[no-untyped-def]
    """(the old release's python, the fixed release's python), installed once into the cache; the second is the old
    release with the maintainers' change applied where the case gives it as a patch."""
    assert case.history is not None
    before = cached_venv(case.history.before, progress=progress)
    patch = None
    if case.history.reference_patch:
        folder = Path(case.path).resolve()
        patch = (folder / case.history.reference_patch).resolve()
        if folder not in patch.parents:
            raise UsageError(f"history: case {case.id}: reference_patch must be a file of the case folder")
    after = cached_venv(case.history.after, progress=progress, patch=patch)
    return str(before), str(after)


def _pinned(reqs: list[str], library: str) -> str:
    for r in reqs:
        name = r.split("==")[0].strip().lower().replace("_", "-")
        if name == library.lower().replace("_", "-"):
            return r
    return reqs[0] if reqs else ""


def _reference_name(h) -> str:  # type: ignore[no-untyped-def]
    """The reference as the card names it: the release with the fix, or the release before it plus the patch."""
    pinned = _pinned(h.after, h.library)
    return f"{pinned} + {h.reference_patch}" if h.reference_patch else pinned


def _owned(f: AnswerFinding, library: str) -> bool:
    """The finding says the code to change is the library's: its owner, its upstream report or its locations."""
    lib = library.lower().replace("_", "-")

    def same(name: str | None) -> bool:
        return bool(name) and str(name).lower().replace("_", "-") == lib

    if f.upstream is not None and (same(f.upstream.distribution) or f.upstream.places):
        return f.upstream.distribution is None or same(f.upstream.distribution)
    return f.owner == "dependency" and any(same(getattr(loc, "distribution", None)) for loc in f.locations)


def upstream_answer(answer: Answer, library: str) -> Answer:
    """The answer's reports for the library's maintainers, as an answer scored against their change: one finding per
    upstream report, at its places (files as the maintainers name them)."""
    findings = [
        AnswerFinding(mechanism=f.mechanism, locations=list(f.upstream.places if f.upstream else f.locations))
        for f in answer.findings if _owned(f, library)
    ]
    return Answer(findings=findings)


def raw_answer(path: Path) -> Answer | None:
    """The answer with its upstream reports (the plain Answer keeps them; read again here for the location owners)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    try:
        return Answer.model_validate(data)
    except ValueError:
        return None


def program_runs(fix_record: Path) -> int | None:
    """builtin:fix's own count of the program runs its proof took (fix.json `costs.program_runs`)."""
    try:
        data = json.loads(fix_record.read_text(encoding="utf-8"))
        return int(data["costs"]["program_runs"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def history_score(case: Case, answer: Answer | None, fix: FixScore | None, runs: int | None, agent_s: float,
                  judge_s: float) -> HistoryScore:
    assert case.history is not None
    h = case.history
    # the maintainer role has no upstream: the release's source is the project, its findings are its own
    maintainer = h.role == "maintainer"
    named = upstream_answer(answer, h.library) if answer is not None and not maintainer else Answer()
    up = DiagnosisScore() if maintainer else score_diagnosis(h.upstream, named)
    if answer is None and not maintainer:
        up.error = "no answer"
    score = HistoryScore(
        library=h.library, role=h.role, before=_pinned(h.before, h.library), after=_reference_name(h),
        owned_by_dependency=bool(named.findings), upstream=up, clock=h.clock, program_runs=runs,
        agent_minutes=round(agent_s / 60.0, 2), judge_minutes=round(judge_s / 60.0, 2),
    )
    if fix is not None:
        # an unchanged copy saves nothing, whatever noise its measurement against the original showed
        score.saving_pct = (fix.saving_pct if fix.saving_clock == h.clock else None) if fix.changed else 0.0
        score.reference_saving_pct = fix.reference_saving_pct if fix.reference_clock == h.clock else None
        score.reference_verdict = fix.reference_verdict
        score.clock_judged, score.reference_clock_judged = fix.clock_judged, fix.reference_clock_judged
        ref = score.reference_saving_pct
        if ref is not None and ref > 0 and score.saving_pct is not None:
            score.saving_fraction = round(score.saving_pct / ref, 3)
    return score


def release_version(case: Case, distribution: str) -> str:
    """The version of `distribution` the case pins before the fix ("" when it is not pinned with ==)."""
    assert case.history is not None
    spec = _pinned(case.history.before, distribution)
    name, _, version = spec.partition("==")
    same = name.strip().lower().replace("_", "-") == distribution.lower().replace("_", "-")
    return version.strip() if same else ""
