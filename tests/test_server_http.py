"""`serve --transport streamable-http` cannot be abused: a real server subprocess on 127.0.0.1 (a free port), real
HTTP requests. Without the bearer token: 401; with it: 200; a foreign Host header: refused (DNS rebinding); a
non-loopback --host without a token: exit 2 before anything listens. Only loopback traffic."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx2 as httpx
import pytest

from warp_compile.server.http_access import TOKEN_ENV, check_host, is_loopback, security_settings

PY = sys.executable
TOKEN = "s3cret-token-for-the-test-0123456789"
INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "0"}},
}
HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != TOKEN_ENV}
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env.update(extra)
    return env


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _serve(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [PY, "-m", "warp_compile", "serve", "--transport", "streamable-http", *args],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        cwd=cwd,
    )


@pytest.fixture
def http_server(tmp_path: Path) -> Iterator[str]:
    """A token-protected server on 127.0.0.1; yields its MCP URL."""
    port = _free_port()
    proc = subprocess.Popen(
        [PY, "-m", "warp_compile", "serve", "--transport", "streamable-http", "--port", str(port)]
        + ["--root", str(tmp_path)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=_env(**{TOKEN_ENV: TOKEN, "TMPDIR": str(tmp_path)}),
        cwd=tmp_path,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=1):
                    break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    err = proc.stderr.read().decode() if proc.stderr else ""
                    raise AssertionError(f"server did not start (exit {proc.poll()}): {err[-1000:]}") from None
                time.sleep(0.2)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        proc.communicate(timeout=30)


def _post(url: str, **headers: str) -> httpx.Response:
    return httpx.post(url, content=json.dumps(INIT), headers={**HEADERS, **headers}, timeout=30)


def test_a_request_without_the_bearer_gets_401_and_with_it_200(http_server: str) -> None:
    missing = _post(http_server)
    wrong = _post(http_server, Authorization="Bearer " + TOKEN[:-1] + "x")
    not_bearer = _post(http_server, Authorization="Basic " + TOKEN)
    ok = _post(http_server, Authorization=f"Bearer {TOKEN}")
    assert missing.status_code == 401, missing.text
    assert "bearer" in missing.headers.get("www-authenticate", "").lower()
    assert wrong.status_code == 401, wrong.text
    assert not_bearer.status_code == 401, not_bearer.text
    assert ok.status_code == 200, ok.text
    assert "serverInfo" in ok.text and "warp-compile" in ok.text


def test_dns_rebinding_protection_stays_on_with_a_token(http_server: str) -> None:
    """A page on evil.example resolving to 127.0.0.1 still sends its own Host / Origin: refused before the MCP app."""
    auth = f"Bearer {TOKEN}"
    foreign_host = _post(http_server, Authorization=auth, Host="evil.example:80")
    foreign_origin = _post(http_server, Authorization=auth, Origin="http://evil.example")
    local_origin = _post(http_server, Authorization=auth, Origin="http://localhost:3000")
    assert foreign_host.status_code == 421, foreign_host.text
    assert foreign_origin.status_code == 403, foreign_origin.text
    assert local_origin.status_code == 200, local_origin.text


@pytest.mark.parametrize("host", ["0.0.0.0", "::"])
def test_a_non_loopback_host_without_a_token_exits_2(tmp_path: Path, host: str) -> None:
    proc = _serve(["--host", host, "--port", str(_free_port()), "--root", str(tmp_path)], _env(), tmp_path)
    assert proc.returncode == 2, proc.stderr
    assert proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "not loopback" in lines[0] and TOKEN_ENV in lines[0], proc.stderr
    assert "Traceback" not in proc.stderr


@pytest.mark.parametrize(
    "setup, expected",
    [
        ({TOKEN_ENV: "short"}, "at least 16 characters"),
        ({"file": "missing"}, "cannot read"),
        ({"file": "with space in the token text"}, "without spaces"),
    ],
)
def test_a_bad_token_is_one_line_and_exit_2(tmp_path: Path, setup: dict[str, str], expected: str) -> None:
    args = ["--port", str(_free_port()), "--root", str(tmp_path)]
    env = _env(**{k: v for k, v in setup.items() if k == TOKEN_ENV})
    if "file" in setup:
        token_file = tmp_path / "token.txt"
        if setup["file"] != "missing":
            token_file.write_text(setup["file"] + "\n")
        args += ["--token-file", str(token_file)]
    proc = _serve(args, env, tmp_path)
    assert proc.returncode == 2, proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and expected in proc.stderr, proc.stderr


def test_token_options_are_refused_under_stdio(tmp_path: Path) -> None:
    proc = subprocess.run(
        [PY, "-m", "warp_compile", "serve", "--token-file", str(tmp_path / "t"), "--root", str(tmp_path)],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        env=_env(),
    )
    assert proc.returncode == 2 and "only to --transport streamable-http" in proc.stderr, proc.stderr


def test_which_hosts_count_as_loopback() -> None:
    for host in ("127.0.0.1", "127.0.0.2", "::1", "[::1]", "localhost"):
        assert is_loopback(host), host
    for host in ("0.0.0.0", "::", "", "10.1.2.3", "192.168.0.1", "2001:db8::1"):
        assert not is_loopback(host), host
    check_host("0.0.0.0", TOKEN)  # with a token it is allowed


def test_allowed_hosts_name_the_bound_host_and_the_extra_names() -> None:
    s = security_settings("10.1.2.3", ["build-box.lan"])
    assert s.enable_dns_rebinding_protection
    assert {"127.0.0.1:*", "localhost:*", "[::1]:*", "10.1.2.3:*", "build-box.lan:*"} <= set(s.allowed_hosts)
    assert "http://build-box.lan:*" in s.allowed_origins
    assert not any("evil" in h for h in s.allowed_hosts)
    assert "[2001:db8::1]:*" in security_settings("2001:db8::1", []).allowed_hosts


@pytest.mark.anyio
async def test_the_sdk_client_works_with_the_bearer(http_server: str) -> None:
    """A real MCP session over HTTP with the token (the raw requests above show the 401 without it)."""
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    async with httpx.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"}, timeout=30) as http:
        async with Client(streamable_http_client(http_server, http_client=http)) as client:
            names = {t.name for t in (await client.list_tools()).tools}
    assert names == {"measure", "diagnose", "fix", "compare", "compare_interleaved", "explain_mechanism"}
