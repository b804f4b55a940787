"""Live progress from the hook's events file: what is said while a run goes, partial lines, heartbeats.

A fake clock drives the heartbeat; the events are the hook's real line format written by hand, appended between
polls the way the child appends them while the parent polls.
"""

from __future__ import annotations

import json
from pathlib import Path

from warp_compile.cli.io import progress_printer
from warp_compile.probe.live import LiveProgress


class Clock:
    def __init__(self) -> None:
        self.t = 100.0

    def __call__(self) -> float:
        return self.t


def line(kind: str, **fields: object) -> bytes:
    return (json.dumps({"kind": kind, "tid": 7, **fields}) + "\n").encode()


def test_modules_are_named_as_they_start_and_finish(tmp_path: Path) -> None:
    events = tmp_path / "events.jsonl"
    said: list[str] = []
    clock = Clock()
    live = LiveProgress(said.append, "sample 2 cold", expected_compiles=2, heartbeat_s=5.0, clock=clock)
    live.poll(events)  # no file yet: the interpreter is starting
    assert said == []
    with open(events, "ab") as f:
        f.write(line("warp_import", warp_version="1.19.0"))
        f.write(line("load_start", module="pkg.a", what="compile"))
        whole = line("load", module="pkg.a", status="compiled", ms=4100.0, pch_ms=1500.0)
        f.write(whole[:20])  # the child is in the middle of writing this line
    live.poll(events)
    assert said == ["sample 2 cold: warp 1.19.0 imported", "sample 2 cold: compiling pkg.a (1 of 2)"]
    with open(events, "ab") as f:
        f.write(whole[20:])
        f.write(line("load_start", module="pkg.b", what="load"))  # a cached load: counted, not announced
        f.write(line("load", module="pkg.b", status="cached", ms=3.0))
        f.write(line("load_start", module="pkg.c", what="compile"))
        f.write(line("load_start", module="pkg.d", what="compile", tid=8))
    live.poll(events)
    assert said[2:] == [
        "sample 2 cold: pkg.a built in 4.1 s, plus 1.5 s for the precompiled header",
        "sample 2 cold: compiling pkg.c (2 of 2)",
        "sample 2 cold: compiling pkg.d (3 of ?)",  # more than the earlier sample compiled: the total is unknown
    ]


def test_heartbeat_during_a_silent_compile(tmp_path: Path) -> None:
    events = tmp_path / "events.jsonl"
    events.write_bytes(line("load_start", module="pkg.slow", what="compile"))
    said: list[str] = []
    clock = Clock()
    live = LiveProgress(said.append, "sample 1 cold", heartbeat_s=5.0, clock=clock)
    live.poll(events)
    assert said == ["sample 1 cold: compiling pkg.slow (1 of ?)"]
    for _ in range(40):  # 12 s of polls at 0.3 s, nothing new in the file
        clock.t += 0.3
        live.poll(events)
    beats = said[1:]
    assert len(beats) == 2, said
    assert beats[0] == "sample 1 cold: running for 5 s, 0 module(s) built, compiling pkg.slow for 5 s"
    assert beats[1].startswith("sample 1 cold: running for 10 s")


def test_printer_plain_lines_off_a_terminal_and_a_status_line_on_one(capsys) -> None:  # type: ignore[no-untyped-def]
    plain = progress_printer(live=False)
    plain("sample 1: cold run")
    plain("sample 1 cold: compiling a (1 of ?)")
    assert capsys.readouterr().err == (
        "warp-compile: sample 1: cold run\nwarp-compile: sample 1 cold: compiling a (1 of ?)\n"
    )
    status = progress_printer(live=True)
    status("sample 1: cold run")
    status("sample 1 cold: compiling a (1 of ?)")
    from warp_compile.cli.io import end_progress

    end_progress()
    err = capsys.readouterr().err
    assert "\n" not in err  # one line, rewritten in place, cleared at the end
    assert err.count("\r\x1b[2K") == 3 and err.endswith("\r\x1b[2K")
    assert progress_printer(quiet=True) is not None
