"""Output helpers shared by the subcommands: JSON to a file or stdout, text to the other stream."""

from __future__ import annotations

import sys
from pathlib import Path

from pydantic import BaseModel

from warp_compile.probe.errors import UsageError


def write_json(model: BaseModel, dest: str) -> None:
    text = model.model_dump_json(indent=2) + "\n"
    if dest == "-":
        sys.stdout.write(text)
        return
    path = Path(dest).expanduser()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"cannot write {dest}: {exc.strerror or exc}") from exc


def emit(model: BaseModel, text: str, json_dest: str | None) -> None:
    """JSON to --json (file or `-`); the human text to stdout, or to stderr when stdout carries the JSON."""
    if json_dest:
        write_json(model, json_dest)
    (sys.stderr if json_dest == "-" else sys.stdout).write(text.rstrip() + "\n")


def progress_printer(quiet: bool = False):  # type: ignore[no-untyped-def]
    def progress(message: str) -> None:
        if not quiet:
            sys.stderr.write(f"warp-compile: {message}\n")
            sys.stderr.flush()

    return progress
