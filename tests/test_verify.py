"""`diagnose --verify` through the fix engine, without processes: the mock executor of test_fix gives each copy its
"timings"; a measured fix sits next to its estimate, one with no effect says so and ranks by its measurement, and
one that regresses or changes the output is withdrawn with the evidence."""

from __future__ import annotations

from pathlib import Path

from tests.test_fix import FAST, SLOW, Mock, _diagnosis, _finding, _project, _settings_edit
from warp_compile.probe.fix.edits import SourceView, replace_lines
from warp_compile.probe.fix.verify import verify
from warp_compile.probe.render.diagnosis import render_text


def test_verify_measures_withdraws_and_ranks_by_measurement(tmp_path: Path) -> None:
    root = _project(tmp_path)
    src = SourceView(root)
    same = replace_lines(src, "lib.py", 1, 1, "X = 1  # no effect\n")
    worse = replace_lines(src, "lib.py", 1, 1, "X = 1  # slower\n")
    assert same is not None and worse is not None
    mock = Mock({
        "original": {"elapsed": SLOW},
        "fix1": {"elapsed": FAST},  # CS-10: improves
        "fix2": {"elapsed": SLOW},  # CS-11: no effect
        "fix3": {"elapsed": [6000.0, 6010.0, 5990.0, 6005.0]},  # CS-4: regresses
        "fix4": {"elapsed": FAST, "stdout": "total 0.0000\n"},  # CS-3: faster, but prints something else
    })
    d = _diagnosis(root, [
        _finding("CS-11", [same], applicability="review", estimated_saving_ms=5000.0),
        _finding("CS-10", [_settings_edit(root)], applicability="automatic", estimated_saving_ms=1400.0,
                 experiment={"enable_backward": False}),
        _finding("CS-4", [worse], applicability="review", estimated_saving_ms=900.0),
        _finding("CS-3", [_settings_edit(root)], applicability="review", estimated_saving_ms=800.0),
        _finding("CS-9", estimated_saving_ms=100.0),
    ])
    # order of the copies follows the diagnosis: fix1 is CS-11 here, so remap the profiles to the findings
    mock.profiles = {"original": mock.profiles["original"], "fix1": {"elapsed": SLOW}, "fix2": {"elapsed": FAST},
                     "fix3": mock.profiles["fix3"], "fix4": mock.profiles["fix4"]}
    # 4 samples per arm: with fewer, identical work that timed differently counts as noise (compare's thin-timing
    # rule), and the mock's arms all build the same modules
    out = verify(d, ["python", "main.py"], root, engine=mock.engine(), pairs=4)
    # measured 1,455 ms > estimated 100 ms (unmeasured) > measured no effect (0), whatever its estimate said
    assert [f.mechanism for f in out.findings] == ["CS-10", "CS-9", "CS-11"]
    cs10, cs9, cs11 = out.findings
    assert cs10.measured is not None and cs10.measured.verdict == "IMPROVED" and cs10.measured.pairs >= 2
    assert cs10.measured.saving_pct is not None and 0 < cs10.measured.saving_pct < 100  # a share of the before arm
    assert cs11.measured is not None and cs11.measured.verdict != "IMPROVED"
    assert "no effect" in cs11.measured.agreement
    assert cs9.measured is None  # no edit, no setting: nothing to run
    withdrawn = {w.finding.mechanism: w for w in out.withdrawn}
    assert set(withdrawn) == {"CS-4", "CS-3"}
    assert withdrawn["CS-4"].verdict == "REGRESSION" and "REGRESSION" in withdrawn["CS-4"].reason
    assert "behaviour" in withdrawn["CS-3"].reason
    assert out.verification is not None and out.verification.program_runs == 2 * len(mock.calls)
    text = render_text(out)
    assert "no effect" in text and "Withdrawn by --verify" in text and "applies  automatic" in text


def test_a_hook_only_experiment_runs_on_the_original_tree_with_the_setting(tmp_path: Path) -> None:
    root = _project(tmp_path)
    mock = Mock({"original": {"elapsed": SLOW}, "settings": {"elapsed": FAST}})
    d = _diagnosis(root, [_finding("CS-2", experiment={"keep_kernel_cache": True}, estimated_saving_ms=1000.0)])
    out = verify(d, ["python", "main.py"], root, engine=mock.engine())
    f = out.findings[0]
    assert f.measured is not None and f.measured.settings == {"keep_kernel_cache": True}
    assert any(name == "settings" for name, _ in mock.calls)


def test_an_undecided_saving_is_not_called_no_effect() -> None:
    """Under load the original's own spread can hold a verdict back while the interval lies wholly on the saving
    side (fem, 10 pairs: 1,808 ms saved, 1,271 to 2,409, spread ±1,817): that is undecided, not "no effect"."""
    from warp_compile.probe.fix.verify import agreement
    from warp_compile.probe.models.diagnosis import MeasuredSaving

    f = _finding("CS-10", estimated_saving_ms=1275.0)
    undecided = MeasuredSaving(settings={}, clock="compile_cpu", saving_ms=1808.0, band_ms=1817.0, saving_low_ms=1271.0,
                               saving_high_ms=2409.0, verdict="INCONCLUSIVE", pairs=10)
    text = agreement(f, undecided)
    assert "no effect" not in text and "undecided after 10 pairs" in text
    assert "1,271 ms to 2,409 ms" in text and "±1,817 ms" in text
    straddles = undecided.model_copy(update={"saving_low_ms": -300.0})
    assert agreement(f, straddles).startswith("measured: no effect (INCONCLUSIVE")


def test_a_paired_saving_is_the_centre_of_its_interval() -> None:
    """Paired samples: saving_ms is the pairs' mean, the centre its interval and share are about (the median move
    read 1,314 ms beside 1,054 to 2,434 on the fem example); unpaired: the medians' move, as before."""
    from types import SimpleNamespace

    from warp_compile.probe.fix.engine import _saved

    paired = SimpleNamespace(interval=SimpleNamespace(method="paired t", mean_ms=-1744.0), basis_before=None,
                             delta_ms=-1314.0, before=SimpleNamespace(median=10_000.0),
                             after=SimpleNamespace(median=8_686.0))
    assert _saved(paired) == 1744.0
    unpaired = SimpleNamespace(**{**vars(paired), "interval": SimpleNamespace(method="welch", mean_ms=-1744.0)})
    assert _saved(unpaired) == 1314.0
