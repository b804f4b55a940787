"""The installed `warp-compile` console script (what users type), run as a real process: its entry point, the
help, a knowledge lookup, and bad input as one line with exit 2."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def script() -> str:
    """The script pip installed next to this interpreter (`.venv/bin/warp-compile`), not a module run."""
    found = shutil.which("warp-compile", path=str(Path(sys.executable).parent))
    assert found is not None, f"no warp-compile console script next to {sys.executable}: reinstall the project"
    return found


def _run(script: str, *args: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return subprocess.run(
        [script, *args], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120, check=False
    )


def test_help_lists_every_command(script: str, tmp_path: Path) -> None:
    r = _run(script, "--help", tmp_path=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("usage: warp-compile")
    for command in ("measure", "compare", "diagnose", "explain", "serve", "eval"):
        assert command in r.stdout


def test_explain_prints_the_bundled_mechanism(script: str, tmp_path: Path) -> None:
    r = _run(script, "explain", "CS-3", tmp_path=tmp_path)
    assert r.returncode == 0, r.stderr
    title = next(ln for ln in (ROOT / "knowledge" / "CS-3.md").read_text().splitlines() if ln.startswith("title:"))
    assert r.stdout.splitlines()[0] == "CS-3  " + title.split(":", 1)[1].strip()


def test_bad_input_is_one_line_and_exit_2(script: str, tmp_path: Path) -> None:
    r = _run(script, "explain", "CS-99", tmp_path=tmp_path)
    assert r.returncode == 2
    assert r.stdout == "" and "Traceback" not in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and r.stderr.startswith("warp-compile: error: unknown mechanism")
