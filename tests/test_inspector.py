"""List the tools through the MCP Inspector CLI, as a third-party client would. Skipped cleanly without Node >= 20.

The Inspector is pinned: 0.15.0 runs on Node 20 (checked with Node 20.20); newer releases need Node >= 22.19.
The command (documented in the README):

    npx -y @modelcontextprotocol/inspector@0.15.0 --cli warp-compile serve --root . -- --method tools/list

Under `--cli`, everything before `--` is the server command; the inspector's own options come after it.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

MIN_NODE = (20, 0)
INSPECTOR = "@modelcontextprotocol/inspector@0.15.0"
TOOLS = {"measure", "diagnose", "fix", "compare", "compare_interleaved", "explain_mechanism"}


def node_version() -> tuple[int, int] | None:
    node = shutil.which("node")
    if node is None:
        return None
    try:
        out = subprocess.run([node, "--version"], capture_output=True, text=True, timeout=20).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        return None
    m = re.match(r"v?(\d+)\.(\d+)", out)
    return (int(m.group(1)), int(m.group(2))) if m else None


def _skip_reason() -> str | None:
    if shutil.which("npx") is None:
        return "npx is not installed"
    v = node_version()
    if v is None:
        return "node is not installed"
    if v < MIN_NODE:
        return f"the MCP Inspector CLI needs Node >= {MIN_NODE[0]}.{MIN_NODE[1]}; this machine has {v[0]}.{v[1]}"
    return None


@pytest.mark.slow  # npx fetches the Inspector from the npm registry the first time (then ~10 s)
@pytest.mark.skipif(_skip_reason() is not None, reason=_skip_reason() or "")
def test_inspector_cli_lists_the_tools(tmp_path: Path) -> None:
    npx = shutil.which("npx")
    assert npx is not None
    cmd = [
        npx,
        "-y",
        INSPECTOR,
        "--cli",
        sys.executable,
        "-m",
        "warp_compile",
        "serve",
        "--root",
        str(tmp_path),
        "--",
        "--method",
        "tools/list",
    ]
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600, cwd=tmp_path, env=env)
    if proc.returncode != 0 and re.search(r"ENOTFOUND|ETIMEDOUT|EAI_AGAIN|ECONNREFUSED|network", proc.stderr):
        pytest.skip(f"npx could not fetch the inspector: {proc.stderr.strip().splitlines()[-1]}")
    assert proc.returncode == 0, proc.stderr[-3000:]
    data = json.loads(proc.stdout)
    data = data.get("result", data)
    assert {t["name"] for t in data["tools"]} == TOOLS, proc.stdout[-3000:]
    assert all(t.get("outputSchema", {}).get("type") == "object" for t in data["tools"])
