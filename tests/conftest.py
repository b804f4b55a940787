"""Shared, expensive things: real measurements of the bundled fixture projects, taken once per session."""

from __future__ import annotations

import json
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
def measured() -> Callable[..., object]:
    """measured(name, variant="project", samples=1) -> Report, cached for the session."""
    from warp_compile.probe.measure import measure

    cache: dict[tuple[str, str, int], object] = {}

    def get(name: str, variant: str = "project", samples: int = 1):  # type: ignore[no-untyped-def]
        key = (name, variant, samples)
        if key not in cache:
            cache[key] = measure(fixture_command(name), FIXTURES / name / variant, samples=samples, timeout_s=300)
        return cache[key]

    return get


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--slow", action="store_true", help="also run the slow tests (real Warp compiles, many runs)")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if config.getoption("--slow"):
        return
    skip = pytest.mark.skip(reason="slow: run with --slow")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)


@pytest.fixture
def anyio_backend() -> str:
    """The MCP SDK's client and server run on asyncio in every async test."""
    return "asyncio"
