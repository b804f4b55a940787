"""The MCP server in memory (`mcp.Client(server)`): every tool, every error and confinement case, progress, the
one-measurement lock and cancellation. The measured commands here are tiny Python scripts that never import Warp,
so these tests are fast; the real Warp runs are in test_server_stdio.py (marked slow)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import anyio
import pytest
from mcp import Client, MCPError
from mcp_types import ListRootsResult, Root

from tests.helpers import SLOW_APP as SLOW
from tests.helpers import alive as _alive
from warp_compile.probe.models import Report, WarningCode
from warp_compile.probe.models.comparison import Comparison
from warp_compile.probe.models.served import MechanismResult, ServedDiagnosis
from warp_compile.probe.models.summary import MeasureSummary
from warp_compile.server.app import WarpCompileServer, create_server
from warp_compile.server.runner import WAITING, measurement_running

PY = sys.executable

QUICK = """\
import sys, time
with open("runs.log", "a") as f:
    f.write(f"start {time.time()}\\n")
time.sleep(float(sys.argv[1]) if len(sys.argv) > 1 else 0.05)
with open("runs.log", "a") as f:
    f.write(f"end {time.time()}\\n")
print("quick done")
"""

MARKER = """\
open("ran.txt", "w").write("ran")
"""

FAIL = """\
import sys
sys.stderr.write("Traceback (most recent call last):\\nValueError: the app is broken\\n")
sys.exit(3)
"""



@pytest.fixture
def sandbox_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The sandbox's temp base for this test, so leftovers can be counted."""
    d = tmp_path / "tmp"
    d.mkdir()
    monkeypatch.setenv("TMPDIR", str(d))
    return d


@pytest.fixture
def project(tmp_path: Path, sandbox_tmp: Path) -> Path:
    p = tmp_path / "proj"
    p.mkdir()
    (p / "quick.py").write_text(QUICK)
    (p / "marker.py").write_text(MARKER)
    (p / "fail.py").write_text(FAIL)
    (p / "slow.py").write_text(SLOW)
    (p / "sub").mkdir()
    return p


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    p = tmp_path / "outside"
    p.mkdir()
    (p / "marker.py").write_text(MARKER)
    (p / "quick.py").write_text(QUICK)
    return p


@pytest.fixture
def server(project: Path) -> WarpCompileServer:
    return create_server([project])


class Progress:
    def __init__(self) -> None:
        self.events: list[tuple[float, float | None, str | None]] = []

    async def __call__(self, progress: float, total: float | None, message: str | None) -> None:
        self.events.append((progress, total, message))

    @property
    def messages(self) -> list[str]:
        return [m or "" for _, _, m in self.events]


def error_text(result) -> str:
    assert result.is_error, result
    text = result.content[0].text
    assert "\n" not in text.strip(), f"tool errors must be one line: {text!r}"
    return text


async def measure(client: Client, cwd: Path | str, *args: str, script: str = "quick.py", **kw):
    arguments = {"command": [PY, script, *args], "cwd": str(cwd), "samples": 1, **kw}
    return await client.call_tool("measure", arguments)


# ---------------------------------------------------------------------------------------------- listing


