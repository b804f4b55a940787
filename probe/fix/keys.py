"""A cache an edit adds is keyed on values, judged on the fixed copy's own run (the composed result, not today's code).

The split (transform/split.py) keys a new cached maker on the values its kernel's slice reads of the arguments
(`scene.geom_types`, `cfg.width`). Which values those are at run time, the source cannot say: the fixed copy's
run can. The hook records the arguments of every function that made a kernel (and of the frames above it): a
cached function the edits define that was called with an object (`{"kind": "other"}`: no number, string, tuple,
type or function) keys its cache on that object's identity, or raises when it is unhashable, so a change to the
object would not reach the kernel. Such a candidate fails with the argument named.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

from ..models.diagnosis import Edit

_CACHED_DEF = re.compile(r"^[ \t]*@functools\.(?:lru_cache|cache)\b[^\n]*\n[ \t]*def[ \t]+(\w+)\(", re.M)


def cached_defs(edits: Iterable[Edit]) -> set[str]:
    """Names of the functions the edits define with a functools cache on them."""
    return {m.group(1) for e in edits for m in _CACHED_DEF.finditer(e.new)}


def object_keys(edits: Sequence[Edit], samples: Sequence[Any]) -> str:
    """Why a cache the edits add keys on an object, from the fixed copy's run record ("" when it does not, or when
    the run recorded no call of it)."""
    names = cached_defs(edits)
    if not names:
        return ""
    for s in samples:
        events = getattr(getattr(s, "cold", None), "events", None)
        for c in getattr(events, "kernel_creations", None) or []:
            frames = [{"function": c.function, "args": c.args, "file": c.file, "line": c.line}, *c.outer]
            for f in frames:
                fn = str(f.get("function") or "").split(".")[-1]
                if fn not in names:
                    continue
                bad = {n: v for n, v in (f.get("args") or {}).items() if v.get("kind") == "other"}
                if bad:
                    shown = ", ".join(f"{n} (a {v.get('type') or 'object'})" for n, v in sorted(bad.items()))
                    return (f"the cache on {fn}() keys on {shown} in the fixed copy's run: an object keyed by "
                            "identity (or unhashable), so a change to it would not reach the kernel")
    return ""
