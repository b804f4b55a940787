"""How much of the machine other work held while a run ran: the context a CPU-time figure needs.

CPU time leaves out the time a process waited for a core, but not what sharing a core and its caches does to the
work itself: with three other compile jobs on two cores, the fem example's compile took 6 to 10% more CPU time
than on the quiet machine, and the saving CS-10's fix makes 10 to 14% more (bench/INFLATION.md, two runs of 8
pairs a leg). A saving measured under contention therefore reads high in ms; as a share of the compile it moved
3%. The figure here is the share of the machine's CPU time (every core, over the run's window) that went to
anything but the run: a fraction of the machine, so it means the same on a fast host and a slow one.

Linux only (/proc/stat); elsewhere None, and nothing is said.
"""

from __future__ import annotations

import os
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

PROC_STAT = Path("/proc/stat")
# from half of the machine held by other work, the measured CPU times are flagged (three compile jobs on two cores,
# where every fem miss against the quiet truth read high, read 75%)
CONTENDED_SHARE = 0.5


@dataclass(frozen=True)
class CpuTimes:
    """The machine's CPU time since boot in clock ticks: busy (including what a hypervisor stole) and in all."""

    busy: int
    total: int


def parse_proc_stat(text: str) -> CpuTimes | None:
    """The aggregate `cpu` line: user nice system idle iowait irq softirq steal (guest time is inside user)."""
    for line in text.splitlines():
        parts = line.split()
        if not parts or parts[0] != "cpu":
            continue
        try:
            ticks = [int(v) for v in parts[1:9]]
        except ValueError:
            return None
        if len(ticks) < 5:
            return None
        ticks += [0] * (8 - len(ticks))
        user, nice, system, idle, iowait, irq, softirq, steal = ticks
        busy = user + nice + system + irq + softirq + steal
        return CpuTimes(busy=busy, total=busy + idle + iowait)
    return None


def read_cpu_times(path: Path = PROC_STAT) -> CpuTimes | None:
    try:
        return parse_proc_stat(path.read_text(encoding="ascii", errors="replace"))
    except OSError:
        return None


def clock_ticks() -> int:
    try:
        return int(os.sysconf("SC_CLK_TCK"))
    except (AttributeError, ValueError, OSError):
        return 100


def other_share(start: CpuTimes | None, end: CpuTimes | None, own_cpu_ms: float | None,
                ticks_per_s: int) -> float | None:
    """The share (0..1) of the machine's CPU time over the window that other processes used: all busy time minus
    the run's own (its process tree, os.wait4), over all CPU time. None without both readings, the run's CPU time,
    or a window too short to read (under 20 ticks)."""
    if start is None or end is None or own_cpu_ms is None or ticks_per_s <= 0:
        return None
    total = end.total - start.total
    if total < 20:
        return None
    busy = end.busy - start.busy
    own = own_cpu_ms / 1000.0 * ticks_per_s
    return round(min(1.0, max(0.0, (busy - own) / total)), 3)


def is_contended(share: float | None) -> bool:
    """Whether other work held enough of the machine that the CPU clocks read high (CONTENDED_SHARE or more)."""
    return share is not None and share >= CONTENDED_SHARE


def typical(shares: Sequence[float | None]) -> float | None:
    """The median of the runs that have a reading; None when none has."""
    got = [s for s in shares if s is not None]
    return round(statistics.median(got), 3) if got else None
