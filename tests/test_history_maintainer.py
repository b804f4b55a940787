"""The maintainer role of a history case: the release wheel unpacked as the project, the maintainers' change (the
fixed release, or a patch) as the same run's third arm, and the scoring (no upstream report; the saving a fraction
of the maintainers').

Wheels here are tiny ones built in the test and served to pip from a local folder (no index, no network): the
download, the cache and the unpacking are pip's and this module's real code. The measurement is the mock executor
of tests/test_fix_eval.py (run_sample and build_report replaced), so the scoring is checked without Warp. The real
mujoco-warp runs are in the heavy tier (tests/test_history_mjw.py).
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import zipfile
from pathlib import Path
from types import SimpleNamespace

import pytest

from tests.test_compare import build, report
from warp_compile.evals import history_maintainer as hm
from warp_compile.evals.harness import Agent, AgentContext, Settings
from warp_compile.evals.history import history_root
from warp_compile.evals.history_env import CACHE_ENV
from warp_compile.evals.models import Answer, AnswerFinding, AnswerLocation, Case
from warp_compile.evals.scorer import load_cases
from warp_compile.probe.errors import UsageError
from warp_compile.probe.models.report import Stat

KERN_10 = "def make(n):\n    return [n] * n  # made again at every call\n"
KERN_11 = "import functools\n\n\n@functools.cache\ndef make(n):\n    return [n] * n  # made again at every call\n"
DRIVER = "from mylib.kern import make\n\nprint('total', sum(make(3)))\n"


def _wheel(folder: Path, version: str, kern: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    dist = f"mylib-{version}.dist-info"
    with zipfile.ZipFile(folder / f"mylib-{version}-py3-none-any.whl", "w") as zf:
        zf.writestr("mylib/__init__.py", "")
        zf.writestr("mylib/kern.py", kern)
        zf.writestr(f"{dist}/METADATA", f"Metadata-Version: 2.1\nName: mylib\nVersion: {version}\n")
        zf.writestr(f"{dist}/WHEEL", "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
        zf.writestr(f"{dist}/RECORD", "")


@pytest.fixture
def local_index(tmp_path, monkeypatch):
    """pip sees only the wheels folder (no index, no network); the cache is the test's own."""
    wheels = tmp_path / "wheels"
    _wheel(wheels, "1.0", KERN_10)
    _wheel(wheels, "1.1", KERN_11)
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "cache"))
    monkeypatch.setenv("PIP_CONFIG_FILE", os.devnull)
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(wheels))
    return wheels


def _case(folder: Path, reference: dict, clock: str = "steady") -> Case:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "project").mkdir(exist_ok=True)
    (folder / "project" / "drive.py").write_text(DRIVER, encoding="utf-8")
    loc = {"mechanism": "WC-1", "file": "mylib/kern.py", "line": 1}
    data = {
        "id": "mylib-1", "command": ["python", "drive.py"], "expected_output": ["total 9"],
        "expected": {"mechanisms": ["WC-1"], "locations": [loc]},
        "history": {"library": "mylib", "before": ["mylib==1.0"], "after": ["mylib==1.1"], "source": "test",
                    "upstream": {"mechanisms": ["WC-1"], "locations": [loc]}, "clock": clock,
                    "maintainer": {"unpack": "mylib==1.0", "deps": [], "driver": "drive.py",
                                   "command": ["python", "drive.py"], "clock": clock,
                                   "expected": {"mechanisms": ["WC-1"], "locations": [loc]},
                                   "reference": reference}},
    }
    (folder / "case.json").write_text(json.dumps(data), encoding="utf-8")
    return Case.model_validate({**data, "path": str(folder)})


def test_roles_follow_the_cases_blocks():
    cases = {c.id: c for c in load_cases(history_root())}
    mjw, warp = cases["mjw-1342-contact-cache"], cases["warp-995-unique-reuse"]
    assert hm.roles(mjw, "both") == ["user", "maintainer"] and hm.roles(mjw, "maintainer") == ["maintainer"]
    assert hm.roles(warp, "both") == ["user"] and hm.roles(warp, "maintainer") == [] and hm.roles(warp, "user") == [
        "user"]


@pytest.mark.parametrize("cid", ["mjw-1318-cache-kernel", "mjw-1342-contact-cache"])
def test_the_mjw_cases_pin_every_dependency_and_share_the_user_roles_lines(cid):
    case = next(c for c in load_cases(history_root()) if c.id == cid)
    h = case.history
    assert h is not None and h.maintainer is not None and h.clock == "steady" == h.maintainer.clock
    assert all("==" in r for r in [*h.before, *h.after, *h.maintainer.deps])
    assert not any(r.startswith("mujoco-warp") for r in h.maintainer.deps)  # the unpacked tree is the library
    assert h.maintainer.reference.kind == "release" and h.maintainer.reference.unpack == h.after[0]
    assert h.maintainer.unpack == h.before[0] and "warp-lang==1.12.1" in h.maintainer.deps
    lines = {(loc.file, loc.line) for loc in h.upstream.locations}
    assert lines == {(loc.file, loc.line) for loc in h.maintainer.expected.locations}
    assert all(f.startswith("mujoco_warp/_src/") for f, _ in lines)
    m = hm.maintainer_case(case)
    assert m.id == cid + ":maintainer" and m.history is not None and m.history.role == "maintainer"
    assert m.expected_output == case.expected_output and m.prompt != case.prompt


