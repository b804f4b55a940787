"""Shared, expensive things: real measurements of the bundled fixture projects, taken once per session."""

from __future__ import annotations

import fcntl
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "evals" / "fixtures"


def fixture_case(name: str) -> dict:
    return json.loads((FIXTURES / name / "case.json").read_text())


def fixture_command(name: str) -> list[str]:
    """The case's command with `python` bound to this interpreter (the one that has warp installed)."""
    return [sys.executable if c == "python" else c for c in fixture_case(name)["command"]]


@pytest.fixture(scope="session")
def measured(tmp_path_factory: pytest.TempPathFactory) -> Callable[..., object]:
    """measured(name, variant="project", samples=1) -> Report, taken once per test run.

    Under pytest-xdist every worker has its own session, so the reports also go to a folder the workers share (the
    parent of each worker's base temp), one file per key behind a lock: the first worker that asks measures, the
    others read its report."""
    from warp_compile.probe.measure import measure
    from warp_compile.probe.models import Report

    cache: dict[tuple[str, str, int], object] = {}
    base = tmp_path_factory.getbasetemp()
    shared = (base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base) / "measured-reports"
    shared.mkdir(parents=True, exist_ok=True)

    def get(name: str, variant: str = "project", samples: int = 1):  # type: ignore[no-untyped-def]
        key = (name, variant, samples)
        if key not in cache:
            path = shared / f"{name}-{variant}-{samples}.json"
            with open(shared / f"{path.name}.lock", "w") as lock:
                fcntl.flock(lock, fcntl.LOCK_EX)
                if path.exists():
                    cache[key] = Report.model_validate_json(path.read_text())
                else:
                    rep = measure(fixture_command(name), FIXTURES / name / variant, samples=samples, timeout_s=300)
                    path.write_text(rep.model_dump_json())
                    cache[key] = rep
        return cache[key]

    return get


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--slow", action="store_true", help="also run the slow tests (real Warp compiles, many runs)")
    parser.addoption(
        "--heavy",
        action="store_true",
        help="also run the heavy tier (implies --slow): a minute or more each, many interleaved runs or CPU burners",
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    heavy = config.getoption("--heavy")
    slow = heavy or config.getoption("--slow")
    for item in items:
        if "heavy" in item.keywords and not heavy:
            item.add_marker(pytest.mark.skip(reason="heavy: run with --heavy"))
        elif "slow" in item.keywords and not slow:
            item.add_marker(pytest.mark.skip(reason="slow: run with --slow"))


@pytest.fixture
def anyio_backend() -> str:
    """The MCP SDK's client and server run on asyncio in every async test."""
    return "asyncio"
