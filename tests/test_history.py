"""The history suite: its case format, the user-role scoring, the release venvs, and the first case reproducing.

The fast tests score hand-made answers (the upstream report at the maintainers' lines or not, owned by the library or
not). The slow ones install the releases from the registry once (cached outside the repo) and run warp-995's driver
cold on the release before the fix and on the one with it: CI keeps the suite's cheapest case alive this way. The
whole eval of a case (an agent, interleaved arms) is in the heavy tier.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from warp_compile.evals.history import history_root, release_version, upstream_answer
from warp_compile.evals.history_env import CACHE_ENV, cached_venv
from warp_compile.evals.models import Answer, CaseResult, DiagnosisScore, FixScore
from warp_compile.evals.scorer import case_score, load_cases, score_diagnosis
from warp_compile.probe.errors import UsageError

CASE = "warp-995-unique-reuse"


def _case():
    return next(c for c in load_cases(history_root()) if c.id == CASE)


def _cli(*args: str, env: dict[str, str] | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "warp_compile", *args], capture_output=True, text=True,
                          env=env, cwd=cwd, timeout=600)


def test_the_case_pins_both_releases_and_its_expectations():
    case = _case()
    h = case.history
    assert h is not None and h.library == "warp-lang" and h.role == "user"
    assert release_version(case, "warp-lang") == "1.10.0"
    assert "warp-lang==1.10.1" in h.after
    assert h.upstream.mechanisms and all(loc.file.startswith("warp/") for loc in h.upstream.locations)
    assert (Path(case.path) / "project" / "blend.py").is_file() and case.expected_output and case.launches


def test_list_and_bad_combination():
    listed = _cli("eval", "--suite", "history", "--list")
    assert listed.returncode == 0 and CASE in listed.stdout
    both = _cli("eval", "--suite", "history", "--cases", str(history_root()), "--list")
    assert both.returncode == 2 and len(both.stderr.strip().splitlines()) == 1 and "Traceback" not in both.stderr


def _diagnose_json(upstream: dict | None, owner: str = "project", dist: str | None = None) -> Answer:
    """A finding shaped as `diagnose --json` writes it (extra keys ignored)."""
    finding = {"mechanism": "CS-9", "title": "t", "severity": "high", "confidence": "high", "fix": "f",
               "owner": owner, "locations": [{"file": "blend.py", "line": 9, "owner": owner, "distribution": dist}]}
    if upstream is not None:
        finding["upstream"] = upstream
    return Answer.model_validate({"findings": [finding]})


def test_upstream_report_at_the_maintainers_lines_scores_and_elsewhere_does_not():
    h = _case().history
    assert h is not None
    at = _diagnose_json({"distribution": "warp-lang", "places": [{"file": "warp/_src/context.py", "line": 1140}]},
                        owner="dependency", dist="warp-lang")
    got = score_diagnosis(h.upstream, upstream_answer(at, "warp-lang"))
    assert got.score == 1.0
    far = _diagnose_json({"distribution": "warp-lang", "places": [{"file": "warp/_src/context.py", "line": 1600}]},
                         owner="dependency", dist="warp-lang")
    got = score_diagnosis(h.upstream, upstream_answer(far, "warp-lang"))
    assert got.recall == 1.0 and got.location_recall == 0.0 and got.score < 1.0
    other_lib = _diagnose_json({"distribution": "numpy", "places": [{"file": "warp/_src/context.py", "line": 1141}]},
                               owner="dependency", dist="numpy")
    assert upstream_answer(other_lib, "warp-lang").findings == []
    project_only = _diagnose_json(None)
    assert upstream_answer(project_only, "warp-lang").findings == []
    assert score_diagnosis(h.upstream, upstream_answer(project_only, "warp-lang")).score == 0.0


def test_saving_fraction_and_score_of_the_user_role():
    from warp_compile.evals.history import history_score

    case = _case()
    fix = FixScore(changed=True, verdict="IMPROVED", saving_pct=40.0, saving_clock="warm_cpu",
                   reference_saving_pct=80.0, reference_clock="warm_cpu", reference_verdict="IMPROVED", credit=0.5)
    h = history_score(case, _diagnose_json(None), fix, runs=12, agent_s=90, judge_s=30)
    assert h.saving_fraction == 0.5 and not h.owned_by_dependency and h.program_runs == 12
    assert h.agent_minutes == 1.5
    # the same saving read on another clock is not the case's saving
    other = fix.model_copy(update={"saving_clock": "cold_module", "reference_clock": "cold_module"})
    assert history_score(case, None, other, None, 0, 0).saving_fraction is None
    # an unchanged copy saves nothing, whatever its measurement's noise said
    same = fix.model_copy(update={"changed": False, "saving_pct": 3.0})
    assert history_score(case, None, same, None, 0, 0).saving_pct == 0.0
    result = CaseResult(id=case.id, diagnosis=DiagnosisScore(score=1.0), fix=fix, history=h)
    assert case_score(result) == round(0.5 * (1.0 + 0.0) / 2 + 0.5 * 0.5, 4)


def _offline_env(cache: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.update({CACHE_ENV: str(cache), "PIP_CONFIG_FILE": os.devnull, "PIP_INDEX_URL": "http://127.0.0.1:9/simple",
                "PIP_EXTRA_INDEX_URL": "", "PIP_FIND_LINKS": "", "PIP_RETRIES": "0", "PIP_DEFAULT_TIMEOUT": "3",
                "PIP_NO_CACHE_DIR": "1"})
    return env


@pytest.mark.slow
def test_unreachable_registry_is_one_line_and_leaves_nothing(tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    for k, v in _offline_env(cache).items():
        monkeypatch.setenv(k, v)
    with pytest.raises(UsageError) as err:
        cached_venv(["warp-lang==1.10.0"])
    assert "registry" in str(err.value) and "\n" not in str(err.value)
    assert [p for p in cache.iterdir() if p.suffix != ".lock"] == []  # the half-made venv is gone
    monkeypatch.undo()
    run = _cli("eval", "--suite", "history", "--agent", "builtin:null", env=_offline_env(tmp_path / "c2"),
               cwd=tmp_path)
    assert run.returncode == 2, run.stderr
    lines = run.stderr.strip().splitlines()
    assert "Traceback" not in run.stderr and "registry" in lines[-1]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c2", "cache"]
    assert [p for p in (tmp_path / "c2").iterdir() if p.suffix != ".lock"] == []


@pytest.mark.slow
def test_warp_995_reproduces_on_the_old_release_and_not_on_the_fixed_one(tmp_path):
    """One cold run on each release: the old one loads the re-created kernels' modules again at every step, the
    fixed one loads each once, and both print what the case recorded."""
    import shutil

    from warp_compile.evals.history import interpreters
    from warp_compile.probe.fix.behaviour import app_lines
    from warp_compile.probe.measure import _run_data
    from warp_compile.probe.sandbox import Sandbox

    case = _case()
    before, after = interpreters(case)
    project = tmp_path / "project"  # a copy, as the eval runs it (never the installed case folder)
    shutil.copytree(Path(case.path) / "project", project)
    runs = {}
    for name, python in (("before", before), ("after", after)):
        with Sandbox() as box:  # the run's events live in the sandbox: read them before it goes
            out = box.run([python if c == "python" else c for c in case.command], project, 600)
            assert out.exit_code == 0, out.stderr[-2000:]
            runs[name] = _run_data("cold", out)
    b, a = runs["before"].result, runs["after"].result
    assert (b.launches, a.launches) == (case.launches, case.launches)
    assert app_lines(runs["before"].stdout) == app_lines(runs["after"].stdout) == case.expected_output
    assert b.compiled == a.compiled == 2
    steps = case.launches // 2
    assert b.cached >= 2 * (steps - 1)  # every step after the first loads both modules again
    assert a.cached == 0


@pytest.mark.heavy
def test_eval_history_end_to_end(tmp_path):
    """The README's command on the first case with the oracle (the project's own lever): scored, the maintainers'
    release measured in the same run, every figure on the case's clock."""
    out = tmp_path / "card.json"
    run = _cli("eval", "--suite", "history", "--case", CASE, "--agent", "builtin:oracle", "--pairs", "2",
               "--json", str(out), "--quiet", cwd=tmp_path)
    assert run.returncode in (0, 1), run.stderr
    card = json.loads(out.read_text())
    assert card["suite"] == "history"
    c = card["cases"][0]
    assert c["history"]["clock"] == "warm_cpu" and c["history"]["reference_saving_pct"] is not None
    assert c["fix"]["reference_source"] == "same run" and c["fix"]["behaviour_ok"]


