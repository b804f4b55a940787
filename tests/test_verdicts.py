"""Verdicts a CI gate can trust (issue 17), on synthetic reports: the headline decides, NO_EFFECT for identical work
under a change that can only act through what is compiled, drift-corrected saved-report compares, the gate, every
clock with its band, no negative clock, and the sandbox warning's place. The real-compile cases are in
tests/test_verdicts_real.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.test_compare import MockExecutor, _run, build, report, write
from warp_compile.cli import main
from warp_compile.probe import stats
from warp_compile.probe.compare import apply_gate, compare, compare_reports, estimate_drift
from warp_compile.probe.experiment import acts_through
from warp_compile.probe.models import CacheFacts, PchBuild, Report, WarningCode
from warp_compile.probe.models.comparison import EXIT_CODES
from warp_compile.probe.render.comparison import render_comparison


def scaled(r: Report, k: float) -> Report:
    """The same report taken on a machine `k` times slower: every time clock and build scaled."""
    upd: dict[str, object] = {}
    for f in ("compile_elapsed_ms", "cold_module_ms", "cold_wall_ms", "warm_wall_ms", "pch_ms", "native_compile_ms"):
        s = getattr(r, f)
        upd[f] = stats.stat_of([v * k for v in s.values]) if s.values else s
    upd["builds"] = [b.model_copy(update={"ms": b.ms * k}) for b in r.builds]
    upd["pch"] = [p.model_copy(update={"ms": p.ms * k}) for p in r.pch]
    upd["sample_results"] = [
        s.model_copy(update={"cold": s.cold.model_copy(update={"module_ms": s.cold.module_ms * k,
                                                               "pch_ms": s.cold.pch_ms * k})})
        for s in r.sample_results
    ]
    return r.model_copy(update=upd)


def with_header(r: Report, ms: float = 800.0) -> Report:
    runs = [s.model_copy(update={"cold": s.cold.model_copy(update={"pch_ms": ms})}) for s in r.sample_results]
    return r.model_copy(update={"pch": [PchBuild(ms=ms)], "pch_ms": stats.stat_of([ms, ms + 4, ms - 4]),
                                "sample_results": runs})


# ------------------------------------------------------------------------------------------------ the headline


def test_header_cost_moved_into_native_compile_does_not_turn_a_win_into_a_regression():
    # header on before (800 ms, outside every module), off after: the one module's native compile pays it instead
    before = with_header(report(elapsed=(2360.0, 2350.0, 2370.0), cold=(500.0, 505.0, 495.0),
                                native_compile_ms=stats.stat_of([450.0, 455.0, 445.0])))
    after = report(elapsed=(1493.0, 1500.0, 1490.0), cold=(1100.0, 1110.0, 1095.0),
                   native_compile_ms=stats.stat_of([1050.0, 1060.0, 1045.0]))
    c = compare(before, after, acts_through="compiled")
    assert c.verdict == "IMPROVED" and c.exit_code == 0, c.reason
    assert c.headline == "compile_elapsed" and c.clock("compile_elapsed").role == "headline"
    cold = c.clock("cold_module")
    assert cold.outcome == "regressed" and not cold.decisive and "header cost moved" in cold.left_out
    assert c.moved_costs == ["header cost moved into native compile: +600 ms of cold module work against -800 ms "
                             "of header (pch)"]
    text = render_comparison(c)
    assert "moved: header cost moved into native compile: +600 ms" in text
    assert c.clock("pch").role == "informational" and c.clock("native").role == "informational"


def test_header_moved_with_a_flat_headline_is_not_a_regression():
    before = with_header(report(elapsed=(2000.0, 2010.0, 1995.0), cold=(500.0, 505.0, 495.0)))
    after = report(elapsed=(2005.0, 1998.0, 2008.0), cold=(1300.0, 1305.0, 1295.0))
    assert compare(before, after).verdict == "INCONCLUSIVE"


def test_headline_win_sets_aside_a_secondary_clock_that_moved_the_other_way():
    # changed work: cold module work rose (say, one bigger module) while what the user waits for fell
    before = report(elapsed=(3000.0, 3010.0, 2995.0), cold=(900.0, 905.0, 895.0))
    after = report(elapsed=(2000.0, 2010.0, 1995.0), cold=(1200.0, 1205.0, 1195.0),
                   builds=[build("app", "cccc0001"), build("lib", "bbbbbbbb2222", seq=1)])
    c = compare(before, after)
    assert c.verdict == "IMPROVED", c.reason
    cold = c.clock("cold_module")
    assert not cold.decisive and "headline clock (compile elapsed) improved" in cold.left_out
    assert "cold module work rose" in c.reason and "not judged because" in c.reason


def test_every_clock_has_median_band_and_delta():
    before = with_header(report(native_compile_ms=stats.stat_of([700.0, 705.0, 695.0]),
                                codegen_ms=stats.stat_of([80.0, 81.0, 79.0])))
    after = with_header(report(native_compile_ms=stats.stat_of([690.0, 700.0, 695.0]),
                               codegen_ms=stats.stat_of([79.0, 80.0, 81.0])))
    c = compare(before, after)
    names = [k.name for k in c.clocks]
    assert names == ["compile_elapsed", "warm_repeat", "cold_module", "cold_wall", "warm_wall", "pch", "native",
                     "codegen"]
    for k in c.clocks:
        assert k.before.median is not None and k.after.median is not None and k.band_ms is not None, k.name
        assert k.delta_ms is not None, k.name
    data = json.loads(c.model_dump_json())
    assert {k["name"] for k in data["clocks"]} >= {"pch", "cold_wall"}


def test_a_negative_cold_minus_warm_is_never_shown_as_a_time():
    before = report(elapsed=(-40.0, -47.0, -52.0), warm_builds=[build("app")], warm_compiled=1,
                    warm=(900.0, 905.0, 895.0), cold=(900.0, 910.0, 905.0))
    after = report(elapsed=(1800.0, 1810.0, 1795.0), warm=(2.0, 2.0, 2.0))
    c = compare(before, after)
    el = c.clock("compile_elapsed")
    assert "not a compile time" in el.not_a_time and "47 ms longer than the cold run" in el.not_a_time
    table = render_comparison(c).split("Structure")[0]
    assert "-47" not in table and "-40" not in table
    row = next(line for line in table.splitlines() if line.strip().startswith("compile elapsed "))
    assert "n/a" in row


# ------------------------------------------------------------------------------------------------ NO_EFFECT


def test_identical_work_under_a_compiled_change_is_no_effect_whatever_the_timing():
    # the machine was busier in the AFTER arm: +13% on identical work
    slower = report(elapsed=(3400.0, 3420.0, 3390.0))
    c = compare(report(), slower, acts_through="compiled")
    assert c.verdict == "NO_EFFECT" and c.exit_code == 0 == EXIT_CODES["NO_EFFECT"]
    assert c.reason.startswith("no effect on what Warp compiles") and "compile elapsed 3,000 -> 3,400 ms" in c.reason
    assert render_comparison(c).startswith("NO_EFFECT: compile elapsed")
    for acts in ("scheduling", "unknown"):  # a scheduling change (or an unknown one) keeps its timing verdict
        assert compare(report(), slower, acts_through=acts).verdict == "REGRESSION"


def test_changed_work_or_invalid_is_never_no_effect():
    changed = report(builds=[build("app", "cccc0001"), build("lib", "bbbbbbbb2222", seq=1)])
    assert compare(report(), changed, acts_through="compiled").verdict != "NO_EFFECT"
    failed = report(failed=1)
    assert compare(report(), failed, acts_through="compiled").verdict == "INVALID"
    warm = report(warm_builds=[build("app")], warm_compiled=1)  # the cache stopped being reused: not identical
    assert compare(report(), warm, acts_through="compiled").verdict != "NO_EFFECT"


def test_settings_know_whether_they_act_through_what_is_compiled():
    assert acts_through({"enable_backward": False}) == "compiled"
    assert acts_through({"use_precompiled_headers": False, "mode": "release"}) == "compiled"
    assert acts_through({"load_module_max_workers": 4}) == "scheduling"
    assert acts_through({"enable_backward": False, "load_module_max_workers": 4}) == "scheduling"


def test_interleaved_identical_trees_under_a_compiled_change_stop_as_no_effect(tmp_path):
    mock = MockExecutor({"A": {"elapsed": [3000, 3010, 2990]}, "B": {"elapsed": [3300, 3350, 3310]}})
    c, _ = _run(mock, tmp_path, samples=4, warmup=0, until_decided=True, acts_through="compiled")
    assert c.verdict == "NO_EFFECT" and c.exit_code == 0
    assert c.interleaved.pairs == 4 and c.interleaved.settled == "NO_EFFECT" and c.interleaved.decided
    plain, _ = _run(mock, tmp_path, samples=4, warmup=0)
    assert plain.verdict == "REGRESSION"  # the default keeps today's timing verdict


# ------------------------------------------------------------------------------------------------ drift


def test_an_unchanged_app_on_a_slower_machine_is_not_a_change():
    base = with_header(report())
    loaded = scaled(base, 1.4)
    assert compare(base, loaded).verdict == "REGRESSION"  # the raw clocks: 40% "slower"
    c = compare_reports(base, loaded)
    assert c.verdict == "INCONCLUSIVE" and c.exit_code == 0, c.reason
    assert c.drift is not None and c.drift.trusted and c.drift.factor == pytest.approx(1.4, rel=1e-3)
    assert c.clock("compile_elapsed").drift_corrected
    assert c.clock("compile_elapsed").after_raw_median == pytest.approx(4200.0)
    assert WarningCode.DRIFT_CORRECTED in [w.code for w in c.warnings]
    assert "drift: factor 1.400" in render_comparison(c)


def _fixed(k: float = 1.0) -> Report:
    """The churn fix: module app built once instead of twice; lib and the header identical (the yardstick)."""
    return scaled(with_header(report(elapsed=(1500.0, 1510.0, 1495.0), cold=(950.0, 955.0, 945.0),
                                     builds=[build("app", "aaaa0002"), build("lib", "bbbb0001", seq=1)])), k)


def _churn() -> Report:
    return with_header(report(builds=[build("app", "aaaa0001"), build("app", "aaaa0002", seq=1),
                                      build("lib", "bbbb0001", seq=2)]))


def test_a_real_fix_measured_on_a_slower_machine_is_still_improved():
    c = compare_reports(_churn(), _fixed(1.4))
    assert c.verdict == "IMPROVED", c.reason
    d = c.drift
    assert d is not None and d.trusted and d.factor == pytest.approx(1.4, rel=1e-3)
    assert d.pieces == ["app", "lib", "the precompiled header"]
    el = c.clock("compile_elapsed")
    assert stats.stat_median(el.after) == pytest.approx(1500.0) and el.delta_pct == pytest.approx(-50.0)


def test_drift_that_flatters_a_change_is_taken_out():
    # before taken under load (yardstick 1.4x), after on a quiet machine: the raw -27% is the machine
    before = scaled(_churn(), 1.4)
    after = with_header(report(elapsed=(3050.0, 3060.0, 3045.0),
                               builds=[build("app", "aaaa0002"), build("lib", "bbbb0001", seq=1)]))
    assert compare(before, after).verdict == "IMPROVED"
    c = compare_reports(before, after)
    assert c.verdict == "INCONCLUSIVE", c.reason
    assert c.drift.factor == pytest.approx(1 / 1.4, rel=1e-3)


def test_no_yardstick_sets_a_timed_verdict_aside_and_says_what_to_do():
    after = report(elapsed=(1000.0, 1010.0, 990.0), builds=[build("app", "cccc0001"), build("lib", "dddd0002")])
    c = compare_reports(report(), after)
    assert c.verdict == "INCONCLUSIVE" and not c.drift.trusted and c.drift.factor is None
    assert c.reason.startswith("IMPROVED by the raw clocks only") and "--before-cwd" in c.reason
    assert WarningCode.DRIFT_UNCORRECTED in [w.code for w in c.warnings]
    assert "drift: not estimated: no yardstick" in render_comparison(c)


def test_drift_beyond_the_limit_is_not_corrected():
    d = estimate_drift(with_header(report()), scaled(with_header(report()), 3.0))
    assert d.factor == pytest.approx(3.0) and not d.trusted and "beyond" in d.reason


# ------------------------------------------------------------------------------------------------ the gate


def test_gate_fails_only_beyond_the_allowed_percentage():
    changed = [build("app", "cccc0001"), build("lib", "bbbbbbbb2222", seq=1)]
    slower = report(elapsed=(3400.0, 3420.0, 3390.0), builds=changed)  # +13.3%, lib unchanged: no drift
    lenient = compare_reports(report(), slower, max_regression_pct=20)
    assert lenient.verdict == "REGRESSION" and lenient.exit_code == 0 and lenient.gate.passed
    strict = compare_reports(report(), slower, max_regression_pct=5)
    assert strict.exit_code == 1 and not strict.gate.passed and "+13.3%" in strict.gate.reason
    invalid = apply_gate(compare(report(), report(failed=1)), 50)
    assert invalid.exit_code == 1 and not invalid.gate.passed


def test_gate_on_the_command_line(tmp_path: Path, capsys):
    changed = [build("app", "cccc0001"), build("lib", "bbbbbbbb2222", seq=1)]
    base = write(tmp_path / "base.json", report())
    slower = write(tmp_path / "pr.json", report(elapsed=(3400.0, 3420.0, 3390.0), builds=changed))
    assert main(["compare", str(base), str(slower), "--max-regression", "20"]) == 0
    assert "gate --max-regression 20%: passed" in capsys.readouterr().out
    assert main(["compare", str(base), str(slower), "--max-regression", "5", "--json", "-"]) == 1
    assert json.loads(capsys.readouterr().out)["gate"]["passed"] is False
    assert main(["compare", str(base), str(slower), "--max-regression", "-3"]) == 2
    assert capsys.readouterr().err.count("\n") == 1


def test_acts_through_flag_on_saved_reports(tmp_path: Path, capsys):
    a = write(tmp_path / "a.json", report())
    b = write(tmp_path / "b.json", report(elapsed=(3400.0, 3420.0, 3390.0)))
    assert main(["compare", str(a), str(b), "--acts-through", "compiled"]) == 0
    assert capsys.readouterr().out.startswith("NO_EFFECT")


# ------------------------------------------------------------------------------------------------ the sandbox


def test_a_cache_dir_under_the_sandbox_temp_root_is_not_outside_the_sandbox(tmp_path: Path):
    root = tmp_path / "warp-compile-abc"
    inside = CacheFacts(kernel_cache_dir=str(root / "tmp" / "tmpq1" / "kernels"),
                        sandbox_cache_dir=str(root / "warp-cache"), left_sandbox=True)
    assert inside.left_sandbox and not inside.outside_sandbox
    outside = CacheFacts(kernel_cache_dir=str(tmp_path / "proj" / ".kernels"),
                         sandbox_cache_dir=str(root / "warp-cache"), left_sandbox=True)
    assert outside.outside_sandbox
    r = report(cache=inside)
    assert WarningCode.CACHE_LEFT_SANDBOX not in [w.code for w in compare(r, r).warnings]
    r = report(cache=outside)
    assert WarningCode.CACHE_LEFT_SANDBOX in [w.code for w in compare(r, r).warnings]
