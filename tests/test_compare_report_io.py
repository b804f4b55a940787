"""The report model's own I/O and its typed warnings: what compare, diagnose, eval and the server all read."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.test_compare import report
from warp_compile.cli import main
from warp_compile.probe.errors import ReportError, UsageError
from warp_compile.probe.models import Report, Warn, WarningCode, warn
from warp_compile.probe.models import warnings as render_warnings
from warp_compile.probe.render.report import render_report
from warp_compile.probe.render.summary import render_summary
from warp_compile.probe.summary import summarize


def test_save_then_load_gives_the_same_report_with_readable_warnings(tmp_path: Path) -> None:
    r = report()
    r.warnings = [warn(WarningCode.WARM_RECOMPILED, modules=2), warn(WarningCode.HOOK_ERROR, error="x: boom")]
    path = tmp_path / "r.json"
    r.save(path)
    data = json.loads(path.read_text())
    assert data["warnings"][0] == {
        "code": "warm_recompiled",
        "params": {"modules": 2},
        "message": "the warm re-run compiled 2 module(s) again: the cache is not reused between runs",
    }
    again = Report.load(path)
    assert again == r
    assert [w.code for w in again.warnings] == [WarningCode.WARM_RECOMPILED, WarningCode.HOOK_ERROR]


def test_save_into_a_missing_directory_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match=r"cannot write .*nowhere.*r\.json: No such file or directory$"):
        report().save(tmp_path / "nowhere" / "r.json")


def test_an_older_report_with_text_warnings_still_loads(tmp_path: Path) -> None:
    data = json.loads(report().model_dump_json())
    data["warnings"] = ["cold wall times vary a lot, said an older warp-compile"]
    path = tmp_path / "old.json"
    path.write_text(json.dumps(data))
    r = Report.load(path)
    assert [(w.code, w.message) for w in r.warnings] == [
        (WarningCode.TEXT, "cold wall times vary a lot, said an older warp-compile")
    ]
    assert "  warning: cold wall times vary a lot, said an older warp-compile" in render_report(r).splitlines()


@pytest.mark.parametrize(
    "content, line",
    [
        ('{"kind": "warp-compile-report", "schema_version": 2}', "schema_version 2; this warp-compile reads"),
        ("[1, 2]", "JSON array, not a warp-compile report object"),
        ('{"kind": "warp-compile-report"', "truncated JSON"),
    ],
)
def test_load_names_the_file_and_the_problem_in_one_line(tmp_path: Path, content: str, line: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(content)
    with pytest.raises(ReportError) as err:
        Report.load(path)
    assert str(err.value).startswith(f"{path}: ") and line in str(err.value) and "\n" not in str(err.value)


def test_every_warning_code_has_its_sentence() -> None:
    assert set(render_warnings._TEMPLATES) | set(render_warnings._FUNCTIONS) == set(WarningCode)
    assert not set(render_warnings._TEMPLATES) & set(render_warnings._FUNCTIONS)


def test_a_warning_with_params_its_sentence_does_not_know_still_renders() -> None:
    assert Warn(code=WarningCode.FEW_SAMPLES, params={"count": 1}).message == "few_samples (count=1)"


def test_summary_carries_the_codes_and_prints_the_sentences() -> None:
    r = report()
    r.warnings = [warn(WarningCode.CACHE_DIR_OUTSIDE, path="/elsewhere/cache")]
    s = summarize(r)
    assert [w.code for w in s.warnings] == [WarningCode.CACHE_DIR_OUTSIDE]
    assert "  warning: the app set its own kernel cache directory (/elsewhere/cache), outside" in render_summary(s)


@pytest.mark.parametrize(
    "samples, failed, expected",
    [(3, 3, True), (1, 1, True), (3, 2, False), (3, 0, False), (0, 0, False), (2, 3, True)],
)
def test_all_failed_is_every_requested_sample(samples: int, failed: int, expected: bool) -> None:
    r = report()
    r.samples, r.failed_samples = samples, failed
    assert r.all_failed is expected


def test_measure_of_a_command_that_always_fails_exits_1_with_one_reason(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "r.json"
    app = "import sys; sys.stderr.write('the app is broken\\n'); sys.exit(3)"
    argv = ["measure", "--samples", "1", "--quiet", "--json", str(out), "--cwd", str(tmp_path)]
    code = main([*argv, "--", sys.executable, "-c", app])
    err = capsys.readouterr().err
    r = Report.load(out)
    assert code == 1 and r.all_failed and r.failed_samples == 1
    assert err.startswith("warp-compile: error: every sample failed (") and "the app is broken" in err
    assert main(["diagnose", "--report", str(out)]) == 1  # the same test decides it for diagnose