@pytest.mark.anyio
async def test_lists_six_tools_with_output_schemas_and_annotations(server: WarpCompileServer) -> None:
    async with Client(server) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
    assert set(tools) == {"measure", "diagnose", "compare", "compare_interleaved", "fix", "explain_mechanism"}
    assert {"candidates", "written", "costs"} <= set(tools["fix"].output_schema["properties"])
    assert tools["fix"].input_schema["properties"]["write"]["type"] == "boolean"
    for t in tools.values():
        assert t.output_schema and t.output_schema.get("type") == "object", t.name
        assert t.description and t.title
    assert set(tools["measure"].output_schema["properties"]) >= {"report_id", "clocks", "largest_builds", "warnings"}
    assert "findings" in tools["diagnose"].output_schema["properties"]
    assert "verdict" in tools["compare"].output_schema["properties"]
    assert {"id", "title", "sections", "fix", "signals"} <= set(tools["explain_mechanism"].output_schema["properties"])
    assert "verdict" in tools["compare_interleaved"].output_schema["properties"]

    cmd = tools["measure"].input_schema["properties"]["command"]
    assert cmd["type"] == "array" and cmd["items"] == {"type": "string"}
    assert set(tools["measure"].input_schema["required"]) == {"command", "cwd"}
    assert "client_roots" not in tools["measure"].input_schema["properties"]
    assert set(tools["diagnose"].input_schema["properties"]) == {
        "command", "cwd", "report", "samples", "timeout_s", "cuda_arch", "verify"
    }
    assert set(tools["compare"].input_schema["required"]) == {"before", "after"}
    assert set(tools["compare_interleaved"].input_schema["required"]) == {"command", "before_cwd", "after_cwd"}
    for name in ("measure", "diagnose", "compare_interleaved"):  # agents are told to pass the project's python
        assert "venv python" in tools[name].input_schema["properties"]["command"]["description"]

    explain = tools["explain_mechanism"].annotations
    assert explain.read_only_hint is True and explain.idempotent_hint is True
    for name in ("measure", "diagnose", "compare_interleaved"):
        a = tools[name].annotations
        # read-only is left out: MCP's default for an absent hint is false, and tools/list stays smaller
        assert not a.read_only_hint and a.destructive_hint is False and a.open_world_hint is False
    assert tools["compare"].annotations.read_only_hint is True


@pytest.mark.anyio
async def test_resources_and_prompt_are_listed(server: WarpCompileServer) -> None:
    async with Client(server) as client:
        templates = {t.uri_template for t in (await client.list_resource_templates()).resource_templates}
        resources = {str(r.uri) for r in (await client.list_resources()).resources}
        prompts = {p.name for p in (await client.list_prompts()).prompts}
    assert {"warp-compile://mechanisms/{mechanism_id}", "warp-compile://reports/{report_id}"} <= templates
    assert "warp-compile://mechanisms" in resources
    assert "optimize_compile_time" in prompts


# ---------------------------------------------------------------------------------------------- explain


@pytest.mark.anyio
@pytest.mark.parametrize("query", ["CS-3", "cs3", "3", " cs-03 "])
async def test_explain_by_id(server: WarpCompileServer, query: str) -> None:
    async with Client(server) as client:
        r = await client.call_tool("explain_mechanism", {"mechanism": query})
    assert not r.is_error
    m = MechanismResult.model_validate(r.structured_content)
    assert m.id == "CS-3" and m.title and m.fix and m.verification
    assert r.content[0].text.startswith("CS-3")
    assert m.sections is None and "## " in r.content[0].text  # the Markdown once, as text


@pytest.mark.anyio
async def test_explain_by_keywords_names_the_best_match(server: WarpCompileServer) -> None:
    async with Client(server) as client:
        r = await client.call_tool("explain_mechanism", {"mechanism": "fast_math option changed after the launch"})
    assert not r.is_error
    assert r.structured_content["id"] == "CS-3"
    assert "best match" in r.content[0].text


@pytest.mark.anyio
@pytest.mark.parametrize("query", ["CS-99", "zzzz qqqq"])
async def test_explain_unknown_is_a_one_line_tool_error(server: WarpCompileServer, query: str) -> None:
    async with Client(server) as client:
        r = await client.call_tool("explain_mechanism", {"mechanism": query})
    text = error_text(r)
    assert "nearest" in text and "CS-" in text


# ---------------------------------------------------------------------------------------------- measure


