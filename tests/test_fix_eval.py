"""The eval judges an agent's saving against the reference fix measured in the same run (a third arm), with a
mock executor: the agent that saves half of what the reference saves today gets half the credit, whatever the
figure recorded in case.json says."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

from tests.test_compare import build, report
from warp_compile.evals.harness import Settings, _judge_fix
from warp_compile.evals.models import Case, Expected, Reference

TIMES = {"a": [3000.0, 3010.0, 2990.0, 3005.0], "b": [2250.0, 2255.0, 2245.0, 2252.0],
         "c": [1500.0, 1510.0, 1490.0, 1505.0]}


def test_the_reference_is_a_third_arm_and_the_credit_is_relative_to_it(tmp_path: Path, monkeypatch) -> None:
    from warp_compile.probe import measure

    calls: list[str] = []

    def run_sample(command, cwd, index, **kw):  # type: ignore[no-untyped-def]
        arm = Path(cwd).parent.name  # work/judge/<a|b|c>/project
        calls.append(arm)
        run = SimpleNamespace(result=SimpleNamespace(launches=2, exit_code=0), stdout="total 1.0\n")
        return SimpleNamespace(arm=arm, index=index, ok=True, cold=run, warm=run)

    def build_report(command, cwd, samples, label="", requested=None):  # type: ignore[no-untyped-def]
        arm = Path(cwd).parent.name
        seq = TIMES[arm]
        # the fixes compile different work (one build fewer): identical work would read NO_EFFECT
        extra = {"builds": [build("app")]} if arm != "a" else {}
        return report(elapsed=[seq[s.index % len(seq)] for s in samples], warm=[0.4] * len(samples), label=label,
                      **extra)

    monkeypatch.setattr(measure, "run_sample", run_sample)
    monkeypatch.setattr(measure, "build_report", build_report)
    case = Case(id="t", command=["python", "app.py"], expected=Expected(mechanisms=["CS-10"]),
                expected_output=["total 1.0"],
                reference=Reference(verdict="IMPROVED", saving_pct=90.0, clock="compile_elapsed"))
    files = {"project/app.py": b"print('total 1.0')\n", "fixed/app.py": b"print('total 1.0')  # fixed\n"}
    copy = tmp_path / "agent"
    copy.mkdir()
    (copy / "app.py").write_bytes(b"print('total 1.0')  # agent\n")
    fix, flags = _judge_fix(case, Settings(pairs=4), files, copy, tmp_path / "work", None, lambda _m: None)
    assert fix.reference_source == "same run" and fix.reference_verdict == "IMPROVED"
    assert fix.verdict == "IMPROVED" and fix.saving_clock == "compile_elapsed"
    assert abs(fix.reference_saving_pct - 50.0) < 1.0 and abs(fix.saving_pct - 25.0) < 1.0
    assert abs(fix.credit - 0.5) < 0.02 and not flags
    assert calls[:3] == ["a", "b", "c"]  # the warm-up of each arm, then rounds over one shared baseline
    assert calls.count("a") == 1 + 4 and calls.count("c") == 1 + 4


def test_identical_work_under_a_compiled_only_change_is_no_effect(tmp_path: Path, monkeypatch) -> None:
    """The A/A control: a copy that compiles exactly what the original does gets no timing verdict."""
    from warp_compile.probe import measure

    def run_sample(command, cwd, index, **kw):  # type: ignore[no-untyped-def]
        run = SimpleNamespace(result=SimpleNamespace(launches=2, exit_code=0), stdout="total 1.0\n")
        return SimpleNamespace(index=index, ok=True, cold=run, warm=run)

    def build_report(command, cwd, samples, label="", requested=None):  # type: ignore[no-untyped-def]
        seq = TIMES["a"] if Path(cwd).parent.name == "a" else TIMES["c"]  # the copy "runs" faster: noise
        return report(elapsed=[seq[s.index % len(seq)] for s in samples], warm=[0.4] * len(samples), label=label)

    monkeypatch.setattr(measure, "run_sample", run_sample)
    monkeypatch.setattr(measure, "build_report", build_report)
    case = Case(id="t", command=["python", "app.py"], expected=Expected(mechanisms=[]), expected_output=["total 1.0"])
    files = {"project/app.py": b"print('total 1.0')\n"}
    copy = tmp_path / "agent"
    copy.mkdir()
    (copy / "app.py").write_bytes(b"print('total 1.0')\n# a comment\n")
    fix, _ = _judge_fix(case, Settings(pairs=3), files, copy, tmp_path / "work", None, lambda _m: None)
    assert fix.verdict == "NO_EFFECT"
