"""The one way every output writes a number of milliseconds, a clock, a path and the line that triggered a build.

Measure text, summaries, diagnoses and the rules' finding text all print through these, so one figure reads the
same wherever it appears: `1,234 ms`, `46 ms`, `3.2 ms`, and `-` for a value that was not measured. Pure
functions of plain values and models; nothing here reads a file.
"""

from __future__ import annotations

import os
from collections.abc import Callable

from .models import Build

CLIP = 80  # characters of user input (a query, an id) echoed in an error line
PATH_CLIP = 160  # a path is worth more of the line, but not 100,000 characters of it


def clip(text: object, limit: int = CLIP) -> str:
    """User input as echoed in a one-line error: newlines escaped, at most `limit` characters (then an ellipsis)."""
    s = str(text).replace("\r", "\\r").replace("\n", "\\n")
    return s if len(s) <= limit else s[: limit - 1] + "…"


def clip_path(path: object) -> str:
    return clip(path, PATH_CLIP)


EMPTY = "-"
"""What a missing figure prints as (a clock with no successful sample, a stage that did not run)."""


def fmt_ms(x: float | None, *, sign: bool = False) -> str:
    """Milliseconds with the unit: whole ms (thousands separated) from 10 ms up, one decimal below; `-` if None.

    The decimal is kept only where it carries information: below 10 ms a tenth is 1% of the figure or more; above,
    it is noise. The threshold is on the magnitude (a negative difference reads like a positive one) and on the
    rounded value (9.96 prints `10 ms`, not `10.0 ms`). `sign=True` writes a `+` on positive values, for deltas.
    """
    return EMPTY if x is None else fmt_num(x, sign=sign) + " ms"


def fmt_num(x: float | None, *, sign: bool = False) -> str:
    """The number `fmt_ms` prints, without the unit: for tables and sentences that name the unit once."""
    if x is None:
        return EMPTY
    f = "+" if sign else ""
    return f"{x:{f},.0f}" if abs(round(x, 1)) >= 10 else f"{x:{f}.1f}"


def fmt_seconds(ms: float) -> str:
    """A duration for a live status line: ms below a second, then seconds (one decimal below 100 s)."""
    s = ms / 1000.0
    if s < 1.0:
        return f"{ms:.0f} ms"
    if s < 100.0:
        return f"{s:.1f} s"
    return f"{s:.0f} s"


def fmt_span(start: float, end: float) -> str:
    """`202-1,462 ms`: an interval on the run's clock, both ends printed as `fmt_ms` prints them."""
    return f"{fmt_ms(start).removesuffix(' ms')}-{fmt_ms(end)}"


def stat_text(median: float | None, mad: float | None, n: int) -> str:
    """`median ± MAD (n=N)`; one sample has no spread, so none is shown for it."""
    if median is None:
        return EMPTY
    if n < 2:
        return f"{fmt_ms(median)} (n={n}, no spread)"
    return f"{fmt_ms(median)} ± {fmt_ms(mad or 0.0)} (n={n})"


def plural(n: int, noun: str) -> str:
    """`1 sample`, `3 samples`."""
    return f"{n} {noun}{'' if n == 1 else 's'}"


def pch_count(builds: int, threads: int) -> str:
    """Several headers are summed, not elapsed: say how many, and on how many threads (they may overlap)."""
    return f"sum of {builds} header builds on {plural(threads, 'thread')}"


def warp_text(version: str | None) -> str:
    """`warp 1.19.0`, or what an empty version means: the command never imported warp."""
    return f"warp {version}" if version else "warp not imported"


def short_path(path: str, cwd: str) -> str:
    """`path` relative to `cwd` (posix separators) when it lies inside it; otherwise as recorded."""
    if not cwd or not os.path.isabs(path):
        return path
    try:
        rel = os.path.relpath(path, cwd)
    except ValueError:
        return path
    return path if rel.startswith("..") else rel.replace(os.sep, "/")


def trigger_text(build: Build, rel: Callable[[str], str]) -> str:
    """`file:line (api via ...)` of the user line that triggered a build; empty when it is unknown."""
    t = build.trigger
    if t is None:
        return ""
    via = f" via {t.via}" if t.via else ""
    return f"{rel(t.file)}:{t.line} ({t.api or '?'}{via})"
