"""Fallback: recover module loads from Warp's own log lines when the loader could not be wrapped.

The hook raises the log level in the child only (debug level, where Warp prints block_dim and the native compile
timer). A log line carries less than a hook event: no kernels, options, trigger or PCH split.
"""

from __future__ import annotations

import re

from .models import Build

_LOAD = re.compile(
    r"^(?P<indent>\s*)Module (?P<name>\S+)(?: (?P<hash>[0-9a-f]{7}))? load on device '(?P<device>[^']+)'"
    r"(?: \(block_dim=(?P<bd>\d+)\))? took (?P<ms>[0-9.]+) ms\s+\((?P<status>compiled|cached|error)\)"
)
_NATIVE = re.compile(r"^\s*Compile (?:x86|CUDA.*?) took (?P<ms>[0-9.]+) ms")


def builds_from_log(text: str) -> list[Build]:
    builds: list[Build] = []
    native_pending = 0.0
    for seq, line in enumerate(text.splitlines(), start=1):
        m = _NATIVE.match(line)
        if m:
            native_pending += float(m.group("ms"))
            continue
        m = _LOAD.match(line)
        if not m:
            continue
        h = m.group("hash") or ""
        builds.append(
            Build(
                seq=seq,
                module=m.group("name"),
                hash=h,
                hash_short=h[:7],
                device=m.group("device"),
                block_dim=int(m.group("bd")) if m.group("bd") else None,
                status=m.group("status"),  # type: ignore[arg-type]
                ms=float(m.group("ms")),
                native_ms=native_pending,
                path="log",
            )
        )
        native_pending = 0.0
    return builds
