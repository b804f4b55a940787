"""`warp-compile serve --root APP` as a real subprocess, driven by the SDK's stdio client: the tools with their
schemas, explain, a refused cwd, the resource templates, a real diagnose with progress (slow: runs Warp), and a
cancellation that leaves no process and no temp root behind."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import anyio
import pytest
from mcp import Client, MCPError, StdioServerParameters
from mcp_types import ListRootsResult, Root

from tests.helpers import alive as _alive
from warp_compile.probe.models.served import ServedDiagnosis
from warp_compile.server.store import report_uri

PY = sys.executable
NO_PYC = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")  # servers started here leave no __pycache__ in the checkout

# A module whose options change between two launches: the second launch builds the module again (CS-3).
CS3_APP = """\
import warp as wp

wp.config.quiet = True


@wp.kernel
def scale(a: wp.array(dtype=float), s: float):
    i = wp.tid()
    a[i] = a[i] * s


a = wp.zeros(16, dtype=float, device="cpu")
wp.launch(scale, dim=16, inputs=[a, 2.0], device="cpu")
wp.set_module_options({"fast_math": True})
wp.launch(scale, dim=16, inputs=[a, 3.0], device="cpu")
wp.synchronize()
"""

SLOW = """\
import os, subprocess, sys, time
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
with open("pids.txt", "w") as f:
    f.write(f"{os.getpid()}\\n{child.pid}\\n")
