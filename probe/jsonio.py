"""A model written as JSON to a file or to stdout: what the CLI's --json and the server's json_path share."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from .errors import UsageError
from .fmt import clip_path


def why(exc: OSError) -> str:
    return exc.strerror or str(exc)


def write_json(model: BaseModel | Any, dest: str) -> None:
    """A pydantic model (or plain JSON data) to `dest`: a file, or stdout for `-`. Never creates directories."""
    if isinstance(model, BaseModel):
        text = model.model_dump_json(indent=2) + "\n"
    else:
        text = json.dumps(model, indent=2) + "\n"
    if dest == "-":
        sys.stdout.write(text)
        return
    try:
        Path(dest).expanduser().write_text(text, encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"cannot write {clip_path(dest)}: {why(exc)}") from exc
