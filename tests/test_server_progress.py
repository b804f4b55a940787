"""Over stdio with the real SDK client: `measure` on a five-module app sends progress naming each module while
it builds (not in a burst at the end of the run)."""

from __future__ import annotations

import sys
import textwrap
import time
from pathlib import Path

import pytest
from mcp import Client

from tests.test_server_stdio import serve

PY = sys.executable
MODULES = [f"app.m{i}" for i in range(5)]


def five_module_app(root: Path) -> Path:
    pkg = root / "app"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    for i in range(5):
        (pkg / f"m{i}.py").write_text(textwrap.dedent(f"""\
            import warp as wp

            @wp.kernel
            def k{i}(a: wp.array(dtype=float)):
                t = wp.tid()
                a[t] = a[t] + float({i})
            """))
    launches = "".join(f"wp.launch(m{i}.k{i}, dim=4, inputs=[a], device='cpu')\n" for i in range(5))
    (pkg / "__main__.py").write_text(
        "import warp as wp\nfrom app import m0, m1, m2, m3, m4\n"
        "a = wp.zeros(4, dtype=float, device='cpu')\n" + launches + "wp.synchronize()\n"
    )
    return root


@pytest.mark.slow
@pytest.mark.anyio
async def test_measure_progress_names_each_module_while_it_builds(tmp_path: Path) -> None:
    root = five_module_app(tmp_path / "proj")
    server_tmp = tmp_path / "server-tmp"
    server_tmp.mkdir()
    got: list[tuple[float, str]] = []

    async def progress(p: float, total: float | None, message: str | None) -> None:
        got.append((time.monotonic(), message or ""))

    async with Client(serve(root, server_tmp)) as client:
        r = await client.call_tool(
            "measure",
            {"command": [PY, "-m", "app"], "cwd": str(root), "samples": 1},
            progress_callback=progress,
            read_timeout_seconds=600,
        )
        returned = time.monotonic()
    assert not r.is_error, r.content
    messages = [m for _, m in got]

    def when(text: str) -> tuple[int, float]:
        i = next(i for i, m in enumerate(messages) if text in m)
        return i, got[i][0]

    for n, module in enumerate(MODULES, start=1):
        start_i, _ = when(f"compiling {module} ({n} of ?)")
        built_i, _ = when(f"{module} built in")
        assert start_i < built_i, messages
    _, first_start = when("compiling app.m0")
    _, last_built = when("app.m4 built in")
    _, warm = when("sample 1: warm run")
    # streamed while the cold run went: the five builds are spread over their real compile time, all before the
    # warm run started, and everything arrived before the result
    assert last_built - first_start > 0.3, got
    assert last_built <= warm <= returned
