"""`warp-compile diagnose` through the CLI entry: text and JSON, --report, bad input, exit codes."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.conftest import FIXTURES
from warp_compile.cli import main
from warp_compile.probe.models import Build, KernelInfo, Report, RunResult, SampleResult, Trigger


def _report(cwd: str, failed: bool = False) -> Report:
    def b(seq: int, h: str, keys: list[str], ms: float) -> Build:
        return Build(
            seq=seq,
            module="app.kernels",
            hash=h * 64,
            hash_short=h * 7,
            device="cpu",
            block_dim=1,
            status="compiled",
            ms=ms,
            kernels=[KernelInfo(key=k, hash=k, file=f"{cwd}/app/kernels.py", line=10 + i) for i, k in enumerate(keys)],
            options={"fast_math": "False"},
            trigger=Trigger(file=f"{cwd}/app/run.py", line=5, function="go", api="launch"),
        )

    ok = not failed
    cold = RunResult(phase="cold", wall_ms=900, exit_code=0 if ok else 1, compiled=2)
    r = Report(
        command=["python", "-m", "app"],
        cwd=cwd,
        samples=1,
        failed_samples=0 if ok else 1,
        builds=[b(1, "a", ["k1"], 300.0), b(2, "b", ["k1", "k2"], 320.0)] if ok else [],
        sample_results=[SampleResult(index=0, ok=ok, cold=cold, failure=None if ok else "cold run exited with 1")],
    )
    r.cold_module_ms.median = 620.0
    r.hook.mode = "wrap"
    return r


def _write(tmp_path: Path, report: Report, name: str = "r.json") -> str:
    p = tmp_path / name
    p.write_text(report.model_dump_json(), encoding="utf-8")
    return str(p)


def test_report_text_to_stdout(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _write(tmp_path, _report(str(tmp_path)))
    assert main(["diagnose", "--report", path]) == 0
    out, err = capsys.readouterr()
    assert "1. CS-1" in out and "Why modules loaded again" in out
    assert "kernel added: k2" in out


def test_report_json_file_and_stdout(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _write(tmp_path, _report(str(tmp_path)))
    dest = tmp_path / "out" / "d.json"
    dest.parent.mkdir()
    assert main(["diagnose", "--report", path, "--json", str(dest)]) == 0
    d = json.loads(dest.read_text())
    assert d["kind"] == "warp-compile-diagnosis" and d["findings"][0]["mechanism"] == "CS-1"
    assert d["hash_changes"][0]["causes"][0]["kind"] == "kernel_added"
    capsys.readouterr()
    assert main(["diagnose", "--report", path, "--json", "-"]) == 0
    out, err = capsys.readouterr()
    assert json.loads(out)["findings"][0]["mechanism"] == "CS-1"
    assert "1. CS-1" in err


def test_report_without_sources_still_diagnoses(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _write(tmp_path, _report("/nonexistent/project"))
    assert main(["diagnose", "--report", path, "--json", "-"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["source_root"] is None and [w["code"] for w in d["warnings"]] == ["no_source_scan"]


@pytest.mark.parametrize(
    ("content", "needle"),
    [("{not json", "JSON"), ('{"kind": "something-else"}', "not a warp-compile report"), ("", "empty")],
)
def test_bad_report_is_one_line_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str, needle: str
) -> None:
    p = tmp_path / "bad.json"
    p.write_text(content, encoding="utf-8")
    assert main(["diagnose", "--report", str(p)]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and err.startswith("warp-compile: error:")
    assert "bad.json" in err and needle in err


@pytest.mark.parametrize(
    "argv",
    [
        ["diagnose"],
        ["diagnose", "--report", "X.json", "--samples", "3"],
        ["diagnose", "--report", "X.json", "--", "python", "app.py"],
        ["diagnose", "--source", "/nonexistent/dir", "--", sys.executable, "-c", "pass"],
        ["diagnose", "--samples", "0", "--", sys.executable, "-c", "pass"],
        ["diagnose", "--report", "X.json", "--rebuild-limit", "5"],
    ],
)
def test_usage_errors_exit_2(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("warp-compile: error:")


@pytest.mark.parametrize("value", ["-1", "nan", "soon"])
def test_a_bad_rebuild_limit_is_one_line_and_exit_2(value: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["diagnose", f"--rebuild-limit={value}", "--", sys.executable, "-c", "pass"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--rebuild-limit" in err


def test_every_sample_failed_exits_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _write(tmp_path, _report(str(tmp_path), failed=True))
    assert main(["diagnose", "--report", path]) == 1
    out, err = capsys.readouterr()
    assert "Every sample failed" in out and "every sample failed" in err


@pytest.mark.slow
def test_saved_fixture_report(tmp_path: Path, measured, capsys: pytest.CaptureFixture[str]) -> None:  # type: ignore[no-untyped-def]
    path = _write(tmp_path, measured("particle_prep"))
    assert main(["diagnose", "--report", path, "--json", str(tmp_path / "d.json")]) == 0
    out = capsys.readouterr().out
    d = json.loads((tmp_path / "d.json").read_text())
    assert [f["mechanism"] for f in d["findings"]] == ["CS-3"]
    loc = d["findings"][0]["locations"][0]
    assert (loc["file"], loc["line"]) == ("particle_prep/stages.py", 47)
    assert "particle_prep/stages.py:47" in out


@pytest.mark.slow
def test_command_without_warp(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A command that never builds a Warp module: no findings, said plainly."""
    fixture = FIXTURES / "ledger_stats"
    if (fixture / "case.json").exists():
        case = json.loads((fixture / "case.json").read_text())
        cwd = fixture / "project"
        cmd = [sys.executable if c == "python" else c for c in case["command"]]
    else:
        cwd = tmp_path / "proj"
        cwd.mkdir()
        (cwd / "app.py").write_text("import json\nprint(json.dumps({'ok': True}))\n", encoding="utf-8")
        cmd = [sys.executable, "app.py"]
    dest = tmp_path / "d.json"
    assert main(["diagnose", "--quiet", "--cwd", str(cwd), "--json", str(dest), "--", *cmd]) == 0
    out = capsys.readouterr().out
    d = json.loads(dest.read_text())
    assert d["compiled_nothing"] is True and d["findings"] == []
    assert d["summary"].startswith("no Warp compilation observed")
    assert "no Warp compilation observed" in out


def test_cli_and_server_diagnose_a_saved_report_through_one_core_path() -> None:
    """`diagnose --report` (CLI) and the server's saved-report path both end in probe.diagnose.diagnose_sources: same
    report and sources in, the same diagnosis out, and the progress says what it is doing."""
    from tests.golden_render import FIXTURES, _load_report
    from warp_compile.probe.diagnose import diagnose_sources
    from warp_compile.probe.models import WarningCode
    from warp_compile.server.app import _diagnose_report

    golden = Path(__file__).resolve().parent / "golden" / "particle_prep"
    report = _load_report(golden / "project.report.json")
    source = FIXTURES / "particle_prep" / "project"
    seen: list[str] = []
    served = _diagnose_report(report, source, seen.append)
    core = diagnose_sources(report, source)
    assert served.model_dump() == core.model_dump()
    assert [f.mechanism for f in core.findings] == ["CS-3"]
    assert seen[0].startswith("scan: reading the source under") and seen[-1].startswith("rules:")
    unscanned = diagnose_sources(report, None)
    assert any(w.code == WarningCode.NO_SOURCE_SCAN for w in unscanned.warnings)