@pytest.mark.anyio
async def test_measure_returns_summary_resource_and_json(
    server: WarpCompileServer, project: Path, sandbox_tmp: Path
) -> None:
    progress = Progress()
    async with Client(server) as client:
        r = await client.call_tool(
            "measure",
            {
                "command": [PY, "quick.py"],
                "cwd": str(project),
                "samples": 2,
                "label": "base",
                "json_path": "out/b.json",
            },
            progress_callback=progress,
        )
        assert not r.is_error, r.content
        s = MeasureSummary.model_validate(r.structured_content)
        index = json.loads((await client.read_resource(s.report_uri)).contents[0].text)
        full = await client.read_resource(index["parts"]["full"]["uri"])
        builds = json.loads((await client.read_resource(f"{s.report_uri}/builds")).contents[0].text)
    assert s.report_id and s.report_uri == f"warp-compile://reports/{s.report_id}"
    assert s.samples == 2 and s.ok_samples == 2 and s.label == "base"
    assert s.clocks.cold_wall.n == 2 and s.clocks.cold_wall.median_ms is not None
    assert s.json_path == str((project / "out" / "b.json").resolve())
    assert WarningCode.WARP_NOT_IMPORTED in [w.code for w in s.warnings]
    assert len(json.dumps(r.structured_content)) < 8000
    assert "quick.py" in r.content[0].text and s.report_uri in r.content[0].text

    report = Report.model_validate_json(full.contents[0].text)
    assert report.label == "base" and report.samples == 2
    # the report resource is the summary plus parts with their sizes; the full JSON only on request
    assert index["report_id"] == s.report_id and index["clocks"] == r.structured_content["clocks"]
    assert index["parts"]["full"]["bytes"] == len(full.contents[0].text)
    assert builds == [b.model_dump(mode="json") for b in report.builds]
    assert index["parts"]["builds"]["bytes"] == len(json.dumps(builds))
    assert Report.model_validate_json((project / "out" / "b.json").read_text()).created_at == report.created_at

    assert progress.messages[:4] == [
        "sample 1: cold run",
        "sample 1: warm run",
        "sample 2: cold run",
        "sample 2: warm run",
    ]
    values = [p for p, _, _ in progress.events]
    assert values == sorted(values) and len(set(values)) == len(values)
    assert progress.events[-1][0] == progress.events[-1][1]  # the last one says done
    assert not list(sandbox_tmp.glob("warp-compile-*"))


@pytest.mark.anyio
async def test_measure_relative_cwd_is_taken_from_the_first_root(server: WarpCompileServer, project: Path) -> None:
    async with Client(server) as client:
        r = await client.call_tool("measure", {"command": [PY, "../quick.py"], "cwd": "sub", "samples": 1})
    assert not r.is_error, r.content
    assert r.structured_content["cwd"] == str((project / "sub").resolve())


@pytest.mark.anyio
async def test_measure_cwd_outside_the_root_is_refused_before_running(server: WarpCompileServer, outside: Path) -> None:
    async with Client(server) as client:
        r = await measure(client, outside, script="marker.py")
    text = error_text(r)
    assert "outside the allowed roots" in text and str(outside) in text
    assert not (outside / "ran.txt").exists()


@pytest.mark.anyio
async def test_measure_dotdot_and_symlink_escapes_are_refused(
    server: WarpCompileServer, project: Path, outside: Path
) -> None:
    (project / "escape").symlink_to(outside, target_is_directory=True)
    async with Client(server) as client:
        via_link = await measure(client, project / "escape", script="marker.py")
        via_dotdot = await measure(client, "../outside", script="marker.py")
        via_abs_dotdot = await measure(client, f"{project}/sub/../../outside", script="marker.py")
    for r in (via_link, via_dotdot, via_abs_dotdot):
        assert "outside the allowed roots" in error_text(r)
    assert "resolves to" in error_text(via_link)
    assert not (outside / "ran.txt").exists()


