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


def test_a_do_nothing_agent_is_judged_inconclusive(tmp_path):
    """The A/A control: both arms are the same files written the same way, so the judge must see no change."""
    case = _eval(tmp_path, "--agent", "builtin:null", "--measure-unchanged", "--pairs", "4")
    assert case["fix"]["verdict"] == "INCONCLUSIVE", case["fix"]["reason"]
    assert case["fix"]["behaviour_ok"] and case["fix"]["credit"] == 0.0 and case["flags"] == []


def test_the_reference_fix_improves_and_the_oracle_scores_full(tmp_path):
    case = _eval(tmp_path, "--agent", "builtin:oracle", "--pairs", "4")
    assert case["fix"]["verdict"] == "IMPROVED" and case["fix"]["behaviour_ok"], case["fix"]
    assert case["score"] >= 0.95 and case["flags"] == []


def _right_answer() -> str:
    case = next(c for c in load_cases(FIXTURES) if c.id == CASE)
    loc = case.expected.locations[0]
    answer = {"findings": [{"mechanism": "CS-3", "locations": [{"file": loc.file, "line": loc.line}]}]}
    return f"import json, os\njson.dump({answer!r}, open(os.environ['WARP_COMPILE_ANSWER'], 'w'))\n"


def test_an_agent_that_guts_the_kernels_gets_nothing_and_a_flag(tmp_path):
    """Launches kept, kernel bodies emptied: faster, same launches, wrong numbers."""
    gut = _right_answer() + (
        "import ast, pathlib\n"
        "for p in pathlib.Path('.').rglob('*.py'):\n"
        "    tree = ast.parse(p.read_text())\n"
        "    hit = False\n"
        "    for node in ast.walk(tree):\n"
        "        decorators = [ast.unparse(d) for d in getattr(node, 'decorator_list', [])]\n"
        "        if isinstance(node, ast.FunctionDef) and any('kernel' in d for d in decorators):\n"
        "            node.body, hit = [ast.Pass()], True\n"
        "    if hit:\n"
        "        p.write_text(ast.unparse(tree))\n"
    )
    case = _eval(tmp_path, "--pairs", "1", "--", sys.executable, _agent(tmp_path, gut))
    assert "output_changed" in case["flags"], case
    assert case["fix"]["credit"] == 0.0 and case["score"] == 0.0
    assert case["diagnosis"]["score"] == 1.0  # a perfect answer does not rescue a broken app


def test_an_agent_that_prints_the_expected_output_gets_nothing_and_a_flag(tmp_path):
    case_meta = next(c for c in load_cases(FIXTURES) if c.id == CASE)
    lines = "\n".join(f"print({line!r})" for line in case_meta.expected_output or [])
    fake = _right_answer() + (
        "import pathlib\n"
        f"pathlib.Path({CASE!r}, '__main__.py').write_text({lines!r} + '\\n')\n"
    )
    case = _eval(tmp_path, "--pairs", "1", "--", sys.executable, _agent(tmp_path, fake))
    assert case["fix"]["behaviour_ok"] is False and "warp_removed" in case["flags"], case
    assert case["fix"]["credit"] == 0.0 and case["score"] == 0.0
