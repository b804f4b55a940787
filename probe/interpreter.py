"""Which interpreter a measured command runs, and what to say when it cannot import warp.

A bare `python` is resolved on warp-compile's own PATH, which may be another environment than the project's
(an MCP server started from a GUI client usually is). Reports name the resolved program, and a run that could
not import warp names the interpreter that lacked it and points at the project's virtual environment.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from .events import RunEvents


def resolve_interpreter(command: list[str], cwd: Path) -> str | None:
    """The program the command runs, as an absolute path: argv[0] (after an `env VAR=... [-opts]` prefix) looked up
    on PATH, or relative to cwd when it has a slash. Symlinks are kept (a venv's python is one)."""
    argv = list(command)
    if argv and os.path.basename(argv[0]) == "env":
        argv = argv[1:]
        while argv and (argv[0].startswith("-") or ("=" in argv[0] and not argv[0].startswith("/"))):
            takes_value = argv[0] in ("-u", "--unset", "-C", "--chdir")
            argv = argv[2:] if takes_value else argv[1:]
    if not argv:
        return None
    prog = argv[0]
    if os.sep in prog or (os.altsep and os.altsep in prog):
        path = Path(prog).expanduser()
        return os.path.abspath(path if path.is_absolute() else cwd / path)
    found = shutil.which(prog)
    return os.path.abspath(found) if found else None


def _project_python(cwd: Path) -> Path | None:
    """A virtual environment's interpreter in cwd or a parent (.venv, venv, env): the likely project interpreter."""
    for d in (cwd, *cwd.parents):
        for name in (".venv", "venv", "env"):
            for exe in ("bin/python", "Scripts/python.exe"):
                candidate = d / name / exe
                if candidate.is_file():
                    return candidate
    return None


def missing_warp(events: RunEvents, stderr: str) -> bool:
    """The run could not import warp: the hook saw the import find nothing, or Python said so."""
    return events.warp_missing or "No module named 'warp'" in stderr


def no_warp_hint(interpreter: str | None, cwd: Path) -> str:
    """One line: which interpreter lacked warp, and what to run instead."""
    who = interpreter or "the interpreter"
    venv = _project_python(cwd)
    if venv is not None and (interpreter is None or os.path.abspath(venv) != interpreter):
        fix = f"pass the project's interpreter, e.g. `-- {venv} -m ...`"
    else:
        fix = "pass the project's interpreter (the python of the environment where warp-lang is installed)"
    return f"{who} cannot import warp (No module named 'warp'); {fix}"