@pytest.mark.anyio
async def test_measure_json_path_outside_is_refused_before_running(
    server: WarpCompileServer, project: Path, outside: Path
) -> None:
    (project / "out-link").symlink_to(outside, target_is_directory=True)
    async with Client(server) as client:
        r1 = await measure(client, project, script="marker.py", json_path=str(outside / "r.json"))
        r2 = await measure(client, project, script="marker.py", json_path="out-link/r.json")
        r3 = await measure(client, project, script="marker.py", json_path="sub")
    assert "json_path" in error_text(r1) and "outside the allowed roots" in error_text(r1)
    assert "outside the allowed roots" in error_text(r2)
    assert "is a directory" in error_text(r3)
    assert not (project / "ran.txt").exists()
    assert not list(outside.glob("*.json"))


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ({"command": "python quick.py"}, "command: Input should be a valid list"),
        ({"command": []}, "command is empty"),
        ({"command": [""]}, "command is empty"),
        ({"samples": 0}, "samples: Input should be greater than or equal to 1"),
        ({"timeout_s": 0}, "timeout_s: Input should be greater than 0"),
        ({"cwd": "missing"}, "does not exist or is not a directory"),
        ({"cwd": ""}, "cwd is empty"),
        ({"command": ["definitely-not-a-command-xyz"]}, "command not found"),
    ],
)
async def test_measure_bad_arguments_are_one_line_tool_errors(
    server: WarpCompileServer, project: Path, arguments, expected
) -> None:
    base = {"command": [PY, "marker.py"], "cwd": str(project), "samples": 1}
    async with Client(server) as client:
        r = await client.call_tool("measure", base | arguments)
    assert expected in error_text(r)
    assert "command not found" in expected or not (project / "ran.txt").exists()


@pytest.mark.anyio
async def test_measure_every_sample_failed_is_a_tool_error_with_the_reason(
    server: WarpCompileServer, project: Path
) -> None:
    async with Client(server) as client:
        r = await measure(client, project, script="fail.py")
        text = error_text(r)
        assert "every sample failed" in text and "exited with code 3" in text and "the app is broken" in text
        uri = text[text.index("warp-compile://reports/") :].split()[0].rstrip(".;")
        samples = json.loads((await client.read_resource(uri)).contents[0].text)
    assert uri.endswith("/sample_results")
    assert [x["ok"] for x in samples] == [False] and "the app is broken" in samples[0]["cold"]["stderr_tail"]


@pytest.mark.anyio
async def test_unknown_report_resource_is_an_error(server: WarpCompileServer) -> None:
    async with Client(server) as client:
        with pytest.raises(MCPError, match="unknown report_id"):
            await client.read_resource("warp-compile://reports/r9-00000000")
        with pytest.raises(MCPError, match="unknown mechanism"):
            await client.read_resource("warp-compile://mechanisms/CS-99")


@pytest.mark.anyio
async def test_mechanism_resources(server: WarpCompileServer) -> None:
    async with Client(server) as client:
        listing = json.loads((await client.read_resource("warp-compile://mechanisms")).contents[0].text)
        cs3 = (await client.read_resource("warp-compile://mechanisms/CS-3")).contents[0]
        by_number = (await client.read_resource("warp-compile://mechanisms/3")).contents[0]
    assert [m["id"] for m in listing][:3] == ["CS-1", "CS-2", "CS-3"]
    assert all(m["uri"] == f"warp-compile://mechanisms/{m['id']}" for m in listing)
    assert cs3.text.startswith("CS-3") and cs3.mime_type == "text/markdown"
    assert by_number.text == cs3.text


@pytest.mark.anyio
async def test_prompt_walks_the_loop_with_a_ledger(server: WarpCompileServer) -> None:
    async with Client(server) as client:
        p = await client.get_prompt("optimize_compile_time", {"command": "python sim.py --steps 3", "cwd": "."})
    text = p.messages[0].content.text
    for word in ("measure", "diagnose", "compare", "explain_mechanism", "ledger", "declined", "INVALID"):
        assert word in text
    assert '["python", "sim.py", "--steps", "3"]' in text


# ---------------------------------------------------------------------------------------------- compare


@pytest.mark.anyio
async def test_compare_by_report_id_and_by_path(server: WarpCompileServer, project: Path) -> None:
    async with Client(server) as client:
        a = await measure(client, project, json_path="a.json")
        b = await measure(client, project)
        by_id = await client.call_tool(
            "compare", {"before": a.structured_content["report_id"], "after": b.structured_content["report_id"]}
        )
        by_path = await client.call_tool("compare", {"before": "a.json", "after": b.structured_content["report_id"]})
    for r in (by_id, by_path):
        assert not r.is_error, r.content
        c = Comparison.model_validate(r.structured_content)
        # quick.py never imports Warp: no launch on either side, so the same work cannot be confirmed
        assert c.verdict == "UNVERIFIED" and c.equivalence.status == "unverified", (c.verdict, c.reason)
        assert "neither run recorded a kernel launch" in c.reason
        assert r.content[0].text.startswith(f"{c.verdict}:")
    assert Comparison.model_validate(by_path.structured_content).before_label.startswith("a.json")


