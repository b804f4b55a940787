"""The eval scorer, the behaviour check, the fixture manifest and the CLI around them (fast: nothing is measured)."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

from warp_compile.cli import main
from warp_compile.evals import manifest
from warp_compile.evals.models import Answer, AnswerFinding, AnswerLocation, CaseResult, FixScore, Reference
from warp_compile.evals.scorer import case_score, fix_credit, load_cases, score_diagnosis
from warp_compile.probe.fix.behaviour import ArmRuns, app_lines, first_difference, judge
from warp_compile.probe.models.diagnosis import normalize_mechanism

FIXTURES = Path(__file__).resolve().parents[1] / "evals" / "fixtures"


def _case(cid: str):  # type: ignore[no-untyped-def]
    return next(c for c in load_cases(FIXTURES) if c.id == cid)


def _answer(*findings: tuple[str, list[tuple[str, int]]]) -> Answer:
    return Answer(findings=[AnswerFinding(mechanism=m, locations=[AnswerLocation(file=f, line=n) for f, n in locs])
                            for m, locs in findings])


def _reference_answer(case) -> Answer:  # type: ignore[no-untyped-def]
    return _answer(*[(m, [(x.file, x.line) for x in case.expected.locations if x.mechanism == m])
                     for m in case.expected.mechanisms])


def test_every_case_scores_its_own_reference_answer_at_one_and_an_empty_answer_by_kind():
    cases = load_cases(FIXTURES)
    assert len(cases) >= 17
    for case in cases:
        assert score_diagnosis(case.expected, _reference_answer(case)).score == 1.0, case.id
        empty = score_diagnosis(case.expected, Answer()).score
        assert empty == (1.0 if case.kind == "negative" else 0.0), case.id
        assert case.expected_output and case.launches is not None, f"{case.id}: record_outputs not run"


@pytest.mark.parametrize("raw", ["CS-3", "cs-3", "CS3", "3", "cs 3", "CS-03"])
def test_mechanism_ids_are_normalised(raw):
    assert normalize_mechanism(raw) == "CS-3"
    case = _case("particle_prep")
    loc = case.expected.locations[0]
    assert score_diagnosis(case.expected, _answer((raw, [(loc.file, loc.line)]))).score == 1.0


def test_a_location_on_every_third_line_is_imprecise():
    case = _case("particle_prep")
    spam = [(str(p.relative_to(case.project)), n) for p in sorted(case.project.rglob("*.py"))
            for n in range(1, len(p.read_text().splitlines()) + 1, 3)]
    d = score_diagnosis(case.expected, _answer(("CS-3", spam)))
    assert d.location_recall == 1.0 and d.location_precision < 0.1
    assert d.score < 0.6
    wrong_line = score_diagnosis(case.expected, _answer(("CS-3", [(case.expected.locations[0].file, 90)])))
    assert wrong_line.location_recall == 0 and wrong_line.score == 0.5


def test_false_positive_costs_precision_and_optional_mechanisms_cost_nothing():
    case = _case("particle_prep")
    loc = case.expected.locations[0]
    d = score_diagnosis(case.expected, _answer(("CS-3", [(loc.file, loc.line)]), ("CS-1", [("a.py", 1)])))
    assert d.false_positives == ["CS-1"] and d.precision == 0.5 and d.score < 1.0
    clean = _case("wave_step")
    assert "CS-12" in clean.expected.optional  # knowledge/CS-12.md applies_when: one small module per process
    assert score_diagnosis(clean.expected, _answer(("CS-12", [("wave_step/__main__.py", 1)]))).score == 1.0
    assert score_diagnosis(clean.expected, _answer(("CS-1", [("wave_step/__main__.py", 1)]))).score < 0.5


def test_either_accepted_site_of_field_forward_counts():
    case = _case("heat_field")
    for site in [("heat_field/__main__.py", 1), ("heat_field/kernels.py", 3)]:
        assert score_diagnosis(case.expected, _answer(("CS-10", [site]))).score == 1.0, site
    assert score_diagnosis(case.expected, _answer(("CS-10", [("heat_field/solver.py", 3)]))).score == 0.5


def test_version_overrides_are_applied_by_the_scorer():
    case = _case("mesh_loader")
    old = case.expected_for("1.10.1")
    assert old.mechanisms == [] and "CS-12" in old.optional
    assert case.expected_for("1.19.0").mechanisms == ["CS-12"]
    assert case.expected_for("1.100.0").mechanisms == ["CS-12"]  # "1.10" is a version prefix, not a string prefix
    assert score_diagnosis(old, Answer()).score == 1.0
    assert score_diagnosis(case.expected_for("1.19.0"), Answer()).score == 0.0


def test_fix_credit_rules():
    fix_case, negative = _case("particle_prep"), _case("wave_step")
    assert fix_credit(fix_case, FixScore(changed=False)) == 0.0
    assert fix_credit(negative, FixScore(changed=False)) == 1.0
    assert fix_credit(fix_case, FixScore(changed=True, verdict="IMPROVED", behaviour_ok=False)) == 0.0
    assert fix_credit(fix_case, FixScore(changed=True, verdict="REGRESSION")) == 0.0
    assert fix_credit(fix_case, FixScore(changed=True, verdict="UNVERIFIED")) == 0.0
    half = FixScore(changed=True, verdict="IMPROVED", saving_pct=3.0, reference_saving_pct=6.0)
    assert fix_credit(fix_case, half) == 0.5
    reliable = fix_case.model_copy(update={"reference": Reference(verdict="IMPROVED", saving_pct=6.0)})
    noisy = fix_case.model_copy(update={"reference": Reference(verdict="INCONCLUSIVE", saving_pct=0.4)})
    assert fix_credit(reliable, FixScore(changed=True, verdict="INCONCLUSIVE")) == 0.0
    assert fix_credit(noisy, FixScore(changed=True, verdict="INCONCLUSIVE")) is None
    # an unchanged copy: no credit where the reference reliably improves, not judged where it does not
    assert fix_credit(reliable, FixScore(changed=False)) == 0.0
    assert fix_credit(noisy, FixScore(changed=False)) is None
    slower = fix_case.model_copy(update={"reference": Reference(verdict="REGRESSION", saving_pct=-2.1)})
    assert fix_credit(slower, FixScore(changed=True, verdict="REGRESSION")) is None  # as the reference: not judged
    assert fix_credit(reliable, FixScore(changed=True, verdict="REGRESSION")) == 0.0
    r = CaseResult(id="x", flags=["fixtures_modified"])
    r.diagnosis.score = 1.0
    assert case_score(r) == 0.0


def test_app_lines_drop_warp_banner_and_module_lines():
    out = ("Warp 1.19.0 initialized:\n   Devices:\n     \"cpu\"      : \"CPU\"\n"
           "Module a.b 6d3cdec load on device 'cpu' took 3978.15 ms  (compiled)\nmean radius 1.24437  max 1.4\n")
    assert app_lines(out) == ["mean radius 1.24437  max 1.4"]


def test_output_tolerance_passes_rounding_and_fails_gutted_results():
    want = ["mean radius 1.24437  max speed 1.41016"]
    assert first_difference(want, ["mean radius 1.24438  max speed 1.41016"]) is None
    assert first_difference(want, ["mean radius 0.00000  max speed 0.00000"])
    assert first_difference(want, [])
    assert first_difference(["drift 9.13e-08"], ["drift 9.14e-08"]) is None
    assert first_difference(["drift 9.13e-08"], ["drift 0.0"])


def test_behaviour_judge_flags_removed_warp_and_changed_output():
    before = ArmRuns(outputs=[["x 1.0"]], launches=[10], exit_codes=[0])
    ok, flags, _ = judge(["x 1.0"], before, ArmRuns(outputs=[["x 1.0"]], launches=[0], exit_codes=[0]))
    assert not ok and "warp_removed" in flags
    ok, flags, _ = judge(["x 1.0"], before, ArmRuns(outputs=[["x 0.0"]], launches=[10], exit_codes=[0]))
    assert not ok and "output_changed" in flags
    assert judge(None, before, ArmRuns(outputs=[["x 1.0"]], launches=[10], exit_codes=[0]))[0]


def test_manifest_matches_the_shipped_fixtures():
    shipped = manifest.load(FIXTURES)
    assert shipped, "evals/fixtures/MANIFEST.json missing: python -m warp_compile.evals.manifest --write"
    assert manifest.differences(shipped, manifest.build(FIXTURES)["files"]) == []


def _private_suite(tmp_path: Path, *ids: str) -> Path:
    root = tmp_path / "suite"
    for cid in ids:
        shutil.copytree(FIXTURES / cid, root / cid, ignore=shutil.ignore_patterns("__pycache__"))
    assert manifest.main(["--root", str(root), "--write"]) == 0
    return root


def test_null_agent_is_not_measured_and_scores_by_kind(tmp_path, capsys):
    suite = _private_suite(tmp_path, "particle_prep", "wave_step")
    out = tmp_path / "card.json"
    md = tmp_path / "card.md"
    code = main(["eval", "--cases", str(suite), "--agent", "builtin:null", "--quiet", "--json", str(out),
                 "--markdown", str(md), "--out", str(tmp_path / "runs")])
    card = json.loads(out.read_text())
    assert code == 0 and card["agent"] == "builtin:null"
    by_id = {c["id"]: c for c in card["cases"]}
    assert by_id["particle_prep"]["score"] == 0.0 and by_id["particle_prep"]["fix"]["credit"] == 0.0
    assert by_id["wave_step"]["score"] == 1.0 and by_id["wave_step"]["fix"]["verdict"] is None
    assert card["score"] == 0.5
    assert "| particle_prep | fix | 0.00 |" in md.read_text()
    assert (tmp_path / "runs" / "particle_prep" / "trial-1" / "result.json").is_file()


def test_an_agent_that_edits_the_suite_is_flagged_and_scored_zero(tmp_path, capsys, monkeypatch):
    suite = _private_suite(tmp_path, "particle_prep")
    monkeypatch.setenv("CHEAT_SUITE", str(suite))
    agent = FIXTURES.parent / "agents" / "cheat_tamper.py"
    out = tmp_path / "card.json"
    assert main(["eval", "--cases", str(suite), "--quiet", "--json", str(out), "--", sys.executable, str(agent)]) == 1
    case = json.loads(out.read_text())["cases"][0]
    assert case["flags"] == ["fixtures_modified"] and case["score"] == 0.0 and case["fix"] is None
    # the edit persists: the next run is refused before the agent starts
    assert main(["eval", "--cases", str(suite), "--quiet", "--json", str(out), "--agent", "builtin:oracle"]) == 1
    again = json.loads(out.read_text())["cases"][0]
    assert again["flags"] == ["fixtures_modified"] and again["score"] == 0.0


def test_list_json_contract_and_shards(tmp_path, capsys):
    out = tmp_path / "list.json"
    assert main(["eval", "--list", "--json", str(out)]) == 0
    rows = json.loads(out.read_text())["cases"]
    assert {"id", "kind", "expected_mechanisms", "prompt"} <= set(rows[0])
    assert all("WARP_COMPILE_ANSWER" in r["prompt"] for r in rows)
    capsys.readouterr()
    assert main(["eval", "--contract"]) == 0
    assert '"findings"' in capsys.readouterr().out
    ids = {r["id"] for r in rows}
    shards = []
    for i in (1, 2, 3):
        assert main(["eval", "--list", "--shard", f"{i}/3", "--json", str(out)]) == 0
        shards.append({r["id"] for r in json.loads(out.read_text())["cases"]})
    assert set().union(*shards) == ids and sum(len(s) for s in shards) == len(ids)


def test_merge_joins_shard_cards_and_refuses_overlaps(tmp_path, capsys):
    suite = _private_suite(tmp_path, "particle_prep", "wave_step")
    cards = []
    for i in (1, 2):
        card = tmp_path / f"c{i}.json"
        main(["eval", "--cases", str(suite), "--agent", "builtin:null", "--quiet", "--shard", f"{i}/2",
              "--json", str(card)])
        cards.append(str(card))
    merged = tmp_path / "merged.json"
    assert main(["eval", "merge", *cards, "--json", str(merged)]) == 0
    data = json.loads(merged.read_text())
    assert sorted(c["id"] for c in data["cases"]) == ["particle_prep", "wave_step"] and data["score"] == 0.5
    capsys.readouterr()
    assert main(["eval", "merge", cards[0], cards[0]]) == 2
    assert "more than one scorecard" in capsys.readouterr().err


@pytest.mark.parametrize("argv, message", [
    (["eval", "--case", "nope"], "unknown case nope"),
    (["eval", "--agent", "builtin:nope"], "unknown agent"),
    (["eval", "--shard", "3/2"], "--shard must be I/N"),
    (["eval", "--cases", "/nonexistent/suite"], "is not a directory"),
    (["eval", "merge"], "merge CARD.json"),
    (["eval", "merge", "/nonexistent.json"], "cannot read"),
])
def test_bad_input_is_a_one_line_error(argv, message, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("warp-compile: error:") and message in err and err.count("\n") == 1


def test_trials_give_each_case_a_mean_and_spread(tmp_path, capsys):
    suite = _private_suite(tmp_path, "wave_step")
    out = tmp_path / "card.json"
    assert main(["eval", "--cases", str(suite), "--agent", "builtin:null", "--quiet", "--trials", "2",
                 "--json", str(out)]) == 0
    card = json.loads(out.read_text())
    case = card["cases"][0]
    assert card["trials"] == 2 and card["trial_scores"] == [1.0, 1.0] and card["spread"] == 0.0
    assert [t["trial"] for t in case["trials"]] == [0, 1] and case["spread"] == 0.0


def test_must_keep_invocations_are_rerun_in_the_agents_copy(tmp_path):
    from warp_compile.evals.harness import _must_keep
    from warp_compile.evals.models import Case, Expected, MustKeep

    (tmp_path / "app.py").write_text("import sys\nprint('rebuilt' if '--rebuild' in sys.argv else 'plain')\n")
    case = Case(id="t", command=["python", "app.py"], expected=Expected(), must_keep=[
        MustKeep(command=["python", "app.py", "--rebuild"], expected_output=["rebuilt"]),
        MustKeep(command=["python", "app.py", "--rebuild"], expected_output=["plain"]),
    ])
    (ok1, _), (ok2, note) = _must_keep(case, tmp_path, 60)
    assert ok1 and not ok2 and "--rebuild" in note and "expected 'plain'" in note


@pytest.mark.parametrize("case", ["heat_field", "batch_signals", "plugin_filters"])
def test_the_saving_is_read_on_a_clock_that_moved(case):
    from warp_compile.evals.harness import saving
    from warp_compile.probe.models.comparison import Comparison

    golden = Path(__file__).resolve().parent / "golden" / case / "compare.json"
    comparison = Comparison.model_validate(json.loads(golden.read_text()))
    pct, clock = saving(comparison)
    moved = [c for c in comparison.clocks if c.judged == "improved"]
    if moved:
        assert clock in {c.name for c in moved} and pct is not None and pct > 0
    else:
        assert clock == comparison.headline or pct is None


def test_a_relative_script_runs_and_an_agent_that_delivers_nothing_scores_zero(tmp_path, capsys, monkeypatch):
    suite = _private_suite(tmp_path, "wave_step")
    (tmp_path / "agents").mkdir()
    (tmp_path / "agents" / "crash.py").write_text("import sys\nsys.exit(3)\n")
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "card.json"
    main(["eval", "--cases", str(suite), "--quiet", "--json", str(out), "--", sys.executable, "agents/crash.py"])
    case = json.loads(out.read_text())["cases"][0]
    assert case["trials"][0]["agent"]["exit_status"] == 3  # found from here (python says 2 for a missing file)
    # no answer and no change on a case where "nothing to fix" is right: that was not a decision, so no credit
    assert not case["fix"]["changed"] and case["fix"]["credit"] == 0.0 and case["score"] == 0.0


def test_a_version_override_can_leave_nothing_to_fix():
    case = _case("mesh_loader")
    assert case.kind_for("1.19.0") == "fix" and case.kind_for("1.10.1") == "negative"
    assert fix_credit(case, FixScore(changed=False), "1.10.1") == 1.0
    assert fix_credit(case, FixScore(changed=False), "1.19.0") == 0.0


def test_an_original_that_prints_otherwise_here_sets_the_behaviour_to_keep():
    """Another Warp version can round a chaotic simulation differently: the original's own, repeatable output on
    this machine is what the agent's copy must keep, and the recording's staleness is only noted."""
    here = ArmRuns(outputs=[["flow 1.25"], ["flow 1.25"]], launches=[10, 10], exit_codes=[0, 0])
    ok, flags, note = judge(["flow 0.50"], here, ArmRuns(outputs=[["flow 1.25"]], launches=[10], exit_codes=[0]))
    assert ok and flags == ["baseline_output_mismatch"] and "held to the original's output" in note
    ok, flags, _ = judge(["flow 0.50"], here, ArmRuns(outputs=[["flow 0.50"]], launches=[10], exit_codes=[0]))
    assert not ok and "output_changed" in flags
    # a field the original itself prints differently run to run is no behaviour; the stable fields still decide
    wobbly = ArmRuns(outputs=[["flow 1.25", "mass 2.0"], ["flow 3.00", "mass 2.0"]], launches=[10, 10],
                     exit_codes=[0, 0])
    ok, flags, note = judge(["flow 0.50", "mass 2.0"], wobbly,
                            ArmRuns(outputs=[["flow 9.75", "mass 2.0"]], launches=[10], exit_codes=[0]))
    assert ok and "line 1 field 2" in note, note
    ok, flags, _ = judge(["flow 0.50", "mass 2.0"], wobbly,
                         ArmRuns(outputs=[["flow 1.25", "mass 2.5"]], launches=[10], exit_codes=[0]))
    assert not ok and "output_changed" in flags


def test_an_entry_point_replaced_by_prints_is_caught_and_no_reference_fix_is():
    from warp_compile.probe.fix.behaviour import entry_bypassed

    def tree(root: Path) -> dict[str, bytes]:
        return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*.py")}

    checked = 0
    for case in load_cases(FIXTURES):
        original = tree(FIXTURES / case.id / "project")
        if (FIXTURES / case.id / "fixed").is_dir():
            assert entry_bypassed(case.command, original, tree(FIXTURES / case.id / "fixed")) is None, case.id
        pkg = case.command[2]
        if entry_bypassed(case.command, original, {**original, f"{pkg}/__main__.py": b"print('x 1.0')\n"}):
            checked += 1
    assert checked >= 15  # every case whose entry module imports its package
    cmd = ["python", "-m", "ledger_stats"]
    original = tree(FIXTURES / "ledger_stats" / "project")
    assert "no longer imports anything of ledger_stats" in entry_bypassed(
        cmd, original, {**original, "ledger_stats/__main__.py": b"print('total 3')\n"})
    assert entry_bypassed(["python", "app.py"], original, {}) is None  # only python -m PACKAGE is judged
