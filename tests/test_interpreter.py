"""The interpreter is explicit: reports name the resolved argv[0] and the child's sys.executable, and a run whose
interpreter lacks warp says which one and points at the project's environment."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from warp_compile.cli import main
from warp_compile.probe.interpreter import resolve_interpreter
from warp_compile.probe.measure import measure
from warp_compile.probe.render.report import render_report


def test_argv0_resolution(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    bindir = tmp_path / "bin"
    bindir.mkdir()
    tool = bindir / "mypython"
    tool.write_text("#!/bin/sh\n")
    tool.chmod(0o755)
    monkeypatch.setenv("PATH", str(bindir))
    assert resolve_interpreter(["mypython", "-m", "app"], tmp_path) == str(tool)
    assert resolve_interpreter(["env", "-u", "X", "A=1", "mypython", "-m", "app"], tmp_path) == str(tool)
    assert resolve_interpreter(["./bin/mypython"], tmp_path) == str(tool)
    assert resolve_interpreter(["not-there-xyz"], tmp_path) is None


def test_report_names_the_interpreter(tmp_path: Path) -> None:
    report = measure([sys.executable, "-c", "print(1)"], tmp_path, samples=1)
    assert report.interpreter == os.path.abspath(sys.executable)
    assert report.python_executable == sys.executable
    assert f"interpreter {sys.executable}" in render_report(report)


def test_interpreter_without_warp_is_named_with_the_project_env(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    bare = tmp_path / "bare"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(bare)], check=True)
    project = tmp_path / "project"
    (project / "app").mkdir(parents=True)
    (project / "app" / "__main__.py").write_text("import warp\n")
    venv_python = project / ".venv" / "bin" / "python"  # where the project's environment would be
    venv_python.parent.mkdir(parents=True)
    venv_python.write_text("")
    code = main(["measure", "--samples", "1", "--quiet", "--cwd", str(project), "--", str(bare / "bin" / "python"),
                 "-m", "app"])
    err = capsys.readouterr().err
    assert code == 1
    first = err.splitlines()[0]
    assert first.startswith("warp-compile: error: every sample failed")
    assert f"{bare / 'bin' / 'python'} cannot import warp" in first
    assert f"-- {venv_python} -m" in first
    assert "Traceback" not in first
