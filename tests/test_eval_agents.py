"""The agent recipes in evals/agents/, run under `warp-compile eval` with stand-in agents on PATH.

Claude Code, Codex and Cursor cannot run here. Each stand-in (named `claude`, `codex`, `cursor-agent`) parses the
command line its recipe gives it the way the real tool would, starts the MCP server from that configuration with
the real MCP SDK client and lists its tools, finds the answer path in the prompt it was given, and writes an
answer. So the recipes' flags, MCP configuration and the contract are exercised; the model is not.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import pytest

from warp_compile.cli import main

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "evals" / "fixtures"

STANDIN = r'''
import json, os, re, sys, tomllib
from pathlib import Path

import anyio
from mcp import Client, StdioServerParameters

role = Path(sys.argv[0]).name
args = sys.argv[1:]
log = {"role": role, "argv": args, "cwd": os.getcwd()}


def opt(name):
    return args[args.index(name) + 1] if name in args else None


if role == "claude":
    prompt = opt("-p")
    server = json.loads(Path(opt("--mcp-config")).read_text())["mcpServers"]["warp-compile"]
    allowed = opt("--allowedTools").split(",")
elif role == "codex":
    assert args[0] == "exec", args
    prompt = args[-1]
    conf = {}
    for i, a in enumerate(args):
        if a == "-c":
            one = tomllib.loads(args[i + 1].replace("=", " = ", 1))  # as codex reads a -c override
            conf.update(one["mcp_servers"]["warp-compile"])
    server = conf
    allowed = []
else:
    prompt = opt("-p")
    server = json.loads(Path(".cursor/mcp.json").read_text())["mcpServers"]["warp-compile"]
    allowed = []


async def tools():
    params = StdioServerParameters(command=server["command"], args=server["args"])
    async with Client(params) as client:
        return [t.name for t in (await client.list_tools()).tools]

log["tools"] = anyio.run(tools)
log["unknown_allowed"] = [t for t in allowed if t.startswith("mcp__warp-compile__")
                          and t.split("__")[-1] not in log["tools"]]
answer = re.search(r"for this run: (\S+?)\)", prompt).group(1)
log["answer_env_matches"] = answer == os.environ.get("WARP_COMPILE_ANSWER")
Path(answer).write_text(json.dumps({"findings": [], "summary": "stand-in"}))
Path(os.environ["STANDIN_LOG"]).write_text(json.dumps(log))
print("stand-in done")
'''


@pytest.mark.parametrize("recipe, binary", [
    ("claude.sh", "claude"),
    # each starts the MCP server once (several seconds on a loaded machine): one recipe in the default run
    pytest.param("codex.sh", "codex", marks=pytest.mark.slow),
    pytest.param("cursor.sh", "cursor-agent", marks=pytest.mark.slow),
])
def test_recipe_speaks_the_contract_with_a_stand_in(recipe, binary, tmp_path, monkeypatch, capsys):
    bindir = tmp_path / "bin"
    bindir.mkdir()
    standin = bindir / binary
    standin.write_text(f"#!{sys.executable}\n{STANDIN}")
    standin.chmod(0o755)
    wc = shutil.which("warp-compile", path=str(Path(sys.executable).parent)) or shutil.which("warp-compile")
    assert wc, "warp-compile is not installed next to this interpreter"
    monkeypatch.setenv("PATH", f"{bindir}{os.pathsep}{Path(wc).parent}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("STANDIN_LOG", str(tmp_path / "log.json"))
    out = tmp_path / "card.json"
    code = main(["eval", "--case", "wave_step", "--quiet", "--out", str(tmp_path / "runs"), "--json", str(out),
                 "--", str(ROOT / "evals" / "agents" / recipe)])
    card = json.loads(out.read_text())
    case = card["cases"][0]
    log = json.loads((tmp_path / "log.json").read_text())
    assert code == 0, case
    assert {"measure", "diagnose", "compare", "explain_mechanism"} <= set(log["tools"]), log
    assert log["unknown_allowed"] == [] and log["answer_env_matches"], log
    assert Path(log["cwd"]).name == "project" and not Path(log["cwd"]).exists()  # the private copy, removed
    # an empty answer on a negative case, and the copy left as it was (cursor's .cursor/ removed again)
    assert case["diagnosis"]["score"] == 1.0 and case["fix"]["changed"] is False, case
    trial = tmp_path / "runs" / "wave_step" / "trial-1"
    assert (trial / "stdout.txt").read_text().strip().endswith("stand-in done")
    assert case["trials"][0]["agent"]["exit_status"] == 0 and case["trials"][0]["agent"]["wall_s"] > 0