@pytest.mark.anyio
async def test_compare_errors(server: WarpCompileServer, project: Path, outside: Path) -> None:
    (outside / "r.json").write_text("{}")
    (project / "bad.json").write_text("[1, 2]")
    async with Client(server) as client:
        ok = await measure(client, project)
        rid = ok.structured_content["report_id"]
        outside_path = await client.call_tool("compare", {"before": str(outside / "r.json"), "after": rid})
        unknown = await client.call_tool("compare", {"before": "r77-deadbeef", "after": rid})
        missing = await client.call_tool("compare", {"before": "nope.json", "after": rid})
        not_report = await client.call_tool("compare", {"before": rid, "after": "bad.json"})
    assert "outside the allowed roots" in error_text(outside_path)
    assert "unknown report_id" in error_text(unknown)
    assert "no such file" in error_text(missing)
    assert "not a warp-compile report" in error_text(not_report)


# ---------------------------------------------------------------------------------------------- diagnose


@pytest.fixture
def fake_diagnose(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, object]]:
    """A spy on the real probe/diagnose entry points (they still run): which one the adapter called, with what."""
    from warp_compile.probe import diagnose as core

    calls: list[tuple[str, object]] = []
    real_diagnose, real_command = core.diagnose, core.diagnose_command

    def diagnose(report, scan, root=None, sources=None, **kw):  # type: ignore[no-untyped-def]
        calls.append(("diagnose", scan))
        return real_diagnose(report, scan, root=root, sources=sources, **kw)

    def diagnose_command(command, cwd, **kw):  # type: ignore[no-untyped-def]
        out = real_command(command, cwd, **kw)
        calls.append(("diagnose_command", cwd))
        return out

    monkeypatch.setattr(core, "diagnose", diagnose)
    monkeypatch.setattr(core, "diagnose_command", diagnose_command)
    return calls


@pytest.mark.anyio
async def test_diagnose_command_keeps_the_report_and_reports_progress(
    server: WarpCompileServer, project: Path, fake_diagnose
) -> None:
    progress = Progress()
    async with Client(server) as client:
        r = await client.call_tool(
            "diagnose", {"command": [PY, "quick.py"], "cwd": str(project)}, progress_callback=progress
        )
        assert not r.is_error, r.content
        d = ServedDiagnosis.model_validate(r.structured_content)
        assert d.report_id
        full = await client.read_resource(f"warp-compile://reports/{d.report_id}/full")
        again = await client.call_tool("diagnose", {"report": d.report_id})
    assert Report.model_validate_json(full.contents[0].text).command == [PY, "quick.py"]
    assert progress.messages[:2] == ["sample 1: cold run", "sample 1: warm run"]
    assert progress.messages[2].startswith("scan: reading the source under ")
    assert progress.messages[3].startswith("scan: ") and " files, " in progress.messages[3]  # what it read
    assert progress.messages[4].startswith("rules: ")
    assert f"warp-compile://reports/{d.report_id}" in r.content[0].text
    assert not again.is_error, again.content
    assert ServedDiagnosis.model_validate(again.structured_content).report_id == d.report_id
    assert fake_diagnose[-1][0] == "diagnose" and fake_diagnose[-1][1] is not None  # the source was scanned


@pytest.mark.anyio
async def test_diagnose_cwd_defaults_to_the_first_root(server: WarpCompileServer, project: Path, fake_diagnose) -> None:
    async with Client(server) as client:
        r = await client.call_tool("diagnose", {"command": [PY, "quick.py"]})
    assert not r.is_error, r.content
    assert fake_diagnose[-1] == ("diagnose_command", project.resolve())


