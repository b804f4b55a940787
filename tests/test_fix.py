"""The fix engine without processes: planning, the shared-baseline rounds and their stopping, behaviour, --write.

A mock executor stands in for `measure.run_sample` / `measure.build_report`: each arm's "timings" and printed
output come from a profile keyed by the arm's copy (fix1, fix2, original, ...), so the tests pin the engine's
decisions (which arm runs when, what is proven, what is written), not the machine's speed.
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from tests.test_compare import build, report
from warp_compile.probe.compare.multiarm import PRICE_MIN_PAIRS, Arm, multiarm_compare
from warp_compile.probe.errors import UsageError
from warp_compile.probe.fix.edits import SourceView, insert_before, replace_lines
from warp_compile.probe.fix.engine import Engine, FixOptions, launcher_command, map_command, run_fix
from warp_compile.probe.fix.policy import finding_keys, plan, summarize, to_write
from warp_compile.probe.fix.settings import add_settings_edits
from warp_compile.probe.models import EntryPoint
from warp_compile.probe.models.diagnosis import Diagnosis, Edit, Finding, RuledOut, UpstreamReport
from warp_compile.probe.render.fix import render_fix

MAIN = 'import warp as wp\n\nprint("total 1.2345")\n'


def _finding(mech: str, edits: list[Edit] | None = None, **kw) -> Finding:  # type: ignore[no-untyped-def]
    return Finding(mechanism=mech, title=f"{mech} title", severity="medium", confidence="high", fix="f",
                   edits=edits or [], **kw)


class Mock:
    """profiles: copy name -> {"elapsed": [...], "stdout": "...", "launches": n, "fail": bool}."""

    def __init__(self, profiles: dict[str, dict]):
        self.profiles = profiles
        self.calls: list[tuple[str, int]] = []
        self.once: list[tuple[str, list[str]]] = []
        self.kwargs: list[dict] = []

    def _name(self, cwd: Path) -> str:
        for part in reversed(Path(cwd).parts):
            if part in self.profiles:
                return part
        return "real"

    def run_sample(self, command, cwd, index, timeout_s=900.0, progress=None, extra_env=None, **kw):  # type: ignore[no-untyped-def]
        name = self._name(cwd)
        if extra_env:
            name = "settings"
        self.calls.append((name, index))
        self.kwargs.append(kw)
        p = self.profiles.get(name, self.profiles["original"])
        seq = p["elapsed"]

        def run(phase: str) -> SimpleNamespace:
            res = SimpleNamespace(launches=p.get("launches", 4), exit_code=1 if p.get("fail") else 0, phase=phase,
                                  stderr_tail=p.get("stderr", "") if p.get("fail") else "")
            return SimpleNamespace(result=res, stdout=p.get("stdout", "total 1.2345\n"))

        return SimpleNamespace(elapsed=seq[index % len(seq)], ok=not p.get("fail"), cold=run("cold"),
                               warm=run("warm"))

    def build_report(self, command, cwd, samples, label="", requested=None):  # type: ignore[no-untyped-def]
        ok = [s for s in samples if s.ok]
        name = self._name(cwd)
        p = self.profiles.get(name, self.profiles["original"])
        # a fix changes what Warp compiles (one build fewer) unless its profile says it compiles the same work:
        # identical work under a compiled-only change is NO_EFFECT, whatever the clocks say
        changed = name != "original" and not p.get("same_work")
        extra = {"builds": [build("app")]} if changed else {}
        return report(elapsed=[s.elapsed for s in ok], warm=[0.4] * len(ok), failed=len(samples) - len(ok),
                      label=label, **extra)

    def run_once(self, command, cwd, timeout_s, env):  # type: ignore[no-untyped-def]
        name = self._name(cwd)
        self.once.append((name, command))
        p = self.profiles.get(name, self.profiles["original"])
        return 0, p.get("keep_stdout", "rebuilt\n")

    def engine(self) -> Engine:
        return Engine(run_sample=self.run_sample, build_report=self.build_report, run_once=self.run_once)


FAST = [1500.0, 1510.0, 1490.0, 1505.0]
SLOW = [3000.0, 3010.0, 2990.0, 3005.0]


def _project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    root.mkdir()
    (root / "main.py").write_text(MAIN)
    (root / "lib.py").write_text("X = 1\n")
    (root / ".git").mkdir()
    (root / ".git" / "HEAD").write_text("ref\n")
    return root


def _diagnosis(root: Path, findings: list[Finding]) -> Diagnosis:
    return Diagnosis(command=["python", "main.py"], cwd=str(root), source_root=str(root), findings=findings)


def _settings_edit(root: Path) -> Edit:
    e = insert_before(SourceView(root), "main.py", 1, "import warp as wp\nwp.config.enable_backward = False\n")
    assert e is not None
    return e


def _snapshot(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


# ------------------------------------------------------------------------------------------------ planning


def test_plan_keys_several_findings_of_a_mechanism_and_says_why_each_is_skipped(tmp_path: Path) -> None:
    root = _project(tmp_path)
    findings = [
        _finding("CS-10", [_settings_edit(root)], applicability="automatic"),
        _finding("CS-1"), _finding("CS-1", upstream=UpstreamReport(distribution="lib")),
        _finding("CS-2", experiment={"keep_kernel_cache": True}),
    ]
    d = _diagnosis(root, findings)
    assert finding_keys(d.findings) == ["CS-10", "CS-1#1", "CS-1#2", "CS-2"]
    cands = plan(d)
    assert [c.status for c in cands] == ["measured", "skipped", "skipped", "skipped"]
    assert "upstream" in cands[2].reason and "experiment" in cands[3].reason
    assert cands[0].clock == "compile_elapsed" and cands[3].clock == "warm_repeat"
    # --verify measures a hook-applied experiment on the original tree
    assert plan(d, settings_arms=True)[3].settings == {"keep_kernel_cache": True}
    picked = plan(d, ["cs1#2"])
    assert [c.key for c in picked if c.reason != "not selected (--finding)"] == ["CS-1#2"]
    with pytest.raises(UsageError, match="no such finding"):
        plan(d, ["CS-7"])


def test_settings_findings_get_the_entry_point_edit_in_one_place(tmp_path: Path) -> None:
    root = _project(tmp_path)
    entry = EntryPoint(kind="script", name="main.py", file=str(root / "main.py"), owner="project")
    with_setting = _finding("CS-10", experiment={"enable_backward": False})
    hook_only = _finding("CS-2", experiment={"keep_kernel_cache": True})
    ruled = _finding("CS-11", experiment={"max_unroll": 4}, applicability="review", review="numerics")
    add_settings_edits([with_setting, hook_only, ruled], SourceView(root), entry)
    assert with_setting.applicability == "automatic" and with_setting.edits[0].file == "main.py"
    assert "wp.config.enable_backward = False" in with_setting.edits[0].new
    assert hook_only.edits == [] and hook_only.applicability is None
    assert ruled.applicability == "review" and "wp.config.max_unroll = 4" in ruled.edits[0].new
    installed = EntryPoint(kind="module", name="pkg.app", file="/usr/lib/site-packages/pkg/app.py", owner="dependency")
    launcher = _finding("CS-10", experiment={"enable_backward": False})
    add_settings_edits([launcher], SourceView(root), installed)
    assert launcher.edits[0].create and launcher.edits[0].file == "run_app.py"


def test_commands_map_into_the_copy_and_through_a_created_launcher(tmp_path: Path) -> None:
    root, copy = tmp_path / "p", tmp_path / "c"
    root.mkdir()
    assert map_command(["python", str(root / "main.py"), "-n", "3"], root, root, copy) == [
        "python", str(copy / "main.py"), "-n", "3"]
    assert map_command([".venv/bin/python", "x.py"], root, root, copy)[0] == str(root / ".venv/bin/python")
    from warp_compile.probe.fix.edits import launcher_name, launcher_text, settings_lines

    entry = EntryPoint(kind="module", name="warp.examples.fem.example_diffusion")
    e = Edit(file=launcher_name(entry), start_line=1, end_line=0, create=True,
             new=launcher_text(entry, settings_lines({"enable_backward": False})))
    got = launcher_command(["py", "-m", "warp.examples.fem.example_diffusion", "--headless"], [e], root, root)
    assert got == ["py", "run_example_diffusion.py", "--headless"]
    assert launcher_command(["py", "main.py"], [_settings_edit(_project(tmp_path))], root, root) is None


# ------------------------------------------------------------------------------------------------ rounds


def test_one_shared_baseline_rotated_rounds_and_a_decided_arm_stops(tmp_path: Path) -> None:
    mock = Mock({"original": {"elapsed": SLOW}, "fix1": {"elapsed": FAST}, "fix2": {"elapsed": SLOW}})
    for n in ("original", "fix1", "fix2"):
        (tmp_path / n).mkdir()
    base = Arm("original", tmp_path / "original", ["python"])
    arms = [Arm("F1", tmp_path / "fix1", ["python"]), Arm("F2", tmp_path / "fix2", ["python"])]
    multiarm_compare(base, arms, until_decided=True, min_rounds=4, max_rounds=8, run_sample=mock.run_sample,
                     build_report=mock.build_report)
    first = mock.calls[:6]
    assert first == [("original", 0), ("fix1", 0), ("fix2", 0), ("fix1", 1), ("fix2", 1), ("original", 1)]
    assert arms[0].comparison is not None and arms[0].comparison.verdict == "IMPROVED" and arms[0].decided
    assert arms[1].comparison is not None and arms[1].comparison.verdict != "IMPROVED"
    assert len(arms[0].samples) == 4  # decided at the minimum, then stopped while the other could still run
    # one baseline for both: never more baseline samples than rounds
    assert sum(1 for n, _ in mock.calls if n == "original") <= max(len(a.samples) for a in arms)


def test_with_a_precision_an_improved_arm_goes_on_until_its_saving_is_known_or_the_limit(tmp_path: Path) -> None:
    noisy = [1000.0, 2500.0]  # saves 2,000 then 500 ms: IMPROVED after 5 pairs, but only to about ±70%
    for n in ("original", "fix1", "fix2"):
        (tmp_path / n).mkdir()

    def run(precision: float | None) -> list[Arm]:
        mock = Mock({"original": {"elapsed": SLOW}, "fix1": {"elapsed": noisy}, "fix2": {"elapsed": FAST}})
        arms = [Arm("F1", tmp_path / "fix1", ["python"]), Arm("F2", tmp_path / "fix2", ["python"])]
        multiarm_compare(Arm("original", tmp_path / "original", ["python"]), arms, until_decided=True,
                         min_rounds=2, max_rounds=8, run_sample=mock.run_sample, build_report=mock.build_report,
                         precision=precision)
        return arms

    loose, tight = run(None), run(0.25)
    assert loose[0].comparison is not None and loose[0].comparison.verdict == "IMPROVED"
    assert len(loose[0].samples) < 8 and "asked" not in loose[0].stopped_because
    assert len(tight[0].samples) == 8 and tight[0].comparison is not None
    assert tight[0].comparison.verdict == "IMPROVED"
    assert "at the limit of 8 pairs (asked ±25%)" in tight[0].stopped_because
    # a saving already known to the precision asked stops where it would have stopped anyway, and says how well,
    # but not before PRICE_MIN_PAIRS: two pairs that happen to agree give a spread from one difference's luck
    assert len(loose[1].samples) == 2
    assert len(tight[1].samples) == PRICE_MIN_PAIRS and "known to ±" in tight[1].stopped_because
    assert "as a share of the compile" in tight[1].stopped_because or "in ms" in tight[1].stopped_because


def test_a_seeded_baseline_sits_out_the_first_round(tmp_path: Path) -> None:
    mock = Mock({"original": {"elapsed": SLOW}, "fix1": {"elapsed": FAST}})
    for n in ("original", "fix1"):
        (tmp_path / n).mkdir()
    seed = mock.run_sample(["python"], tmp_path / "original", 0)
    mock.calls.clear()
    base = Arm("original", tmp_path / "original", ["python"], samples=[seed])
    arm = Arm("F1", tmp_path / "fix1", ["python"])
    multiarm_compare(base, [arm], rounds=2, until_decided=False, run_sample=mock.run_sample,
                     build_report=mock.build_report, skip_baseline_rounds=1)
    assert mock.calls == [("fix1", 0), ("fix1", 1), ("original", 1)]
    assert len(base.samples) == 2 and arm.comparison is not None


# ------------------------------------------------------------------------------------------------ the engine


def test_dry_run_proves_a_fix_and_leaves_the_project_byte_identical(tmp_path: Path) -> None:
    root = _project(tmp_path)
    before = _snapshot(root)
    mock = Mock({"original": {"elapsed": SLOW}, "fix1": {"elapsed": FAST}})
    d = _diagnosis(root, [_finding("CS-10", [_settings_edit(root)], applicability="automatic")])
    result, _ = run_fix(["python", "main.py"], root, FixOptions(min_rounds=4), diagnosis=d, engine=mock.engine())
    c = result.candidates[0]
    assert c.verdict == "IMPROVED" and c.improved and c.behaviour is not None and c.behaviour.ok
    assert c.clock == "compile_elapsed" and c.saving_ms and c.saving_ms > 1000
    assert "+wp.config.enable_backward = False" in c.diff
    assert result.written == [] and result.written_diff == ""
    assert _snapshot(root) == before
    assert result.costs.program_runs == 2 * len(mock.calls)  # every sample is a cold and a warm run
    assert not any(p.name.startswith("warp-compile-fix-") for p in Path(tmp_path).iterdir())


def test_cuda_arch_reaches_every_sample_of_every_arm(tmp_path: Path) -> None:
    """With --cuda-arch the copies are measured the way the diagnosis was (the NVRTC replay in each sample), so a
    CUDA-only fix is judged on the CUDA compile clock; without it no sample asks for a replay."""
    root = _project(tmp_path)
    for arch, want in ((90, {"cuda_arch": 90}), (None, {})):
        mock = Mock({"original": {"elapsed": SLOW}, "fix1": {"elapsed": FAST}})
        d = _diagnosis(root, [_finding("CS-10", [_settings_edit(root)], applicability="automatic")])
        run_fix(["python", "main.py"], root, FixOptions(min_rounds=2), diagnosis=d, engine=mock.engine(),
                cuda_arch=arch)
        assert {n for n, _ in mock.calls} == {"original", "fix1"}
        assert mock.kwargs and all(kw == want for kw in mock.kwargs), mock.kwargs


def test_write_applies_exactly_the_printed_diff_and_only_the_proven_fix(tmp_path: Path) -> None:
    root = _project(tmp_path)
    good = _settings_edit(root)
    bad = replace_lines(SourceView(root), "lib.py", 1, 1, "X = 2\n")
    assert bad is not None
    mock = Mock({"original": {"elapsed": SLOW}, "fix1": {"elapsed": FAST},
                 "fix2": {"elapsed": FAST, "stdout": "total 9.9999\n"}})
    d = _diagnosis(root, [_finding("CS-10", [good], applicability="automatic"),
                          _finding("CS-3", [bad], applicability="review")])
    before = _snapshot(root)
    result, _ = run_fix(["python", "main.py"], root, FixOptions(write=True, min_rounds=4), diagnosis=d,
                        engine=mock.engine())
    cs10, cs3 = result.candidates
    assert cs10.improved and not cs3.improved
    assert cs3.behaviour is not None and not cs3.behaviour.ok and "output_changed" in cs3.behaviour.flags
    assert result.combination is None  # only one fix improved with behaviour kept
    assert result.applied == ["CS-10"] and result.written == ["main.py"]
    assert result.written_diff == cs10.diff
    after = _snapshot(root)
    assert after["lib.py"] == before["lib.py"]
    assert after["main.py"].decode() == "import warp as wp\nwp.config.enable_backward = False\n" + MAIN


def test_nothing_to_fix_writes_nothing_and_runs_nothing(tmp_path: Path) -> None:
    root = _project(tmp_path)
    before = _snapshot(root)
    mock = Mock({"original": {"elapsed": SLOW}})
    d = _diagnosis(root, [_finding("CS-4", applicability="manual", review="owners differ")])
    result, _ = run_fix(["python", "main.py"], root, FixOptions(write=True), diagnosis=d, engine=mock.engine())
    assert result.written == [] and mock.calls == [] and result.costs.program_runs == 0
    assert _snapshot(root) == before


def test_a_run_with_no_finding_says_why_each_mechanism_was_not_offered(tmp_path: Path) -> None:
    root = _project(tmp_path)
    mock = Mock({"original": {"elapsed": SLOW}})
    d = _diagnosis(root, [])
    d.ruled_out = [RuledOut(mechanism="CS-9", signal="each unique kernel differs from the others"),
                   RuledOut(mechanism="CS-10", signal="backward code is small: 4% of the cold compile")]
    result, _ = run_fix(["python", "main.py"], root, FixOptions(write=True), diagnosis=d, engine=mock.engine())
    assert result.not_offered == ["CS-9: each unique kernel differs from the others",
                                  "CS-10: backward code is small: 4% of the cold compile"]
    assert result.summary.startswith("no finding to fix (2 mechanism(s) ruled out")
    assert "Not offered:" in render_fix(result) and mock.calls == []


def test_an_edit_ruled_out_as_small_is_measured_and_written_only_when_proven(tmp_path: Path) -> None:
    """diagnose's line for a finding is an estimate; fix measures an edit under it (a ruled-out's candidate) and the
    proof decides. diagnose --verify (below_line=False) measures findings only."""
    for fast, written in ((FAST, ["main.py"]), (SLOW, [])):
        (tmp_path / str(len(written))).mkdir()
        root = _project(tmp_path / str(len(written)))
        d = _diagnosis(root, [])
        small = _finding("CS-10", [_settings_edit(root)], applicability="automatic", below_line=True)
        d.ruled_out = [RuledOut(mechanism="CS-10", signal="backward code is small: 7%", candidate=small),
                       RuledOut(mechanism="CS-9", signal="each unique kernel differs from the others")]
        mock = Mock({"original": {"elapsed": SLOW}, "fix1": {"elapsed": fast}})
        result, _ = run_fix(["python", "main.py"], root, FixOptions(write=True, min_rounds=4, max_rounds=4),
                            diagnosis=d, engine=mock.engine())
        (c,) = result.candidates
        assert c.key == "CS-10" and c.below_line and c.status == "measured" and "written only if proven" in c.title
        assert c.improved == bool(written) and result.written == written
        assert result.not_offered == ["CS-9: each unique kernel differs from the others"]
        assert "CS-10" in render_fix(result)
    mock = Mock({"original": {"elapsed": SLOW}, "fix1": {"elapsed": FAST}})
    result, _ = run_fix(["python", "main.py"], root, FixOptions(below_line=False), diagnosis=d, engine=mock.engine())
    assert result.candidates == [] and mock.calls == [] and len(result.not_offered) == 2


def test_an_edit_that_does_not_apply_is_a_conflict_not_a_measurement(tmp_path: Path) -> None:
    root = _project(tmp_path)
    stale = Edit(file="main.py", start_line=1, end_line=1, old="import numpy\n", new="import numpy as np\n")
    mock = Mock({"original": {"elapsed": SLOW}})
    d = _diagnosis(root, [_finding("CS-1", [stale], applicability="automatic")])
    result, _ = run_fix(["python", "main.py"], root, FixOptions(), diagnosis=d, engine=mock.engine())
    assert result.candidates[0].status == "conflict" and "no longer holds" in result.candidates[0].reason
    assert mock.calls == []


def test_a_broken_must_keep_path_blocks_the_write(tmp_path: Path) -> None:
    root = _project(tmp_path)
    before = _snapshot(root)
    mock = Mock({"original": {"elapsed": SLOW}, "fix1": {"elapsed": FAST, "keep_stdout": "cache kept\n"}})
    d = _diagnosis(root, [_finding("CS-2", [_settings_edit(root)], applicability="review", must_keep=[["--rebuild"]])])
    result, _ = run_fix(["python", "main.py"], root, FixOptions(write=True, min_rounds=4), diagnosis=d,
                        engine=mock.engine())
    c = result.candidates[0]
    assert c.verdict == "IMPROVED" and not c.improved
    assert c.behaviour is not None and c.behaviour.kept[0].argv == ["--rebuild"] and not c.behaviour.kept[0].ok
    assert [cmd[-1] for _, cmd in mock.once] == ["--rebuild", "--rebuild"]
    assert result.written == [] and _snapshot(root) == before


def test_two_proven_fixes_are_measured_together_and_the_combination_is_written(tmp_path: Path) -> None:
    root = _project(tmp_path)
    a = _settings_edit(root)
    b = replace_lines(SourceView(root), "lib.py", 1, 1, "X = 1  # same\n")
    assert b is not None
    mock = Mock({"original": {"elapsed": SLOW}, "fix1": {"elapsed": FAST}, "fix2": {"elapsed": FAST},
                 "combination": {"elapsed": [900.0, 905.0, 895.0, 902.0]}})
    d = _diagnosis(root, [_finding("CS-10", [a], applicability="automatic"),
                          _finding("CS-11", [b], applicability="automatic")])
    result, _ = run_fix(["python", "main.py"], root, FixOptions(write=True, min_rounds=4), diagnosis=d,
                        engine=mock.engine())
    assert result.combination is not None and result.combination.improved
    assert result.applied == ["CS-10", "CS-11"] and result.written == ["lib.py", "main.py"]


def test_write_refuses_a_file_changed_since_it_was_measured(tmp_path: Path) -> None:
    root = _project(tmp_path)
    mock = Mock({"original": {"elapsed": SLOW}, "fix1": {"elapsed": FAST}})
    edit = _settings_edit(root)
    d = _diagnosis(root, [_finding("CS-10", [edit], applicability="automatic")])
    engine = mock.engine()
    inner = engine.build_report

    def touch_then_build(*args, **kw):  # type: ignore[no-untyped-def]
        (root / "main.py").write_text(MAIN + "# edited meanwhile\n")
        return inner(*args, **kw)

    engine.build_report = touch_then_build
    with pytest.raises(UsageError, match="changed since it was copied"):
        run_fix(["python", "main.py"], root, FixOptions(write=True, min_rounds=4), diagnosis=d, engine=engine)
    assert (root / "main.py").read_text() == MAIN + "# edited meanwhile\n"


def test_a_copy_that_imports_the_real_tree_is_not_measured_as_the_fix(tmp_path: Path) -> None:
    from warp_compile.probe.fix.engine import imports_from

    root = _project(tmp_path)
    copy = tmp_path / "copy"
    leak = SimpleNamespace(cold=SimpleNamespace(events=SimpleNamespace(
        imported_files=["site:__editable___finder", str(root / "lib.py")])))
    clean = SimpleNamespace(cold=SimpleNamespace(events=SimpleNamespace(
        imported_files=["site:__editable___finder", str(copy / "lib.py")])))
    assert imports_from([leak], root) == str(root / "lib.py")
    assert imports_from([clean], root) is None


def test_an_undecided_fix_of_the_same_module_joins_the_combination_only_if_it_pays(tmp_path: Path) -> None:
    """Two CS-6 findings on one module: registering one kernel's instances saves part, the other alone reads no
    change (the module is still rebuilt by the first kernel's late instance); together they save the most, so the
    combination is measured and written. When together they save no more than the first alone, only it is written."""
    root = _project(tmp_path)
    a = _settings_edit(root)
    b = replace_lines(SourceView(root), "lib.py", 1, 1, "X = 1  # registered\n")
    assert b is not None
    d = _diagnosis(root, [_finding("CS-6", [a], applicability="automatic", modules=["m"]),
                          _finding("CS-6", [b], applicability="automatic", modules=["m"])])
    mid = [2200.0, 2210.0, 2190.0, 2205.0]
    for together, written in ((FAST, ["lib.py", "main.py"]), (mid, ["main.py"])):
        mock = Mock({"original": {"elapsed": SLOW}, "fix1": {"elapsed": mid}, "fix2": {"elapsed": SLOW},
                     "combination": {"elapsed": together}})
        result, _ = run_fix(["python", "main.py"], root, FixOptions(write=False, min_rounds=4),
                            diagnosis=d, engine=mock.engine())
        one, two = result.candidates
        assert one.improved and not two.improved and two.verdict in ("INCONCLUSIVE", "NO_EFFECT")
        assert result.combination is not None and result.combination.key == "CS-6#1+CS-6#2"
        assert "undecided" in result.combination.title
        keys, edits = to_write(result)
        assert sorted({e.file for e in edits}) == written, (keys, result.combination.saving_ms, one.saving_ms)


# ------------------------------------------------------------------------------------------------ issue 22


LICENSED = ('# Copyright (c) 2026 Example Authors\n\n"""The app."""\n\nfrom __future__ import annotations\n\n'
            'print("total 1.2345")\n')


def test_an_edit_that_does_not_parse_is_invalid_with_the_reason_and_costs_no_run(tmp_path: Path) -> None:
    """Like cargo fix rebuilding: the old line-1 placement above a docstring and `from __future__` is caught by
    compiling the edited file, before any program runs."""
    root = _project(tmp_path)
    (root / "main.py").write_text(LICENSED)
    bad = insert_before(SourceView(root), "main.py", 1, "import warp as wp\nwp.config.enable_backward = False\n")
    assert bad is not None
    mock = Mock({"original": {"elapsed": SLOW}})
    d = _diagnosis(root, [_finding("CS-10", [bad], applicability="automatic")])
    result, _ = run_fix(["python", "main.py"], root, FixOptions(), diagnosis=d, engine=mock.engine())
    c = result.candidates[0]
    assert c.status == "invalid" and mock.calls == [] and result.costs.program_runs == 0
    assert "main.py:7: SyntaxError" in c.reason and "the tool's own edit" in c.reason
    assert c.diff  # what was tried is still shown
    from warp_compile.probe.render.fix import render_fix

    assert "invalid: invalid edit: main.py:7" in render_fix(result)


def test_a_failed_run_of_the_fixed_copy_shows_its_stderr_and_blames_the_edit_it_names(tmp_path: Path) -> None:
    root = _project(tmp_path)
    edit = _settings_edit(root)  # inserts lines 1-2 of main.py
    tail = ('Traceback (most recent call last):\n  File "/tmp/warp-compile-fix-x/fix1/main.py", line 2, in <module>\n'
            "    wp.config.enable_backward = False\nAttributeError: module 'warp.config' has no attribute 'x'")
    mock = Mock({"original": {"elapsed": SLOW}, "fix1": {"elapsed": FAST, "fail": True, "stderr": tail}})
    d = _diagnosis(root, [_finding("CS-10", [edit], applicability="automatic")])
    result, _ = run_fix(["python", "main.py"], root, FixOptions(rounds=2, until_decided=False), diagnosis=d,
                        engine=mock.engine())
    c = result.candidates[0]
    assert not c.improved
    b = c.behaviour
    assert b is not None and not b.ok and "run_failed" in b.flags
    assert b.error_tail[-1].startswith("AttributeError") and len(b.error_tail) <= 6
    assert b.cause.startswith("the tool's own edit caused it") and "main.py:2" in b.cause
    assert "exited with an error in a measured run (exit code 1: AttributeError" in b.note
    assert "the fixed copy" in b.note and "agent" not in b.note
    from warp_compile.probe.render.fix import render_fix

    text = render_fix(result)
    assert "failed run: the tool's own edit caused it" in text and "| AttributeError" in text
    # an error the edit's lines are not named in: the original ran fine, so the edit is the one difference
    other = tail.replace("/fix1/main.py\", line 2", "/fix1/lib.py\", line 1")
    mock = Mock({"original": {"elapsed": SLOW}, "fix1": {"elapsed": FAST, "fail": True, "stderr": other}})
    result, _ = run_fix(["python", "main.py"], root, FixOptions(rounds=2, until_decided=False), diagnosis=d,
                        engine=mock.engine())
    cause = result.candidates[0].behaviour.cause  # type: ignore[union-attr]
    assert cause.startswith("the original ran fine on the same command and only the edited copy failed")


def test_write_writes_automatic_fixes_only_and_says_what_it_held_back(tmp_path: Path) -> None:
    """ruff's --unsafe-fixes: a proven review fix is written only with the flag; the result names it otherwise."""
    root = _project(tmp_path)
    before = _snapshot(root)
    review = _settings_edit(root)
    mock = Mock({"original": {"elapsed": SLOW}, "fix1": {"elapsed": FAST}})
    d = _diagnosis(root, [_finding("CS-12", [review], applicability="review", review="a trade: re-measure")])
    result, _ = run_fix(["python", "main.py"], root, FixOptions(write=True, min_rounds=4), diagnosis=d,
                        engine=mock.engine())
    assert result.candidates[0].improved and result.written == [] and _snapshot(root) == before
    (h,) = result.held_back
    assert h.key == "CS-12" and h.applicability == "review"
    assert h.reason.startswith("CS-12 improved but is rated review: rerun with --unsafe-fixes to write it")
    assert "re-measure" in h.reason and "held back" in result.summary
    from warp_compile.probe.render.fix import render_fix

    assert "held back: CS-12 improved but is rated review" in render_fix(result)
    mock = Mock({"original": {"elapsed": SLOW}, "fix1": {"elapsed": FAST}})
    result, _ = run_fix(["python", "main.py"], root, FixOptions(write=True, unsafe_fixes=True, min_rounds=4),
                        diagnosis=d, engine=mock.engine())
    assert result.written == ["main.py"] and result.held_back == []


def test_a_combination_with_a_review_part_is_review_and_the_automatic_fix_alone_is_written(tmp_path: Path) -> None:
    root = _project(tmp_path)
    a = _settings_edit(root)
    b = replace_lines(SourceView(root), "lib.py", 1, 1, "X = 1  # same\n")
    assert b is not None
    mock = Mock({"original": {"elapsed": SLOW}, "fix1": {"elapsed": FAST}, "fix2": {"elapsed": FAST},
                 "combination": {"elapsed": [900.0, 905.0, 895.0, 902.0]}})
    d = _diagnosis(root, [_finding("CS-10", [a], applicability="automatic"),
                          _finding("CS-12", [b], applicability="review")])
    result, _ = run_fix(["python", "main.py"], root, FixOptions(write=True, min_rounds=4), diagnosis=d,
                        engine=mock.engine())
    assert result.combination is not None and result.combination.improved
    assert result.combination.applicability == "review"
    assert result.applied == ["CS-10"] and result.written == ["main.py"]
    assert {h.key for h in result.held_back} == {"CS-12", "CS-10+CS-12"}
    # a dry run measures the same and says what --write would hold back
    assert to_write(result) == (["CS-10"], [a]) and to_write(result, unsafe_fixes=True)[0] == ["CS-10", "CS-12"]


def test_diagnose_diff_names_each_finding_without_an_edit_and_why(tmp_path: Path) -> None:
    from warp_compile.cli.cmd_diagnose import diff_text

    root = _project(tmp_path)
    findings = [_finding("CS-10", [_settings_edit(root)], applicability="automatic"),
                _finding("CS-9", applicability="manual", review="no edit: the factory runs after the first load"),
                _finding("CS-1", upstream=UpstreamReport(distribution="lib"))]
    text = diff_text(_diagnosis(root, findings))
    assert "# CS-10 CS-10 title [automatic]\n--- a/main.py" in text
    assert "# findings without an edit:\n" in text
    assert "# CS-9 CS-9 title: manual: no edit: the factory runs after the first load\n" in text
    assert "# CS-1 CS-1 title: the construct is a dependency's" in text
    only = diff_text(_diagnosis(root, findings[1:]))
    assert only.startswith("# no finding has an edit:\n# CS-9") and "no finding has an edit\n" not in only
    assert diff_text(_diagnosis(root, [])) == "# no findings: nothing to edit\n"


def test_edited_spans_follow_the_lines_an_edit_wrote() -> None:
    from warp_compile.probe.fix.checks import edited_spans, failure_cause

    add = Edit(file="m.py", start_line=2, end_line=1, new="import warp as wp\nwp.config.x = 1\n")
    drop = Edit(file="m.py", start_line=5, end_line=6, old="import warp as wp\n\n", new="")
    assert edited_spans([drop, add]) == {"m.py": [(2, 3), (7, 7)]}
    site = '  File "/venv/lib/python3.11/site-packages/pkg/m.py", line 3, in <module>\nValueError: x'
    assert failure_cause(site, [add], original_ok=False).startswith("the original failed too")


def _measured(key: str, verdict: str, saving: float, edits: list, on_top_of: str | None = None):
    from warp_compile.probe.models.fix import Behaviour, CandidateFix

    c = CandidateFix(key=key, mechanisms=[key.split("@")[0]], applicability="review", edits=edits, status="measured",
                     verdict=verdict, saving_ms=saving, behaviour=Behaviour(ok=True), on_top_of=on_top_of)
    c.improved = verdict == "IMPROVED"
    return c


def test_a_stack_proven_on_an_undecided_fix_writes_both_layers_and_nothing_else_does(tmp_path: Path) -> None:
    """goal_kernel_swap's plan: CS-9 alone saves little and ends INCONCLUSIVE; CS-12 on the tree it leaves is
    measured against the original, so its IMPROVED covers both layers."""
    from warp_compile.probe.fix.policy import layers_to_write, tentative_base
    from warp_compile.probe.models.fix import FixResult

    root = _project(tmp_path)
    a = _settings_edit(root)
    b = replace_lines(SourceView(root), "lib.py", 1, 1, "X = 1  # same\n")
    assert b is not None
    first = _measured("CS-9", "INCONCLUSIVE", 40.0, [a])
    stacked = _measured("CS-12@CS-9", "IMPROVED", 900.0, [b], on_top_of="CS-9")
    result = FixResult(candidates=[first], next_round=[stacked])
    assert tentative_base(result) is first
    assert layers_to_write(result, unsafe_fixes=True) == (["CS-9", "CS-12@CS-9"], [[a], [b]])
    assert layers_to_write(result) is None  # both review-rated: not without --unsafe-fixes
    assert "1 found on the tree CS-9 leaves (undecided alone), 1 saving more on top (CS-12@CS-9)" in summarize(result)
    # the stack undecided: nothing; the base pointing the wrong way or changing behaviour: no base at all
    stacked.improved, stacked.verdict = False, "INCONCLUSIVE"
    assert to_write(result, unsafe_fixes=True) == ([], [])
    stacked.improved, stacked.verdict = True, "IMPROVED"
    first.saving_ms = -5.0
    assert tentative_base(result) is None and layers_to_write(result, unsafe_fixes=True) is None
    first.saving_ms, first.behaviour.ok = 40.0, False
    assert tentative_base(result) is None
    # a proven first-round fix is the base, never an undecided one
    first.behaviour.ok = True
    proven = _measured("CS-1", "IMPROVED", 300.0, [a])
    result.candidates.append(proven)
    assert tentative_base(result) is None and layers_to_write(result, unsafe_fixes=True) is None


# ------------------------------------------------------------------------------------------------ generate and test


def test_a_findings_other_realisations_are_measured_beside_it_and_only_the_best_is_written(tmp_path: Path) -> None:
    """Generate and test (issue 39): a finding whose plan can be realised more than one way carries the others as
    `alternatives`; fix measures each on the same baseline (at most MAX_ALTERNATIVES), keeps the one that saves most
    among those proven, never combines two realisations of one finding, and writes only the winner."""
    from warp_compile.probe.fix.policy import MAX_ALTERNATIVES
    from warp_compile.probe.models.diagnosis import Alternative

    root = _project(tmp_path)
    own = replace_lines(SourceView(root), "lib.py", 1, 1, "X = 1  # memoized\n")
    hoisted = replace_lines(SourceView(root), "lib.py", 1, 1, "X = 1  # hoisted\n")
    neither = replace_lines(SourceView(root), "lib.py", 1, 1, "X = 1  # neither\n")
    extra = replace_lines(SourceView(root), "lib.py", 1, 1, "X = 1  # over the bound\n")
    assert own and hoisted and neither and extra
    alts = [Alternative(label="hoist", edits=[hoisted], applicability="automatic"),
            Alternative(label="from the record", edits=[neither], applicability="automatic"),
            Alternative(label="a third", edits=[extra], applicability="automatic")]
    d = _diagnosis(root, [_finding("CS-9", [own], applicability="automatic", alternatives=alts)])
    cands = plan(d)
    assert [c.key for c in cands] == ["CS-9", "CS-9/1", "CS-9/2"] and MAX_ALTERNATIVES == 2
    assert [c.alternative_of for c in cands] == [None, "CS-9", "CS-9"]
    # fix1 is the finding's own edits, fix2 the hoist (faster still), fix3 the run's record (no faster than before)
    mock = Mock({"original": {"elapsed": SLOW}, "fix1": {"elapsed": FAST},
                 "fix2": {"elapsed": [900.0, 905.0, 895.0, 902.0]}, "fix3": {"elapsed": SLOW, "same_work": True}})
    result, _ = run_fix(["python", "main.py"], root, FixOptions(write=True, min_rounds=4), diagnosis=d,
                        engine=mock.engine())
    by = {c.key: c for c in result.candidates}
    assert by["CS-9/1"].improved and not by["CS-9"].improved and "CS-9/1" in by["CS-9"].reason
    assert not by["CS-9/2"].improved and result.combination is None
    assert result.applied == ["CS-9/1"] and (root / "lib.py").read_text() == "X = 1  # hoisted\n"


def test_a_written_plan_carries_out_the_finding_that_shares_it_and_an_unwritten_one_carries_nothing(
        tmp_path: Path) -> None:
    root = _project(tmp_path)
    merge = replace_lines(SourceView(root), "lib.py", 1, 1, "X = 1  # merged\n")
    assert merge is not None
    header = _finding("CS-12", [merge], applicability="review")
    granular = _finding("CS-4", [merge], applicability="review", plan_with="CS-12")  # join_plans gave it CS-12's
    for fast, written in ((FAST, True), (SLOW, False)):
        (tmp_path / ("w" if written else "n")).mkdir()
        proj = _project(tmp_path / ("w" if written else "n"))
        mock = Mock({"original": {"elapsed": SLOW}, "fix1": {"elapsed": fast}})
        d = _diagnosis(proj, [header.model_copy(deep=True), granular.model_copy(deep=True)])
        result, _ = run_fix(["python", "main.py"], proj, FixOptions(write=True, unsafe_fixes=True, min_rounds=4),
                            diagnosis=d, engine=mock.engine())
        cs12, cs4 = result.candidates
        assert cs4.status == "skipped" and "one plan with CS-12" in cs4.reason  # measured once, as CS-12
        assert cs12.carries == ["CS-4"]
        if written:
            assert result.applied == ["CS-12"] and result.realised == ["CS-12", "CS-4"]
            assert "its plan carries out CS-4 too" in render_fix(result)
        else:
            assert result.applied == [] and result.realised == []


def test_equal_edits_of_one_mechanism_are_measured_once_but_carry_nothing(tmp_path: Path) -> None:
    root = _project(tmp_path)
    e = replace_lines(SourceView(root), "lib.py", 1, 1, "X = 3\n")
    assert e is not None
    d = _diagnosis(root, [_finding("CS-1", [e]), _finding("CS-1", [e])])  # no plan_with: a duplicate, not a plan
    cands = plan(d)
    assert cands[1].status == "skipped" and cands[0].carries == []
