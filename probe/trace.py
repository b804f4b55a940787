"""A Report as a Chrome / Perfetto trace (the JSON "trace event format"): a build timeline people can look at.

Open the file in https://ui.perfetto.dev (drag and drop) or chrome://tracing. The reference sample's cold run
is one process and its warm run another; each Warp thread that loaded modules is a track. Every build is a
complete event ("ph": "X") on its thread, with its phases nested inside (hash, codegen, native compile, load;
the precompiled header inside the native compile that built it); the first launch of each launch record is an
instant event carrying the record's count. Times are the hook's clock (ms since the hook started in that
process), converted to the format's microseconds.

Reports recorded before the hook kept phase spans have no phase timestamps: their phases are laid out one after
another from the build's start, in Warp's order, and marked `"approximate": true`.
"""

from __future__ import annotations

from typing import Any

from .models import Build, Launch, PchBuild, Report

PHASE_NAMES = {"hash": "hash", "codegen": "codegen", "native": "native compile", "native_load": "load"}
COLD_PID, WARM_PID = 1, 2


def _us(ms: float) -> float:
    return round(ms * 1000.0, 1)


class _Threads:
    """Warp thread idents -> small track numbers, in order of first use, with a name event per track."""

    def __init__(self, pid: int, events: list[dict[str, Any]]) -> None:
        self.pid = pid
        self.events = events
        self.ids: dict[int, int] = {}

    def __call__(self, ident: int) -> int:
        if ident not in self.ids:
            n = len(self.ids) + 1
            self.ids[ident] = n
            name = "main thread" if n == 1 else f"thread {n}"
            self.events.append({"name": "thread_name", "ph": "M", "pid": self.pid, "tid": n, "args": {"name": name}})
        return self.ids[ident]


def _build_events(b: Build, pid: int, tid: int, pch: list[PchBuild]) -> list[dict[str, Any]]:
    wall = max(b.end_ms - b.start_ms, b.ms)
    args: dict[str, Any] = {
        "module": b.module,
        "hash": b.hash_short,
        "device": b.device,
        "block_dim": b.block_dim,
        "status": b.status,
        "ms (PCH excluded)": b.ms,
        "kernels": len(b.kernels),
        "source_bytes": b.source_bytes,
    }
    if b.trigger is not None:
        args["trigger"] = f"{b.trigger.file}:{b.trigger.line} ({b.trigger.api or b.trigger.function})"
    if b.error:
        args["error"] = b.error
    out: list[dict[str, Any]] = [
        {
            "name": f"{b.module} ({b.status})",
            "cat": "build",
            "ph": "X",
            "ts": _us(b.start_ms),
            "dur": _us(wall),
            "pid": pid,
            "tid": tid,
            "args": args,
        }
    ]

    def phase(name: str, start: float, dur: float, **extra: Any) -> None:
        out.append({"name": name, "cat": "phase", "ph": "X", "ts": _us(start), "dur": _us(dur), "pid": pid,
                    "tid": tid, "args": {"module": b.module, **extra}})

    if b.spans:
        for s in b.spans:
            phase(PHASE_NAMES.get(s.phase, s.phase), s.start_ms, s.end_ms - s.start_ms)
        natives = [s for s in b.spans if s.phase == "native"]
        for p in pch:
            if p.start_ms is None:
                continue
            start, end = p.start_ms, p.start_ms + p.ms
            # the hook reads the clock just outside the native phase: clamp into it so the nesting holds
            home = min(natives, key=lambda s: abs(s.start_ms - start), default=None)
            if home is not None:
                start = max(start, home.start_ms)
                end = min(max(end, start), home.end_ms)
            phase("precompiled header", start, end - start, file=p.file)
    else:
        t = b.start_ms
        native = b.native_ms + b.pch_ms
        for name, ms in (("hash", b.hash_ms), ("codegen", b.codegen_ms), ("native compile", native),
                         ("load", b.native_load_ms)):
            if ms > 0:
                phase(name, t, ms, approximate=True)
                if name == "native compile" and b.pch_ms > 0:
                    phase("precompiled header", t, b.pch_ms, approximate=True)
                t += ms
    return out


def _launch_event(la: Launch, pid: int, tid: int) -> dict[str, Any]:
    args: dict[str, Any] = {"module": la.module, "count": la.count, "dim": la.dim, "device": la.device,
                            "dtypes": la.dtypes}
    if la.site is not None:
        args["site"] = f"{la.site.file}:{la.site.line}"
    return {"name": f"launch {la.kernel}", "cat": "launch", "ph": "i", "s": "t", "ts": _us(la.first_ms or 0.0),
            "pid": pid, "tid": tid, "args": args}


def _run(builds: list[Build], pch: list[PchBuild], launches: list[Launch], pid: int, name: str) -> list[dict]:
    events: list[dict[str, Any]] = [{"name": "process_name", "ph": "M", "pid": pid, "args": {"name": name}}]
    threads = _Threads(pid, events)
    for b in sorted(builds, key=lambda b: (b.start_ms, b.seq)):
        mine = [p for p in pch if p.during_seq == b.seq]
        events.extend(_build_events(b, pid, threads(b.thread), mine))
    for la in launches:
        if la.first_ms is not None:
            events.append(_launch_event(la, pid, threads(la.thread)))
    return events


def report_trace(report: Report) -> dict[str, Any]:
    """The trace of the report's reference sample (cold run, and warm run when it has builds)."""
    sample = report.reference_sample
    label = f" (sample {sample + 1})" if sample is not None else ""
    events = _run(report.builds, report.pch, report.launches, COLD_PID, "cold run" + label)
    if report.warm_builds:
        events += _run(report.warm_builds, [], [], WARM_PID, "warm run" + label)
    return {
        "traceEvents": events,
        "displayTimeUnit": "ms",
        "otherData": {
            "command": " ".join(report.command),
            "warp_version": report.warp_version or "",
            "label": report.label,
            "created_at": report.created_at,
        },
    }