@pytest.mark.anyio
async def test_diagnose_report_path_with_cwd_outside_skips_the_scan(
    server: WarpCompileServer, project: Path, tmp_path: Path, fake_diagnose
) -> None:
    async with Client(server) as client:
        m = await measure(client, project, json_path="m.json")
    data = json.loads((project / "m.json").read_text())
    data["cwd"] = str(tmp_path / "elsewhere")
    (project / "moved.json").write_text(json.dumps(data))
    async with Client(server) as client:
        r = await client.call_tool("diagnose", {"report": "moved.json"})
    assert not m.is_error and not r.is_error, r.content
    d = ServedDiagnosis.model_validate(r.structured_content)
    assert d.report_id is None
    scan_warnings = [w for w in d.warnings if w.code == WarningCode.NO_SOURCE_SCAN]
    assert [w.params for w in scan_warnings] == [{"cwd": str(tmp_path / "elsewhere")}]
    assert "not a directory inside the allowed roots" in scan_warnings[0].message
    assert fake_diagnose[-1] == ("diagnose", None)


@pytest.mark.anyio
async def test_json_path_under_a_file_is_refused_before_anything_runs(server: WarpCompileServer, project: Path) -> None:
    (project / "notes.txt").write_text("a file, not a directory\n")
    async with Client(server) as client:
        r = await measure(client, project, script="marker.py", json_path="notes.txt/r.json")
        ok = await measure(client, project, json_path=".warp-compile/baseline.json")  # a new subdirectory is fine
    assert "is a file, not a directory" in error_text(r)
    assert not (project / "ran.txt").exists()
    assert not ok.is_error and (project / ".warp-compile" / "baseline.json").is_file()


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ({}, "nothing to diagnose"),
        ({"command": []}, "nothing to diagnose"),
        ({"report": "r1-00000000", "command": [PY, "marker.py"]}, "not both"),
        ({"report": "r1-00000000", "cwd": "."}, "not both"),
        ({"report": "r5-0badc0de"}, "unknown report_id"),
        ({"report": "none.json"}, "no such file"),
        ({"command": [PY, "marker.py"], "cwd": "{outside}"}, "outside the allowed roots"),
        ({"report": "{outside}/r.json"}, "outside the allowed roots"),
        ({"command": "python marker.py"}, "command: Input should be a valid list"),
        ({"command": [PY, "marker.py"], "samples": 0}, "samples: Input should be greater than or equal to 1"),
    ],
)
async def test_diagnose_errors(server: WarpCompileServer, project: Path, outside: Path, arguments, expected) -> None:
    arguments = {k: v.replace("{outside}", str(outside)) if isinstance(v, str) else v for k, v in arguments.items()}
    async with Client(server) as client:
        r = await client.call_tool("diagnose", arguments)
    assert expected in error_text(r)
    assert not (project / "ran.txt").exists() and not (outside / "ran.txt").exists()


# ---------------------------------------------------------------------------------------------- client roots


def roots_callback(*dirs: Path):
    async def list_roots(_ctx):
        return ListRootsResult(roots=[Root(uri=d.resolve().as_uri()) for d in dirs])

    return list_roots


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_client_declared_roots_are_allowed(project: Path, outside: Path, mode: str) -> None:
    server = create_server([])
    async with Client(server, mode=mode, list_roots_callback=roots_callback(project)) as client:
        ok = await measure(client, project)
        rel = await measure(client, ".")
        refused = await measure(client, outside, script="marker.py")
    assert not ok.is_error, ok.content
    assert not rel.is_error and rel.structured_content["cwd"] == str(project.resolve())
    assert "outside the allowed roots" in error_text(refused)
    assert not (outside / "ran.txt").exists()


@pytest.mark.anyio
async def test_client_roots_add_to_the_server_roots(project: Path, outside: Path) -> None:
    server = create_server([project])
    async with Client(server, list_roots_callback=roots_callback(outside)) as client:
        r = await measure(client, outside)
    assert not r.is_error, r.content