def test_the_release_is_unpacked_once_without_its_metadata_and_the_fixed_one_beside_it(tmp_path, local_index):
    case = _case(tmp_path / "suite" / "mylib-1", {"kind": "release", "unpack": "mylib==1.1"})
    files = hm.trees(case)
    assert files["project/mylib/kern.py"].decode() == KERN_10 and files["fixed/mylib/kern.py"].decode() == KERN_11
    assert files["project/drive.py"] == files["fixed/drive.py"] == DRIVER.encode()
    assert not [k for k in files if ".dist-info" in k or k.endswith(hm.MARKER)]
    # cached: the second call needs no registry
    for w in local_index.iterdir():
        w.unlink()
    assert hm.trees(case) == files
    unpacked = sorted(p.name for p in (tmp_path / "cache" / "unpacked").iterdir())
    assert unpacked == ["mylib-1.0", "mylib-1.1"]  # no partial folder left


def test_a_patch_reference_applies_and_a_stale_one_is_one_line(tmp_path, local_index):
    patch = ("--- a/mylib/kern.py\n+++ b/mylib/kern.py\n@@ -1,2 +1,6 @@\n+import functools\n+\n+\n+@functools.cache\n"
             " def make(n):\n     return [n] * n  # made again at every call\n")
    folder = tmp_path / "suite" / "mylib-1"
    case = _case(folder, {"kind": "patch", "file": "maintainer.patch", "source": "test PR #1"})
    (folder / "maintainer.patch").write_text(patch, encoding="utf-8")
    files = hm.trees(case)
    assert files["fixed/mylib/kern.py"].decode() == KERN_11 and files["project/mylib/kern.py"].decode() == KERN_10
    (folder / "maintainer.patch").write_text(patch.replace("def make(n)", "def other(n)"), encoding="utf-8")
    with pytest.raises(UsageError) as err:
        hm.trees(case)
    assert "does not apply" in str(err.value) and "\n" not in str(err.value)


def test_a_release_the_registry_lacks_is_one_line_and_leaves_nothing(tmp_path, local_index):
    case = _case(tmp_path / "suite" / "mylib-1", {"kind": "release", "unpack": "mylib==9.9"})
    with pytest.raises(UsageError) as err:
        hm.trees(case)
    assert "mylib==9.9" in str(err.value) and "\n" not in str(err.value)
    assert sorted(p.name for p in (tmp_path / "cache" / "unpacked").iterdir()) == ["mylib-1.0"]


STEADY = {"a": 1000.0, "b": 550.0, "c": 100.0}  # the original, the agent's edit, the maintainers' release (ms)


def _mock_measure(monkeypatch, steady: dict[str, float], seen: dict[str, list[str]]) -> None:
    from warp_compile.probe import measure

    def run_sample(command, cwd, index, **kw):  # type: ignore[no-untyped-def]
        arm = Path(cwd).parent.name  # work/judge/<a|b|c>/project
        seen.setdefault(arm, []).append(Path(cwd, "mylib", "kern.py").read_text(encoding="utf-8"))
        run = SimpleNamespace(result=SimpleNamespace(launches=2, exit_code=0), stdout="total 9\n")
        return SimpleNamespace(arm=arm, index=index, ok=True, cold=run, warm=run)

    def build_report(command, cwd, samples, label="", requested=None):  # type: ignore[no-untyped-def]
        arm = Path(cwd).parent.name
        r = report(elapsed=[3000.0 + s.index for s in samples], warm=[0.4] * len(samples), label=label,
                   builds=[build("app")])
        values = [steady[arm] * (1 + 0.002 * (s.index % 3)) for s in samples]
        r.steady_ms = Stat(median=statistics.median(values), mad=1.0, values=values)
        return r

    monkeypatch.setattr(measure, "run_sample", run_sample)
    monkeypatch.setattr(measure, "build_report", build_report)


def _editing_agent(new_text: str, line: int):  # type: ignore[no-untyped-def]
    def act(ctx: AgentContext) -> None:
        assert (ctx.copy / "mylib" / "kern.py").is_file() and (ctx.copy / "drive.py").is_file()
        (ctx.copy / "mylib" / "kern.py").write_text(new_text, encoding="utf-8")
        finding = AnswerFinding(mechanism="WC-1", locations=[AnswerLocation(file="mylib/kern.py", line=line)])
        ctx.answer.write_text(Answer(findings=[finding]).model_dump_json(), encoding="utf-8")

    return Agent(name="test:edit", builtin=act)


