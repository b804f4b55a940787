"""Which interpreter runs the measured command: a bare `python` is resolved, and the result says so.

An MCP client started from a GUI rarely has the project's venv on PATH, so `["python", "app.py"]` silently runs
some other Python (often one without Warp). The tools resolve a bare `python` / `python3` / `python3.11` on the
server's PATH before running (the child would find the same one), run that absolute path, and put a note in the
result naming it, with the advice to pass the project's interpreter instead.
"""

from __future__ import annotations

import re
import shutil
from typing import Any

from ..probe.errors import UsageError
from ..probe.models import Warn, WarningCode, warn

BARE_PYTHON = re.compile(r"^python(\d+(\.\d+)?)?$")
ADVICE = "pass the project's interpreter (the absolute path of its venv python) as command[0]"


def resolve_python(command: list[str]) -> tuple[list[str], Warn | None]:
    """(the argv to run, a warning when command[0] was a bare python name and was resolved)."""
    if not command or not BARE_PYTHON.match(command[0]):
        return list(command), None
    found = shutil.which(command[0])
    if found is None:
        raise UsageError(f"command[0] {command[0]!r} is not on the server's PATH: {ADVICE}")
    return [found, *command[1:]], warn(WarningCode.PYTHON_RESOLVED, name=command[0], path=found, advice=ADVICE)


def interpreter_line(report: Any) -> str:
    """One line naming the interpreter that ran and its Warp (fields another module may add are read if present)."""
    interp = getattr(report, "interpreter", None) or (report.command[0] if report.command else "?")
    version = getattr(report, "python", None)
    warp = getattr(report, "warp_version", None)
    parts = [f"Python {version}" if version else None, f"warp {warp}" if warp else "warp not imported"]
    return f"interpreter: {interp} ({', '.join(p for p in parts if p)})"