def test_fix_credit_rests_on_the_case_clock_against_the_release():
    from warp_compile.evals.scorer import fix_credit

    case = _case()
    base = FixScore(changed=True, verdict="INCONCLUSIVE", saving_pct=50.0, saving_clock="warm_cpu",
                    reference_saving_pct=25.0, reference_clock="warm_cpu")
    # the headline may stay inconclusive: the case's clock decides, capped at the maintainers' saving
    both = base.model_copy(update={"clock_judged": "improved", "reference_clock_judged": "improved"})
    assert fix_credit(case, both) == 1.0
    half = both.model_copy(update={"saving_pct": 12.5})
    assert fix_credit(case, half) == 0.5
    missed = base.model_copy(update={"clock_judged": "within band", "reference_clock_judged": "improved"})
    assert fix_credit(case, missed) == 0.0
    neither = base.model_copy(update={"clock_judged": "within band", "reference_clock_judged": "within band"})
    assert fix_credit(case, neither) is None
    broke = both.model_copy(update={"behaviour_ok": False})
    assert fix_credit(case, broke) == 0.0


def test_shards_split_the_history_cases():
    ids = []
    for i in (1, 2):
        run = _cli("eval", "--suite", "history", "--shard", f"{i}/2", "--list", "--json", "-")
        assert run.returncode == 0, run.stderr
        ids += [c["id"] for c in json.loads(run.stdout)["cases"]]
    assert sorted(ids) == sorted(c.id for c in load_cases(history_root())) and len(ids) == len(set(ids))
