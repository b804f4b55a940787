"""Why a candidate's copy did not run, said plainly: its edit does not parse, or its error names a line the edit made.

Like `cargo fix` rebuilding after it applies a suggestion, the fix engine compiles every Python file a candidate's
edits changed before it runs anything: an edit that does not parse is an invalid candidate with the line and the
message, and costs no program run. When a copy that parses still fails in a measured run, the tail of its stderr is
shown, and the failure is put on the tool's own edit when the traceback (or the SyntaxError) names a line the
edit inserted or changed, or when the original ran fine on the same command and only the copy failed.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from ..models.diagnosis import Edit
from .edits import split_lines

TAIL_LINES = 6
_FRAME = re.compile(r'File "([^"]+)", line (\d+)')


def edited_spans(edits: Iterable[Edit]) -> dict[str, list[tuple[int, int]]]:
    """{file: [(first, last) line of each edit in the edited file]}: where the edit's own lines are after it was
    applied (a deletion spans the line that follows it, where the change shows)."""
    by_file: dict[str, list[Edit]] = {}
    for e in edits:
        by_file.setdefault(e.file, []).append(e)
    out: dict[str, list[tuple[int, int]]] = {}
    for file, group in by_file.items():
        shift = 0
        spans = []
        for e in sorted(group, key=lambda e: (e.start_line, e.end_line)):
            added = len(split_lines(e.new))
            removed = 0 if e.create else max(e.end_line - e.start_line + 1, 0)
            first = e.start_line + shift
            spans.append((first, first + max(added, 1) - 1))
            shift += added - removed
        out[file] = spans
    return out


def _compiles(text: str, name: str) -> SyntaxError | None:
    try:
        compile(text, name, "exec", dont_inherit=True)
    except SyntaxError as exc:
        return exc
    except ValueError:  # a NUL byte: not Python source at all
        return SyntaxError("source code cannot contain null bytes")
    return None


def parse_problem(originals: Mapping[str, bytes], edited: Mapping[str, str], edits: Iterable[Edit]) -> str | None:
    """Why the edited copy cannot run, when an edited Python file no longer parses though the original did (a file
    that did not parse here before, e.g. newer syntax than this interpreter knows, is left to the run); else None."""
    spans = edited_spans(edits)
    for rel, text in sorted(edited.items()):
        if not rel.endswith(".py"):
            continue
        before = originals.get(rel)
        if before is not None:
            try:
                if _compiles(before.decode("utf-8-sig"), rel) is not None:
                    continue
            except UnicodeDecodeError:
                continue
        err = _compiles(text.removeprefix("\ufeff"), rel)
        if err is None:
            continue
        line = err.lineno or 0
        near = any(a - 1 <= line <= b + 1 for a, b in spans.get(rel, []))
        whose = ("at a line the edit wrote" if near else "after the edit") + (
            "; the original parses" if before is not None else "")
        return (f"invalid edit: {rel}:{line}: {type(err).__name__}: {err.msg} ({whose}): the tool's own edit broke "
                "the file, so the candidate was not run")
    return None


def stderr_tail(text: str, n: int = TAIL_LINES) -> list[str]:
    lines = [ln.rstrip() for ln in text.strip().splitlines() if ln.strip()]
    return lines[-n:]


def failure_cause(tail: str, edits: Iterable[Edit], original_ok: bool) -> str:
    """One sentence on who caused a failed run of a candidate's copy, read from its stderr tail."""
    edits = list(edits)
    spans = edited_spans(edits)
    for path, line in reversed(_FRAME.findall(tail)):
        path = path.replace("\\", "/")
        if "/site-packages/" in path or "/dist-packages/" in path:
            continue  # an installed file of the same name is not the one the edit changed
        for rel, ranges in spans.items():
            if path.endswith("/" + rel) or path == rel:
                if any(a <= int(line) <= b for a, b in ranges):
                    return f"the tool's own edit caused it: the error names {rel}:{line}, a line the edit wrote"
    if original_ok:
        return ("the original ran fine on the same command and only the edited copy failed: the edit is the one "
                "difference between them")
    return "the original failed too, so the edit is not shown to be the cause"
