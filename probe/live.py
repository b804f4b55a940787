"""Live progress while a measured run is going: tail the hook's events file and say what is being built.

The hook writes each event with one `write` as it happens (`load_start` when a module's codegen or native work
begins, `load` when it ends, `pch`), so the parent can read the file while the child runs. `LiveProgress.poll`
is called from the sandbox's wait loop every few tens of milliseconds; it turns new events into progress
strings (`sample 1 cold: compiling pkg.mod (3 of ?)`, `sample 1 cold: pkg.mod built in 4.1 s`) and sends a
heartbeat when nothing was said for `heartbeat_s` seconds, so a client with a request timeout (or a person)
sees the run is alive during a long compile. Progress goes through the plain `Callable[[str], None]` callback,
so the CLI printer and the MCP server's progress notifications get it alike.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from pathlib import Path

from .fmt import fmt_seconds

HEARTBEAT_S = 5.0  # at most this long without a progress message while a run is going
_MAX_READ = 1 << 20  # bytes read per poll: a burst of events is spread over several polls


class LiveProgress:
    """Progress of one process run (cold or warm) of one sample, from its events file."""

    def __init__(
        self,
        progress: Callable[[str], None],
        label: str,
        expected_compiles: int | None = None,
        heartbeat_s: float = HEARTBEAT_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.progress = progress
        self.label = label
        self.expected = expected_compiles
        self.heartbeat_s = heartbeat_s
        self.clock = clock
        self.started_at = clock()
        self.last_said = self.started_at
        self.offset = 0
        self.partial = b""
        self.compiles = 0  # compile starts seen
        self.built = 0
        self.cached = 0
        self.current: dict[int, tuple[str, float]] = {}  # thread -> (module, when its build started)

    def say(self, message: str) -> None:
        self.last_said = self.clock()
        self.progress(f"{self.label}: {message}")

    def poll(self, path: Path) -> None:
        """Read what the hook appended since the last poll; heartbeat if the run has been silent too long."""
        for event in self._read(path):
            try:
                self.handle(event)
            except (TypeError, ValueError, KeyError):
                continue  # a malformed event never stops the run
        if self.clock() - self.last_said >= self.heartbeat_s:
            self.say(self.heartbeat())

    def _read(self, path: Path) -> list[dict]:
        try:
            if os.stat(path).st_size <= self.offset:
                return []  # nothing new: one stat per tick, no open or read
            with open(path, "rb") as f:
                f.seek(self.offset)
                chunk = f.read(_MAX_READ)
        except OSError:
            return []  # not created yet (the interpreter is starting)
        if not chunk:
            return []
        self.offset += len(chunk)
        data = self.partial + chunk
        lines = data.split(b"\n")
        self.partial = lines.pop()  # an unfinished line waits for the next poll
        out = []
        for line in lines:
            try:
                e = json.loads(line)
            except ValueError:
                continue
            if isinstance(e, dict):
                out.append(e)
        return out

    def handle(self, e: dict) -> None:
        kind = e.get("kind")
        tid = int(e.get("tid", 0))
        if kind == "warp_import":
            self.say(f"warp {e.get('warp_version', '?')} imported")
        elif kind == "warp_missing":
            self.say(f"{e.get('executable', 'the interpreter')} cannot import warp")
        elif kind == "load_start" and e.get("what") == "compile":
            self.compiles += 1
            module = str(e.get("module", "?"))
            self.current[tid] = (module, self.clock())
            total = self.expected if self.expected and self.expected >= self.compiles else "?"
            self.say(f"compiling {module} ({self.compiles} of {total})")
        elif kind == "load":
            module = str(e.get("module", "?"))
            self.current.pop(tid, None)
            status = e.get("status")
            if status == "compiled":
                self.built += 1
                pch = float(e.get("pch_ms") or 0.0)
                extra = f", plus {fmt_seconds(pch)} for the precompiled header" if pch > 0 else ""
                self.say(f"{module} built in {fmt_seconds(float(e.get('ms', 0.0)))}{extra}")
            elif status == "cached":
                self.cached += 1
            elif str(status).startswith("error"):
                self.say(f"{module} failed to build ({str(e.get('error', ''))[:120]})")

    def heartbeat(self) -> str:
        now = self.clock()
        parts = [f"running for {now - self.started_at:.0f} s", f"{self.built} module(s) built"]
        if self.cached:
            parts.append(f"{self.cached} loaded from cache")
        for module, since in self.current.values():
            parts.append(f"compiling {module} for {now - since:.0f} s")
        return ", ".join(parts)
