"""What the server sends stays small and complete, in memory (`mcp.Client(server)`): tools/list and every
`explain_mechanism` under 12 KB, compact schemas that still accept real results, sections on request, the roots
discoverable, a bare `python` resolved and named, `timeout_s` on diagnose, and `compare_interleaved` with progress
and cancellation. The measured commands are tiny scripts that never import Warp."""

from __future__ import annotations

import json
import shutil
import sys
import time
from pathlib import Path

import anyio
import jsonschema
import pytest
from mcp import Client, MCPError

from tests.helpers import SLOW_APP as SLOW
from tests.helpers import alive as _alive
from warp_compile.probe.knowledge import list_mechanisms
from warp_compile.probe.models.comparison import Comparison
from warp_compile.server.app import create_server
from warp_compile.server.lean import compact_schema
from warp_compile.server.resources import ROOTS_URI

PY = sys.executable
LIMIT = 12 * 1024
TOOLS_LIMIT = 12 * 1024  # all six tools (issue 23); an explain result stays under LIMIT too

QUICK = "import time; time.sleep(0.05); print('ok')\n"
SLEEPY = "import sys, time; time.sleep(float(sys.argv[1]))\n"


@pytest.fixture
def trees(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """root/before and root/after, each with the same scripts; the sandbox's temp base under tmp_path."""
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    monkeypatch.setenv("TMPDIR", str(tmp))
    root = tmp_path / "root"
    for side in ("before", "after"):
        (root / side).mkdir(parents=True)
        (root / side / "quick.py").write_text(QUICK)
        (root / side / "sleepy.py").write_text(SLEEPY)
        (root / side / "slow.py").write_text(SLOW)
    return root


def wire_bytes(model) -> int:  # type: ignore[no-untyped-def]
    """Bytes of the JSON the SDK puts on the wire for a result (aliases, no None fields)."""
    return len(model.model_dump_json(by_alias=True, exclude_none=True).encode())


@pytest.mark.anyio
async def test_tools_list_is_under_12_kib_and_schemas_are_ref_free(trees: Path) -> None:
    async with Client(create_server([trees])) as client:
        listed = await client.list_tools()
    assert wire_bytes(listed) < TOOLS_LIMIT, wire_bytes(listed)
    for t in listed.tools:
        text = json.dumps(t.output_schema)
        assert "$ref" not in text and "$defs" not in text, t.name
        assert '"title"' not in json.dumps(t.input_schema), t.name


def test_compact_schema_only_loosens_a_schema() -> None:
    """A result the full schema accepts is accepted by the compact one; a wrong top-level type is still refused."""
    full = Comparison.model_json_schema()
    compact = compact_schema(full)
    golden = json.loads(Path("tests/golden/particle_prep/compare.json").read_text())
    jsonschema.validate(golden, full)
    jsonschema.validate(golden, compact)
    assert set(compact["properties"]) == set(full["properties"])
    assert compact["properties"]["verdict"]["enum"] == [
        "IMPROVED",
        "INCONCLUSIVE",
        "REGRESSION",
        "INVALID",
        "UNVERIFIED",
        "NO_EFFECT",
    ]
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({**golden, "verdict": "GREAT"}, compact)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({**golden, "clocks": "none"}, compact)


@pytest.mark.anyio
async def test_every_explain_result_is_under_12_kb_with_the_text_once(trees: Path) -> None:
    async with Client(create_server([trees])) as client:
        for m in list_mechanisms():
            r = await client.call_tool("explain_mechanism", {"mechanism": m.id})
            assert not r.is_error, r.content
            assert wire_bytes(r) < LIMIT, (m.id, wire_bytes(r))
            fix = m.sections["Fix"].strip()
            assert fix in r.content[0].text and fix[:200] not in json.dumps(r.structured_content)  # text once
            assert m.sections["Figures"].strip()[:200] not in r.content[0].text
            assert "## Figures" in r.content[0].text and "sections=true" in r.content[0].text
        asked = await client.call_tool("explain_mechanism", {"mechanism": "CS-3", "sections": True})
    cs3 = next(m for m in list_mechanisms() if m.id == "CS-3")
    assert asked.structured_content["sections"] == cs3.sections
    assert all(f"- {h}" in asked.content[0].text for h in cs3.sections)
    assert cs3.sections["Fix"].strip()[:200] not in asked.content[0].text


@pytest.mark.anyio
async def test_roots_are_discoverable(trees: Path, tmp_path: Path) -> None:
    other = tmp_path / "other"
    other.mkdir()
    server = create_server([trees, other])
    async with Client(server) as client:
        roots = json.loads((await client.read_resource(ROOTS_URI)).contents[0].text)
        listed = {str(r.uri) for r in (await client.list_resources()).resources}
        instructions = client.instructions or ""
    assert roots["server_roots"] == [str(trees.resolve()), str(other.resolve())]
    assert ROOTS_URI in listed
    assert str(trees.resolve()) in instructions and str(other.resolve()) in instructions and ROOTS_URI in instructions


@pytest.mark.anyio
async def test_a_bare_python_is_resolved_and_named(trees: Path) -> None:
    name = Path(PY).name if Path(PY).name.startswith("python") else "python3"
    found = shutil.which(name)
    if found is None:
        pytest.skip(f"{name} is not on PATH")
    async with Client(create_server([trees])) as client:
        r = await client.call_tool(
            "measure", {"command": [name, "quick.py"], "cwd": str(trees / "before"), "samples": 1}
        )
        missing = await client.call_tool(
            "measure", {"command": ["python3.0", "quick.py"], "cwd": str(trees / "before"), "samples": 1}
        )
    assert not r.is_error, r.content
    assert r.structured_content["command"][0] == found
    assert r.structured_content["warnings"][0]["code"] == "python_resolved"
    assert f"resolved on the server's PATH to {found}" in r.structured_content["warnings"][0]["message"]
    assert f"interpreter: {found}" in r.content[0].text and "resolved on the server's PATH" in r.content[0].text
    assert missing.is_error and "not on the server's PATH" in missing.content[0].text


@pytest.mark.anyio
async def test_diagnose_timeout_s_kills_the_run(trees: Path) -> None:
    started = time.monotonic()
    async with Client(create_server([trees])) as client:
        r = await client.call_tool(
            "diagnose", {"command": [PY, "sleepy.py", "60"], "cwd": str(trees / "before"), "timeout_s": 1}
        )
    assert r.is_error and "every sample failed" in r.content[0].text, r.content
    assert "timed out" in r.content[0].text.lower() or "timeout" in r.content[0].text.lower(), r.content
    assert time.monotonic() - started < 30


@pytest.mark.anyio
async def test_compare_interleaved_alternates_the_trees_with_progress(trees: Path) -> None:
    messages: list[str] = []

    async def progress(p: float, total: float | None, message: str | None) -> None:
        messages.append(message or "")

    async with Client(create_server([trees])) as client:
        r = await client.call_tool(
            "compare_interleaved",
            {
                "command": [PY, "quick.py"],
                "before_cwd": str(trees / "before"),
                "after_cwd": str(trees / "after"),
                "samples": 2,
                "warmup": 0,
            },
            progress_callback=progress,
            read_timeout_seconds=300,
        )
        refused = await client.call_tool(
            "compare_interleaved",
            {"command": [PY, "quick.py"], "before_cwd": str(trees / "before"), "after_cwd": "/"},
        )
        too_few = await client.call_tool(
            "compare_interleaved",
            {
                "command": [PY, "quick.py"],
                "before_cwd": str(trees / "before"),
                "after_cwd": str(trees / "after"),
                "until_decided": True,
                "max_samples": 2,
            },
        )
    assert not r.is_error, r.content
    c = Comparison.model_validate(r.structured_content)
    assert c.interleaved is not None and c.interleaved.pairs == 2 and c.before_samples == 2 and c.after_samples == 2
    pairs = [m for m in messages if m.startswith("pair ")]
    assert [m.split(":")[1].split()[0] for m in pairs] == ["before", "after", "after", "before"]
    assert c.verdict in r.content[0].text
    assert refused.is_error and "outside the allowed roots" in refused.content[0].text
    assert too_few.is_error and "below the minimum" in too_few.content[0].text


@pytest.mark.anyio
async def test_compare_interleaved_cancelled_leaves_no_process_and_no_temp_root(trees: Path, tmp_path: Path) -> None:
    async with Client(create_server([trees])) as client:
        with pytest.raises(MCPError, match="(?i)timed out"):
            await client.call_tool(
                "compare_interleaved",
                {
                    "command": [PY, "slow.py"],
                    "before_cwd": str(trees / "before"),
                    "after_cwd": str(trees / "after"),
                    "warmup": 0,
                    "samples": 1,
                },
                read_timeout_seconds=4,
            )
        pids_file = trees / "before" / "pids.txt"
        deadline = time.monotonic() + 20
        pids = [int(x) for x in pids_file.read_text().split()]
        while time.monotonic() < deadline and (any(_alive(p) for p in pids) or list((tmp_path / "tmp").iterdir())):
            await anyio.sleep(0.1)
        left = [p for p in pids if _alive(p)]
        assert not left and not list((tmp_path / "tmp").glob("warp-compile-*")), left


def test_a_nullable_parameter_is_one_type_list_that_accepts_the_same_values() -> None:
    """pydantic's `anyOf: [T, null]` published as `type: [T, null]`: the same values validate, in fewer bytes."""
    from warp_compile.server.lean import untitled

    prop = {"anyOf": [{"type": "integer", "minimum": 50, "maximum": 199}, {"type": "null"}], "default": None,
            "description": "sm_N", "title": "Cuda Arch"}
    schema = {"type": "object", "properties": {"cuda_arch": prop}, "title": "x"}
    lean = untitled(schema)
    assert lean["properties"]["cuda_arch"] == {"type": ["integer", "null"], "minimum": 50, "maximum": 199,
                                               "description": "sm_N"}
    for value, ok in ((None, True), (90, True), (7, False), ("90", False)):
        for s in (schema, lean):
            try:
                jsonschema.validate({"cuda_arch": value}, s)
                valid = True
            except jsonschema.ValidationError:
                valid = False
            assert valid == ok, (s is lean, value)