def test_the_maintainer_roles_saving_is_a_fraction_of_the_maintainers_in_the_same_run(tmp_path, local_index,
                                                                                      monkeypatch):
    from warp_compile.evals.scorer import case_score

    seen: dict[str, list[str]] = {}
    _mock_measure(monkeypatch, STEADY, seen)
    case = _case(tmp_path / "suite" / "mylib-1", {"kind": "release", "unpack": "mylib==1.1"})
    files = hm.trees(case)
    edit = KERN_10.replace("return", "return  # cached elsewhere\n    return", 1)
    result = hm.run_maintainer(case, _editing_agent(edit, 2), Settings(pairs=3, python=sys.executable), files)
    # the three arms: the release before the fix, the agent's edit of it, the maintainers' fixed source
    assert {a: set(v) for a, v in seen.items()} == {"a": {KERN_10}, "b": {edit}, "c": {KERN_11}}
    h = result.history
    assert result.id == "mylib-1:maintainer" and h is not None and h.role == "maintainer"
    assert h.before == "mylib==1.0" and h.after == "mylib==1.1" and h.clock == "steady"
    assert not h.owned_by_dependency and h.upstream.score == 0.0  # a maintainer sends no upstream report
    assert h.saving_pct == pytest.approx(45.0, abs=1.0) and h.reference_saving_pct == pytest.approx(90.0, abs=1.0)
    assert h.saving_fraction == pytest.approx(0.5, abs=0.02)
    assert h.clock_judged == "improved" and h.reference_clock_judged == "improved"
    assert result.fix is not None and result.fix.behaviour_ok and result.fix.credit == pytest.approx(0.5, abs=0.02)
    assert result.diagnosis.score == 1.0  # WC-1 at the maintainers' line, in their own file
    # the diagnosis is not halved by an upstream report the role does not have
    assert result.score == case_score(result) == pytest.approx(0.5 * 1.0 + 0.5 * result.fix.credit, abs=1e-4)


def test_an_unchanged_copy_still_prices_the_maintainers_change(tmp_path, local_index, monkeypatch):
    seen: dict[str, list[str]] = {}
    _mock_measure(monkeypatch, STEADY, seen)
    case = _case(tmp_path / "suite" / "mylib-1", {"kind": "release", "unpack": "mylib==1.1"})
    result = hm.run_maintainer(case, _editing_agent(KERN_10, 40), Settings(pairs=2, python=sys.executable),
                               hm.trees(case))
    h = result.history
    assert h is not None and h.saving_pct == 0.0 and h.reference_saving_pct == pytest.approx(90.0, abs=1.0)
    assert result.fix is not None and result.fix.credit == 0.0  # the maintainers' saved; the agent's did not
    assert result.diagnosis.location_recall == 0.0  # named the mechanism, not the line


def test_role_on_the_cli_needs_a_maintainer_block(tmp_path):
    run = subprocess.run([sys.executable, "-m", "warp_compile", "eval", "--suite", "history", "--case",
                          "warp-995-unique-reuse", "--role", "maintainer", "--agent", "builtin:null"],
                         capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert run.returncode == 2 and "Traceback" not in run.stderr
    assert len(run.stderr.strip().splitlines()) == 1 and "maintainer role" in run.stderr


@pytest.mark.slow
def test_the_maintainer_role_without_a_registry_is_one_line_and_leaves_nothing(tmp_path):
    from tests.test_history import _offline_env

    env = _offline_env(tmp_path / "cache")
    run = subprocess.run([sys.executable, "-m", "warp_compile", "eval", "--suite", "history", "--case",
                          "mjw-1342-contact-cache", "--role", "maintainer", "--agent", "builtin:null"],
                         capture_output=True, text=True, cwd=tmp_path, env=env, timeout=300)
    assert run.returncode == 2 and "Traceback" not in run.stderr
    assert "registry" in run.stderr.strip().splitlines()[-1]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cache"]
    assert [p for p in (tmp_path / "cache").iterdir() if p.suffix != ".lock"] == []


@pytest.mark.slow
def test_a_release_with_no_dependencies_gets_an_empty_venv(tmp_path, local_index):
    case = _case(tmp_path / "suite" / "mylib-1", {"kind": "release", "unpack": "mylib==1.1"})
    python = hm.interpreter(case)
    assert Path(python).is_file() and str(tmp_path / "cache") in python
    run = subprocess.run([python, "-c", "import importlib.util as u; print(u.find_spec('mylib') is None)"],
                         capture_output=True, text=True, timeout=60)
    assert run.stdout.strip() == "True"  # the library is not installed: the unpacked tree is


def test_one_pair_judges_no_clock_so_no_credit_rests_on_it(tmp_path, local_index, monkeypatch):
    from warp_compile.evals.harness import ONE_SAMPLE

    _mock_measure(monkeypatch, STEADY, {})
    case = _case(tmp_path / "suite" / "mylib-1", {"kind": "release", "unpack": "mylib==1.1"})
    edit = KERN_10.replace("return", "return  # cached elsewhere\n    return", 1)
    result = hm.run_maintainer(case, _editing_agent(edit, 1), Settings(pairs=1, python=sys.executable),
                               hm.trees(case))
    assert result.fix is not None and result.fix.clock_judged == ONE_SAMPLE == result.fix.reference_clock_judged
    assert result.fix.credit is None  # not judged: the diagnosis alone scores the case
    assert result.score == result.diagnosis.score
