"""Benchmark: how much of an agent's context each MCP answer costs, measured against the real server over stdio.

    python bench/mcp_sizes.py [--out bench/MCP_SIZES.md] [--no-runs]

Starts `warp-compile serve --root <repo>` as a subprocess with the SDK's stdio client and records the size of
each answer as the JSON the SDK puts on the wire (`model_dump_json(by_alias=True, exclude_none=True)`, no
whitespace): tools/list, explain_mechanism (CS-3 and the largest), the resources, and typical tool results.
Tokens are estimated as bytes / 4 (a rough rule for English and JSON; real tokenizers differ by tens of percent).

The typical results come from the bundled `particle_prep` fixture (CS-3): a real `measure` (1 sample, Warp CPU
compiles), `diagnose` of that report, `compare` of the saved golden project/fixed reports, and a one-pair
`compare_interleaved` of project against fixed. `--no-runs` skips the two that run Warp.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path

import anyio
from mcp import Client, MCPError, StdioServerParameters

REPO = Path(__file__).resolve().parent.parent
FIXTURE = REPO / "evals" / "fixtures" / "particle_prep"
GOLDEN = REPO / "tests" / "golden" / "particle_prep"
LIMIT = 12 * 1024


def wire(model) -> int:  # type: ignore[no-untyped-def]
    return len(model.model_dump_json(by_alias=True, exclude_none=True).encode())


def row(name: str, what: str, size: int) -> tuple[str, str, int, int]:
    return (name, what, size, (size + 3) // 4)


async def collect(python: str, runs: bool, cwd: Path = REPO) -> list[tuple[str, str, int, int]]:
    """The rows, from the server installed in `python`, started in `cwd` (its own tree: `-m` imports from there)."""
    env = {"PYTHONDONTWRITEBYTECODE": "1", "PATH": os.environ.get("PATH", "")}
    if os.environ.get("TMPDIR"):
        env["TMPDIR"] = os.environ["TMPDIR"]
    params = StdioServerParameters(
        command=python, args=["-m", "warp_compile", "serve", "--root", str(REPO)], env=env, cwd=str(cwd)
    )
    rows = []
    async with Client(params) as c:
        listed = await c.list_tools()
        rows.append(row("tools/list", f"{len(listed.tools)} tools, compact output schemas", wire(listed)))
        for t in listed.tools:
            rows.append(row(f"  {t.name}", "its entry in tools/list", wire(t)))

        sizes = {}
        for m in json.loads((await c.read_resource("warp-compile://mechanisms")).contents[0].text):
            sizes[m["id"]] = wire(await c.call_tool("explain_mechanism", {"mechanism": m["id"]}))
        largest = max(sizes, key=lambda k: sizes[k])
        rows.append(row('explain_mechanism("CS-3")', "Markdown once as text + fields", sizes["CS-3"]))
        rows.append(row(f'explain_mechanism("{largest}")', "the largest mechanism", sizes[largest]))
        with_sections = await c.call_tool("explain_mechanism", {"mechanism": "CS-3", "sections": True})
        if not with_sections.is_error:  # an older server has no such parameter
            rows.append(
                row('explain_mechanism("CS-3", sections=true)', "every section, on request", wire(with_sections))
            )

        for uri, what in [
            ("warp-compile://roots", "allowed roots"),
            ("warp-compile://mechanisms", "list of mechanisms"),
            ("warp-compile://mechanisms/CS-3", "full Markdown of CS-3"),
        ]:
            try:
                rows.append(row(f"resource {uri.split('://')[1]}", what, wire(await c.read_resource(uri))))
            except MCPError:  # an older server has no roots resource
                pass

        before, after = str(GOLDEN / "project.report.json"), str(GOLDEN / "fixed.report.json")
        compared = await c.call_tool("compare", {"before": before, "after": after})
        assert not compared.is_error, compared.content
        rows.append(row("compare (two report files)", "particle_prep project vs fixed", wire(compared)))
        diagnosed = await c.call_tool("diagnose", {"report": before})
        assert not diagnosed.is_error, diagnosed.content
        rows.append(row("diagnose (report file)", "particle_prep: one CS-3 finding", wire(diagnosed)))

        if runs:
            command = [sys.executable, "-m", "particle_prep"]
            args = {"command": command, "cwd": str(FIXTURE / "project"), "samples": 1}
            measured = await c.call_tool("measure", args, read_timeout_seconds=900)
            assert not measured.is_error, measured.content
            rid = measured.structured_content["report_id"]
            rows.append(row("measure (1 sample)", "particle_prep, real Warp CPU compiles", wire(measured)))
            index = await c.read_resource(f"warp-compile://reports/{rid}")
            rows.append(row("resource reports/{id}", "summary + index of parts", wire(index)))
            for part, info in json.loads(index.contents[0].text).get("parts", {}).items():  # older: no parts
                if part in ("full", "builds", "launches"):
                    got = await c.read_resource(info["uri"])
                    rows.append(row(f"resource reports/{{id}}/{part}", "on request", wire(got)))
            diag = await c.call_tool("diagnose", {"report": rid})
            rows.append(row("diagnose (report_id)", "of that measurement", wire(diag)))
            inter = await c.call_tool(
                "compare_interleaved",
                {
                    "command": command,
                    "before_cwd": str(FIXTURE / "project"),
                    "after_cwd": str(FIXTURE / "fixed"),
                    "samples": 1,
                    "warmup": 0,
                },
                read_timeout_seconds=900,
            )
            if not inter.is_error:  # an older server has no such tool
                rows.append(row("compare_interleaved (1 pair)", "particle_prep project vs fixed", wire(inter)))
    return rows


def render(rows: list[tuple[str, str, int, int]], before: dict[str, int], label: str, seconds: float) -> str:
    out = [
        "# MCP answer sizes",
        "",
        "Measured by `python bench/mcp_sizes.py` against the real server over stdio (SDK client). Bytes are the JSON",
        "the SDK sends (no whitespace); tokens are estimated as bytes / 4. Bound checked by tests: tools/list and",
        f"every explain_mechanism result under {LIMIT} bytes (tests/test_server_lean.py).",
        "",
        f"Recorded {time.strftime('%Y-%m-%d')} on {platform.machine()}, Python {platform.python_version()}, "
        f"in {seconds:.0f} s.",
    ]
    if before:
        out += ["", f"`before`: the same answers from {label}, measured in the same run (`--before PYTHON`)."]
    head = "| answer | what | bytes | ~tokens |" + (" before (bytes) |" if before else "")
    out += ["", head, "| --- | --- | ---: | ---: |" + (" ---: |" if before else "")]
    for n, w, b, t in rows:
        line = f"| {n} | {w} | {b:,} | {t:,} |"
        if before:
            line += f" {before[n]:,} |" if n in before else " - |"
        out.append(line)
    return "\n".join(out) + "\n"


def _head(where: str) -> str:
    from subprocess import run

    out = run(["git", "-C", where, "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    return out.stdout.strip() or "?"


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", default=str(REPO / "bench" / "MCP_SIZES.md"))
    p.add_argument("--no-runs", action="store_true", help="skip measure and compare_interleaved (they run Warp)")
    p.add_argument("--before", metavar="PYTHON", help="also measure the server installed in this interpreter")
    ns = p.parse_args()
    started = time.monotonic()
    rows = anyio.run(collect, sys.executable, not ns.no_runs)
    before: dict[str, int] = {}
    label = ""
    if ns.before:
        from subprocess import check_output

        version = [
            ns.before,
            "-c",
            "import warp_compile, os; print(os.path.dirname(os.path.dirname(warp_compile.__file__)))",
        ]
        where = check_output(version, text=True, cwd="/").strip()
        label = f"the server in {where} (git {_head(where)})"
        before = {n: b for n, _, b, _ in anyio.run(collect, ns.before, not ns.no_runs, Path(where))}
    text = render(rows, before, label, time.monotonic() - started)
    Path(ns.out).write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