time.sleep(120)
"""


# Like SLOW, but the grandchild leaves the process group (its own session): only the environment marks it as ours.
SLOW_SETSID = SLOW.replace('time.sleep(120)"])', 'time.sleep(120)"], start_new_session=True)', 1)


@pytest.fixture
def app(tmp_path: Path) -> Path:
    d = tmp_path / "app"
    d.mkdir()
    (d / "app.py").write_text(CS3_APP)
    (d / "slow.py").write_text(SLOW)
    (d / "slow_setsid.py").write_text(SLOW_SETSID)
    return d


@pytest.fixture
def server_tmp(tmp_path: Path) -> Path:
    d = tmp_path / "server-tmp"
    d.mkdir()
    return d


def serve(app: Path, server_tmp: Path, *roots: Path) -> StdioServerParameters:
    # The SDK client passes only a few variables of its own; without this the server writes __pycache__ into the
    # checkout it imports warp_compile from.
    env = {"TMPDIR": str(server_tmp), "PYTHONDONTWRITEBYTECODE": "1"}
    if os.environ.get("PYTHONPATH"):
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    args = ["-m", "warp_compile", "serve"]
    for r in roots if roots else (app,):
        args += ["--root", str(r)]
    return StdioServerParameters(command=PY, args=args, env=env, cwd=str(app))


@pytest.mark.anyio
async def test_stdio_tools_explain_refusal_and_templates(app: Path, server_tmp: Path, tmp_path: Path) -> None:
    started = time.monotonic()
    async with Client(serve(app, server_tmp)) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        listed_after = time.monotonic() - started

        explain = await client.call_tool("explain_mechanism", {"mechanism": "CS-3"})
        refused = await client.call_tool("measure", {"command": [PY, "app.py"], "cwd": str(tmp_path)})
        templates = {t.uri_template for t in (await client.list_resource_templates()).resource_templates}
        cs3 = await client.read_resource("warp-compile://mechanisms/CS-3")

    assert set(tools) == {"measure", "diagnose", "fix", "compare", "compare_interleaved", "explain_mechanism"}
    assert all(t.output_schema for t in tools.values())
    assert listed_after < 30, f"tools/list took {listed_after:.1f} s"

    assert not explain.is_error and explain.structured_content["id"] == "CS-3"
    assert refused.is_error and "outside the allowed roots" in refused.content[0].text
    assert "\n" not in refused.content[0].text.strip()
    assert "warp-compile://mechanisms/{mechanism_id}" in templates
    assert "warp-compile://reports/{report_id}" in templates
    assert cs3.contents[0].text.startswith("CS-3")
    assert not list(server_tmp.glob("warp-compile-*"))


async def _nothing_left(app: Path, server_tmp: Path, wait_s: float = 20) -> tuple[list[Path], list[int]]:
    """Wait for the measured tree (pids.txt) and the temp roots to be gone; kill what is left and return it."""
    pids = [int(x) for x in (app / "pids.txt").read_text().split()]
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        if not list(server_tmp.glob("warp-compile-*")) and not any(_alive(p) for p in pids):
            break
        await anyio.sleep(0.1)
    left_dirs = list(server_tmp.glob("warp-compile-*"))
    left_pids = [p for p in pids if _alive(p)]
    for p in left_pids:
        subprocess.run(["kill", "-9", str(p)], check=False)
    return left_dirs, left_pids


@pytest.mark.anyio
@pytest.mark.parametrize("script", ["slow.py", "slow_setsid.py"])
async def test_stdio_cancellation_leaves_no_process_and_no_temp_root(app: Path, server_tmp: Path, script: str) -> None:
    messages: list[str] = []

    async def progress(p: float, total: float | None, message: str | None) -> None:
        messages.append(message or "")

    async with Client(serve(app, server_tmp)) as client:
        with pytest.raises(MCPError, match="(?i)timed out"):
            await client.call_tool(
                "measure",
                {"command": [PY, script], "cwd": str(app), "samples": 1},
                read_timeout_seconds=4,
                progress_callback=progress,
            )
        left_dirs, left_pids = await _nothing_left(app, server_tmp)
        assert not left_dirs and not left_pids, (left_dirs, left_pids)
        # the server is still serving, and the measurement lock is free again
        assert not (await client.call_tool("explain_mechanism", {"mechanism": "3"})).is_error
    assert "sample 1: cold run" in messages


@pytest.mark.slow
@pytest.mark.anyio
async def test_stdio_real_diagnose_finds_cs3_with_progress(app: Path, server_tmp: Path) -> None:
    events: list[tuple[float, float | None, str | None]] = []

    async def progress(p: float, total: float | None, message: str | None) -> None:
        events.append((p, total, message))

    async with Client(serve(app, server_tmp)) as client:
        r = await client.call_tool(
            "diagnose",
            {"command": [PY, "app.py"], "cwd": str(app)},
            progress_callback=progress,
            read_timeout_seconds=600,
        )
        assert not r.is_error, r.content
        d = ServedDiagnosis.model_validate(r.structured_content)
        full = await client.read_resource(report_uri(d.report_id or ""))
    assert len(events) >= 2, events
    assert [p for p, _, _ in events] == sorted(p for p, _, _ in events)
    assert any("cold" in (m or "") for _, _, m in events)
    assert "CS-3" in [f.mechanism for f in d.findings], d.findings
    cs3 = next(f for f in d.findings if f.mechanism == "CS-3")
    assert any(loc.file.endswith("app.py") for loc in cs3.locations), cs3
    assert full.contents[0].text.startswith("{")
    assert not list(server_tmp.glob("warp-compile-*"))


def test_serve_does_not_import_warp_and_keeps_stdout_for_the_protocol(app: Path, server_tmp: Path) -> None:
    """`warp-compile serve` on a closed stdin: starts, exits cleanly, imports no warp, prints nothing on stdout."""
    env = dict(os.environ, TMPDIR=str(server_tmp), PYTHONDONTWRITEBYTECODE="1")
    proc = subprocess.run(
        [PY, "-X", "importtime", "-m", "warp_compile", "serve", "--root", str(app)],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )
    imported = [line.rsplit("|", 1)[-1].strip() for line in proc.stderr.splitlines() if line.startswith("import time:")]
    assert imported and "mcp.server.mcpserver" in imported, proc.stderr[-2000:]
    assert not [m for m in imported if m == "warp" or m.startswith("warp.")], "serve imported warp at startup"
    assert proc.stdout == ""
    assert proc.returncode == 0, proc.stderr[-2000:]


def test_serve_rejects_a_missing_root(tmp_path: Path) -> None:
    proc = subprocess.run(
        [PY, "-m", "warp_compile", "serve", "--root", str(tmp_path / "nope")],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        env=NO_PYC,
    )
    assert proc.returncode == 2
    assert proc.stderr.strip() == f"warp-compile: error: serve: --root {tmp_path / 'nope'}: not a directory"
    assert proc.stdout == ""


def test_serve_help_documents_the_options() -> None:
    out = subprocess.run(
        [PY, "-m", "warp_compile", "serve", "--help"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
        env=NO_PYC,
    ).stdout
    for word in ("--transport", "stdio", "streamable-http", "--host", "--port", "--root", "claude mcp add"):
        assert word in out
    for word in ("--token-file", "WARP_COMPILE_TOKEN", "--allow-host", "non-loopback address needs a token"):
        assert word in " ".join(out.split()), word


@pytest.mark.anyio
async def test_stdio_client_declared_roots(app: Path, server_tmp: Path, tmp_path: Path) -> None:
    """No --root: only what the client declares through roots/list is allowed."""
    other = tmp_path / "other"
    other.mkdir()

    async def list_roots(_ctx):  # type: ignore[no-untyped-def]
        return ListRootsResult(roots=[Root(uri=app.as_uri())])

    params = serve(app, server_tmp)
    params.args = ["-m", "warp_compile", "serve"]
    async with Client(params, list_roots_callback=list_roots) as client:
        ok = await client.call_tool("measure", {"command": [PY, "-c", "print(1)"], "cwd": str(app), "samples": 1})
        refused = await client.call_tool("measure", {"command": [PY, "-c", "print(1)"], "cwd": str(other)})
    assert not ok.is_error, ok.content
    assert refused.is_error and "outside the allowed roots" in refused.content[0].text


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.anyio
async def test_streamable_http_transport(app: Path, server_tmp: Path, tmp_path: Path) -> None:
    port = _free_port()
    proc = subprocess.Popen(
        [PY, "-m", "warp_compile", "serve", "--transport", "streamable-http", "--port", str(port), "--root", str(app)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=dict(os.environ, TMPDIR=str(server_tmp), PYTHONDONTWRITEBYTECODE="1"),
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=1):
                    break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise AssertionError(f"server did not start (exit code {proc.poll()})") from None
                await anyio.sleep(0.2)
        async with Client(f"http://127.0.0.1:{port}/mcp") as client:
            names = {t.name for t in (await client.list_tools()).tools}
            refused = await client.call_tool("measure", {"command": [PY, "-c", "1"], "cwd": str(tmp_path)})
    finally:
        proc.terminate()
        out, err = proc.communicate(timeout=30)
    assert names == {"measure", "diagnose", "fix", "compare", "compare_interleaved", "explain_mechanism"}
    assert refused.is_error and "outside the allowed roots" in refused.content[0].text
    assert out == b"", f"logs belong on stderr: {out[-500:]!r} / {err[-500:]!r}"


def _server_pids(root: Path) -> list[int]:
    """Pids of `warp-compile serve` processes started with this root (the SDK client does not expose its child)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"serve" in argv and str(root).encode() in argv:
            found.append(int(entry.name))
    return found


@pytest.mark.anyio
@pytest.mark.skipif(not Path("/proc").is_dir(), reason="finds the server process through /proc")
async def test_terminated_server_stops_the_measured_tree_and_removes_its_sandbox(app: Path, server_tmp: Path) -> None:
    """SIGTERM mid-measure (what a client sends when it quits): no process and no temp root may outlive the server."""
    pids_file = app / "pids.txt"
    async with anyio.create_task_group() as tg:

        async def call() -> None:
            try:
                async with Client(serve(app, server_tmp)) as client:
                    args = {"command": [PY, "slow_setsid.py"], "cwd": str(app), "samples": 1}
                    await client.call_tool("measure", args)
            except Exception:  # the server went away under the call, as intended
                pass

        tg.start_soon(call)
        with anyio.fail_after(30):
            while not (pids_file.exists() and len(pids_file.read_text().split()) == 2):
                await anyio.sleep(0.1)
        servers = _server_pids(app)
        assert servers
        for pid in servers:
            os.kill(pid, signal.SIGTERM)
        left_dirs, left_pids = await _nothing_left(app, server_tmp, wait_s=10)
        tg.cancel_scope.cancel()
    assert not left_dirs and not left_pids, (left_dirs, left_pids)
