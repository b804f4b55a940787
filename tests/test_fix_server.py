"""The MCP tool `fix` and the CLI front end on tiny projects that compile nothing: the result model arrives whole,
nothing is written, bad input is one line (the measured engine itself is covered in test_fix / test_fix_real)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from mcp import Client

from warp_compile.cli import main
from warp_compile.probe.models.fix import FixResult
from warp_compile.server.app import create_server

PY = sys.executable


def _tree(tmp_path: Path) -> Path:
    p = tmp_path / "proj"
    p.mkdir()
    (p / "quick.py").write_text("print('ok 1.5')\n")
    return p


def _snapshot(root: Path) -> dict[str, bytes]:
    return {q.relative_to(root).as_posix(): q.read_bytes() for q in sorted(root.rglob("*")) if q.is_file()}


@pytest.mark.anyio
async def test_mcp_fix_dry_run_returns_the_result_model_and_writes_nothing(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    proj = _tree(tmp_path)
    before = _snapshot(proj)
    async with Client(create_server([proj])) as client:
        res = await client.call_tool("fix", {"command": [PY, "quick.py"], "cwd": str(proj), "write": True,
                                             "unsafe_fixes": True})
        assert not res.is_error, res.content
        result = FixResult.model_validate(res.structured_content)
        bad = await client.call_tool("fix", {"command": [PY, "quick.py"], "cwd": str(tmp_path / "elsewhere")})
        assert bad.is_error and "\n" not in bad.content[0].text.strip()
    assert result.candidates == [] and result.written == [] and result.costs.diagnosis_runs == 2
    assert _snapshot(proj) == before
    assert not [d for d in tmp_path.iterdir() if d.name.startswith("warp-compile-")]


def test_cli_fix_json_and_bad_input(tmp_path: Path, capsys, monkeypatch) -> None:
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    proj = _tree(tmp_path)
    out = tmp_path / "fix.json"
    assert main(["fix", "--cwd", str(proj), "--json", str(out), "--quiet", "--", PY, "quick.py"]) == 0
    data = json.loads(out.read_text())
    assert data["kind"] == "warp-compile-fix" and data["written"] == []
    capsys.readouterr()
    assert main(["fix", "--pairs", "2", "--until-decided", "--", PY, "quick.py"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "not both" in err
    assert main(["fix", "--diagnosis", str(tmp_path / "missing.json"), "--", PY, "quick.py"]) == 2
    assert main(["fix", "--cwd", str(proj)]) == 2


def test_diagnose_diff_prints_every_finding_edit_as_one_unified_diff(tmp_path: Path) -> None:
    from warp_compile.cli.cmd_diagnose import diff_text
    from warp_compile.probe.models.diagnosis import Diagnosis, Edit, Finding

    proj = _tree(tmp_path)
    add = Edit(file="quick.py", start_line=1, end_line=0, new="import warp as wp\nwp.config.enable_backward = False\n")
    stale = Edit(file="quick.py", start_line=1, end_line=1, old="print('other')\n", new="print('x')\n")
    f1 = Finding(mechanism="CS-10", title="t", severity="low", confidence="high", fix="f", edits=[add],
                 applicability="automatic")
    f2 = Finding(mechanism="CS-3", title="u", severity="low", confidence="high", fix="f", edits=[stale],
                 applicability="review")
    text = diff_text(Diagnosis(source_root=str(proj), findings=[f1, f2]))
    assert "# CS-10 t [automatic]\n--- a/quick.py\n+++ b/quick.py\n" in text
    assert "+wp.config.enable_backward = False" in text
    assert "# CS-3 u [review]\n# the edits no longer apply" in text
    assert (proj / "quick.py").read_text() == "print('ok 1.5')\n"


def test_cli_unsafe_fixes_reaches_the_engine_and_is_off_by_default() -> None:
    from warp_compile.cli.app import build_parser
    from warp_compile.cli.cmd_fix import options_from

    parser = build_parser()
    assert options_from(parser.parse_args(["fix", "--write"])).unsafe_fixes is False
    assert options_from(parser.parse_args(["fix", "--write", "--unsafe-fixes"])).unsafe_fixes is True
    assert "also write fixes rated review" in parser._subparsers._group_actions[0].choices["fix"].format_help()
