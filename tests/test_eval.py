"""The eval scorer and the agent harness."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from warp_compile.cli import main
from warp_compile.evals.scorer import load_cases, score_case
from warp_compile.probe.diagnosis_models import Diagnosis, Finding, Location

FIXTURES = Path(__file__).resolve().parents[1] / "evals" / "fixtures"


def _finding(mech: str, file: str, line: int) -> Finding:
    return Finding(mechanism=mech, title="t", severity="low", confidence="low", fix="f",
                   locations=[Location(file=file, line=line)])


def test_every_case_loads_and_scores_its_own_expectation_as_a_pass():
    cases = load_cases(FIXTURES)
    assert len(cases) >= 15
    for case in cases:
        d = Diagnosis(findings=[_finding(loc.mechanism, loc.file, loc.line) for loc in case.expected.locations])
        for m in set(case.expected.mechanisms) - {loc.mechanism for loc in case.expected.locations}:
            d.findings.append(_finding(m, "x.py", 1))
        assert score_case(case, d).passed, case.id


def test_missing_mechanism_false_positive_and_wrong_line_fail():
    case = next(c for c in load_cases(FIXTURES) if c.id == "particle_prep")
    loc = case.expected.locations[0]
    assert not score_case(case, Diagnosis()).passed
    wrong = Diagnosis(findings=[_finding("CS-3", loc.file, loc.line + 10)])
    assert score_case(case, wrong).locations_hit == 0
    extra = Diagnosis(findings=[_finding("CS-3", loc.file, loc.line), _finding("CS-1", "a.py", 1)])
    s = score_case(case, extra)
    assert s.false_positives == ["CS-1"] and not s.passed


def test_unknown_case_is_a_one_line_error(capsys):
    assert main(["eval", "--case", "nope"]) == 2
    assert capsys.readouterr().err.startswith("warp-compile: error: unknown case nope")


@pytest.mark.slow
def test_agent_harness_measures_the_agents_change_and_scores_its_diagnosis(tmp_path, capsys):
    """A stand-in agent applies the reference fix and leaves a diagnosis: the harness must pass it."""
    case = next(c for c in load_cases(FIXTURES) if c.id == "particle_prep")
    loc = case.expected.locations[0]
    diagnosis = Diagnosis(findings=[_finding("CS-3", loc.file, loc.line)]).model_dump_json()
    agent = tmp_path / "agent.py"
    agent.write_text(
        "import shutil, sys\n"
        f"shutil.copytree({str(Path(case.path) / 'fixed')!r}, '.', dirs_exist_ok=True)\n"
        f"open('warp-compile-diagnosis.json', 'w').write({diagnosis!r})\n"
    )
    out = tmp_path / "card.json"
    code = main(["eval", "--case", "particle_prep", "--quiet", "--json", str(out), "--", sys.executable, str(agent)])
    card = json.loads(out.read_text())
    result = card["cases"][0]
    assert code == 0, (result["verdict"], result["verdict_reason"], result.get("error"))
    assert result["verdict"] == "IMPROVED" and result["passed"], result["verdict_reason"]
