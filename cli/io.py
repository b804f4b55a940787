"""Helpers shared by the subcommands: input checks made before anything runs, JSON to a file or stdout, text to
the other stream."""

from __future__ import annotations

import argparse
import atexit
import math
import os
import shutil
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from ..probe.errors import UsageError
from ..probe.fmt import CLIP, PATH_CLIP, clip, clip_path  # noqa: F401 (the CLI's input checks)
from ..probe.jsonio import why, write_json  # noqa: F401 (emit, and the subcommands)


def seconds(text: str) -> float:
    """argparse type of --timeout: a finite number of seconds above zero (nan and inf would never time out)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected seconds (a number), got {clip(text)!r}") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"must be a finite number of seconds above 0, got {clip(text)!r}")
    return value


def check_dir(value: str, what: str) -> Path:
    """An existing directory given by the user (`what` names the option); returns it resolved."""
    p = Path(value).expanduser()
    try:
        ok = p.is_dir()
        resolved = p.resolve() if ok else p
    except OSError as exc:  # e.g. a name too long for the file system
        raise UsageError(f"{what} {clip_path(value)}: {why(exc)}") from None
    if not ok:
        raise UsageError(f"{what} {clip_path(value)}: not a directory")
    return resolved


def _same_file(a: Path, b: Path) -> bool:
    try:
        if a.exists() and b.exists():
            return os.path.samefile(a, b)
        return a.resolve() == b.resolve()
    except OSError:
        return False


def check_json_dest(dest: str | None, inputs: Iterable[str] = ()) -> None:
    """Refuse a --json destination that cannot be written, before anything runs (a measurement can take minutes).

    `-` is stdout. Otherwise the parent must be an existing directory (none is created), the target must not be a
    directory, and it must not be one of the `inputs` (the reports this command reads).
    """
    if dest is None or dest == "-":
        return
    if not dest.strip():
        raise UsageError("--json needs a file name (or `-` for stdout)")
    path = Path(dest).expanduser()
    shown = clip_path(dest)
    try:
        if path.is_dir():
            raise UsageError(f"cannot write {shown}: it is a directory; give a file name inside it")
        parent = path.parent
        if not parent.exists():
            raise UsageError(f"cannot write {shown}: directory {clip_path(parent)} does not exist (it is not created)")
        if not parent.is_dir():
            raise UsageError(f"cannot write {shown}: {clip_path(parent)} is not a directory")
        if path.exists() and not os.access(path, os.W_OK):
            raise UsageError(f"cannot write {shown}: permission denied")
        if not path.exists() and not os.access(parent, os.W_OK | os.X_OK):
            raise UsageError(f"cannot write {shown}: permission denied in {clip_path(parent)}")
    except OSError as exc:
        raise UsageError(f"cannot write {shown}: {why(exc)}") from None
    for src in inputs:
        if _same_file(path, Path(src).expanduser()):
            raise UsageError(
                f"--json {shown} is the input report {clip_path(src)}: it would be overwritten; pick another file"
            )


def emit(model: BaseModel | Any, text: str, json_dest: str | None) -> None:
    """JSON to --json (file or `-`); the human text to stdout, or to stderr when stdout carries the JSON."""
    _StatusLine.clear()
    if json_dest:
        write_json(model, json_dest)
    (sys.stderr if json_dest == "-" else sys.stdout).write(text.rstrip() + "\n")


class _StatusLine:
    """The progress line on a terminal: rewritten in place, cleared before any other output."""

    active = False

    @classmethod
    def show(cls, text: str) -> None:
        width = shutil.get_terminal_size((100, 20)).columns - 1
        sys.stderr.write("\r\x1b[2K" + (text if len(text) <= width else text[: width - 1] + "…"))
        sys.stderr.flush()
        cls.active = True

    @classmethod
    def clear(cls) -> None:
        if cls.active:
            cls.active = False
            try:
                sys.stderr.write("\r\x1b[2K")
                sys.stderr.flush()
            except (OSError, ValueError):
                pass


atexit.register(_StatusLine.clear)


def end_progress() -> None:
    """Clear the terminal status line (if any) before other output, e.g. an error line."""
    _StatusLine.clear()


def progress_printer(quiet: bool = False, live: bool | None = None):  # type: ignore[no-untyped-def]
    """Progress on stderr: a status line rewritten in place on a terminal (`live`, default: stderr is a tty),
    plain lines otherwise (logs, pipes, CI)."""
    if live is None:
        try:
            live = sys.stderr.isatty() and os.environ.get("TERM") != "dumb"
        except (AttributeError, ValueError):
            live = False

    def progress(message: str) -> None:
        if quiet:
            return
        if live:
            _StatusLine.show(f"warp-compile: {message}")
        else:
            sys.stderr.write(f"warp-compile: {message}\n")
            sys.stderr.flush()

    return progress