@pytest.mark.anyio
async def test_no_roots_at_all_refuses_everything(project: Path) -> None:
    server = create_server([])
    async with Client(server) as client:
        r = await measure(client, project, script="marker.py")
    assert "no allowed roots" in error_text(r) and "--root" in error_text(r)
    assert not (project / "ran.txt").exists()


# ---------------------------------------------------------------------------------------------- lock, cancel


def _intervals(log: Path) -> list[tuple[float, float]]:
    starts, ends = [], []
    for line in log.read_text().split("\n"):
        if line:
            kind, t = line.split()
            (starts if kind == "start" else ends).append(float(t))
    return list(zip(sorted(starts), sorted(ends), strict=True))


@pytest.mark.anyio
async def test_one_measurement_at_a_time_and_the_waiter_says_so(server: WarpCompileServer, project: Path) -> None:
    first, second = Progress(), Progress()
    results = {}

    async def run(name: str, progress: Progress) -> None:
        results[name] = await client.call_tool(
            "measure",
            {"command": [PY, "quick.py", "0.6"], "cwd": str(project), "samples": 1},
            progress_callback=progress,
        )

    async with Client(server) as client:
        async with anyio.create_task_group() as tg:
            tg.start_soon(run, "first", first)
            with anyio.fail_after(10):
                while not measurement_running():
                    await anyio.sleep(0.02)
            tg.start_soon(run, "second", second)
            await anyio.sleep(0.3)
            started = time.monotonic()
            explain = await client.call_tool("explain_mechanism", {"mechanism": "3"})  # not held up by the lock
            assert time.monotonic() - started < 2 and not explain.is_error
    assert not results["first"].is_error and not results["second"].is_error
    assert WAITING not in first.messages
    assert second.messages[0] == WAITING and "sample 1: cold run" in second.messages
    runs = sorted(_intervals(project / "runs.log"))
    assert len(runs) == 4  # cold + warm of each
    for (_, end), (start, _) in zip(runs, runs[1:], strict=False):
        assert start >= end, "two measured runs overlapped"


async def wait_clean(sandbox_tmp: Path, pids: list[int], seconds: float = 20) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not list(sandbox_tmp.glob("warp-compile-*")) and not any(_alive(p) for p in pids):
            return
        await anyio.sleep(0.1)
    alive = [p for p in pids if _alive(p)]
    for p in alive:
        subprocess.run(["kill", "-9", str(p)], check=False)
    raise AssertionError(f"left behind: temp roots {list(sandbox_tmp.glob('warp-compile-*'))}, processes {alive}")


@pytest.mark.anyio
async def test_a_timed_out_request_kills_the_tree_and_removes_the_temp_root(
    server: WarpCompileServer, project: Path, sandbox_tmp: Path
) -> None:
    progress = Progress()
    async with Client(server) as client:
        with pytest.raises(MCPError, match="(?i)timed out"):
            await client.call_tool(
                "measure",
                {"command": [PY, "slow.py"], "cwd": str(project), "samples": 1},
                read_timeout_seconds=2.5,
                progress_callback=progress,
            )
        pids = [int(x) for x in (project / "pids.txt").read_text().split()]
        assert len(pids) == 2
        await wait_clean(sandbox_tmp, pids)
        # the lock was released: the next measurement starts at once
        nxt = Progress()
        r = await client.call_tool(
            "measure", {"command": [PY, "quick.py"], "cwd": str(project), "samples": 1}, progress_callback=nxt
        )
    assert "sample 1: cold run" in progress.messages
    assert not r.is_error and WAITING not in nxt.messages


def test_building_the_server_does_not_import_warp(tmp_path: Path) -> None:
    code = textwrap.dedent(
        f"""
        import sys
        from warp_compile.cli.app import build_parser
        build_parser().parse_args(["serve", "--root", {str(tmp_path)!r}])
        from warp_compile.server.app import WarpCompileServer, create_server
        create_server([{str(tmp_path)!r}])
        bad = sorted(m for m in sys.modules if m == "warp" or m.startswith("warp."))
        assert not bad, bad
        """
    )
    subprocess.run([PY, "-c", code], check=True, timeout=60, env=dict(os.environ, PYTHONDONTWRITEBYTECODE="1"))
