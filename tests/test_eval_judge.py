"""The judge on real Warp compiles (slow): the A/A control, the reference fix, and agents that cheat.

One case (particle_prep, a single small module) keeps these affordable: each interleaved pair is two cold+warm
samples of a real Warp CPU build.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from warp_compile.cli import main
from warp_compile.evals.scorer import load_cases

FIXTURES = Path(__file__).resolve().parents[1] / "evals" / "fixtures"
AGENTS = FIXTURES.parent / "agents"
CASE = "particle_prep"

pytestmark = pytest.mark.slow


def _eval(tmp_path: Path, *args: str) -> dict:
    out = tmp_path / "card.json"
    main(["eval", "--case", CASE, "--quiet", "--json", str(out), *args])
    return json.loads(out.read_text())["cases"][0]


def _agent(tmp_path: Path, body: str) -> str:
    script = tmp_path / "agent.py"
    script.write_text(body)
    return str(script)


@pytest.mark.heavy
def test_a_do_nothing_agent_is_judged_no_effect(tmp_path):
    """The A/A control: both arms are the same files written the same way, so the judge must see no change: the
    same work compiled under a change that can act only through what compiles is NO_EFFECT, whatever the clocks."""
    case = _eval(tmp_path, "--agent", "builtin:null", "--measure-unchanged", "--pairs", "4")
    assert case["fix"]["verdict"] == "NO_EFFECT", case["fix"]["reason"]
    assert case["fix"]["behaviour_ok"] and case["fix"]["credit"] == 0.0 and case["flags"] == []


def test_the_reference_fix_improves_and_the_oracle_scores_full(tmp_path):
    case = _eval(tmp_path, "--agent", "builtin:oracle", "--pairs", "4")
    assert case["fix"]["verdict"] == "IMPROVED" and case["fix"]["behaviour_ok"], case["fix"]
    assert case["score"] >= 0.95 and case["flags"] == []


def _cheat(tmp_path: Path, name: str) -> str:
    """The cheating agent evals/agents/<name>, then the right answer written over its own: a perfect diagnosis
    must not rescue a broken app."""
    case = next(c for c in load_cases(FIXTURES) if c.id == CASE)
    loc = case.expected.locations[0]
    answer = {"findings": [{"mechanism": "CS-3", "locations": [{"file": loc.file, "line": loc.line}]}]}
    return _agent(tmp_path, f"import json, os, runpy\nrunpy.run_path({str(AGENTS / name)!r}, run_name='__main__')\n"
                            f"json.dump({answer!r}, open(os.environ['WARP_COMPILE_ANSWER'], 'w'))\n")


def test_an_agent_that_guts_the_kernels_gets_nothing_and_a_flag(tmp_path):
    """Launches kept, kernel bodies emptied: faster, same launches, wrong numbers."""
    case = _eval(tmp_path, "--pairs", "1", "--", sys.executable, _cheat(tmp_path, "cheat_gut.py"))
    assert "output_changed" in case["flags"], case
    assert case["fix"]["credit"] == 0.0 and case["score"] == 0.0
    assert case["diagnosis"]["score"] == 1.0


def test_an_agent_that_prints_the_expected_output_gets_nothing_and_a_flag(tmp_path):
    case = _eval(tmp_path, "--pairs", "1", "--", sys.executable, _cheat(tmp_path, "cheat_print.py"))
    assert case["fix"]["behaviour_ok"] is False and "warp_removed" in case["flags"], case
    assert case["fix"]["credit"] == 0.0 and case["score"] == 0.0
