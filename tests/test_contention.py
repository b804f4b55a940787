"""How much of the machine other work held during a run (probe/contention.py), and what the reports say of it.

The arithmetic on /proc/stat text, a real run beside CPU burners (one per core, so they hold most of the machine
whatever else runs), the CONTENDED warning from its line, and the sentence `diagnose --verify` adds to a saving
measured on a busy machine.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.test_compare import report
from warp_compile.probe.compare import compare
from warp_compile.probe.contention import (
    CONTENDED_SHARE,
    CpuTimes,
    other_share,
    parse_proc_stat,
    read_cpu_times,
    typical,
)
from warp_compile.probe.fix.verify import contended
from warp_compile.probe.models import WarningCode
from warp_compile.probe.models.diagnosis import MeasuredSaving
from warp_compile.probe.sandbox import Sandbox

STAT = """cpu  1000 20 300 5000 100 10 5 15 0 0
cpu0 500 10 150 2500 50 5 2 7 0 0
intr 12345
"""


def test_the_aggregate_line_counts_steal_as_busy_and_iowait_as_idle() -> None:
    t = parse_proc_stat(STAT)
    assert t == CpuTimes(busy=1000 + 20 + 300 + 10 + 5 + 15, total=1350 + 5000 + 100)
    assert parse_proc_stat("intr 1\n") is None
    assert parse_proc_stat("cpu a b c d e\n") is None
    assert parse_proc_stat("cpu 1 2 3 4 5\n") == CpuTimes(busy=6, total=15)  # an old kernel: no irq/steal columns


def test_the_share_is_busy_time_less_the_runs_own_over_all_time() -> None:
    start, end = CpuTimes(busy=1000, total=2000), CpuTimes(busy=1150, total=2200)
    # 150 busy ticks of 200, the run's own 0.5 s at 100 ticks/s: 100 ticks of other work, half the machine
    assert other_share(start, end, 500.0, 100) == 0.5
    assert other_share(start, end, 5000.0, 100) == 0.0  # never below zero (tick rounding, the parent's own work)
    assert other_share(start, CpuTimes(busy=1300, total=2200), 0.0, 100) == 1.0
    assert other_share(start, end, None, 100) is None  # no rusage: the run's own time is unknown
    assert other_share(None, end, 500.0, 100) is None
    assert other_share(start, CpuTimes(busy=1005, total=2010), 0.0, 100) is None  # 10 ticks: too short to read
    assert typical([None, 0.2, 0.6, 0.4]) == 0.4 and typical([None]) is None


@pytest.mark.skipif(read_cpu_times() is None, reason="no /proc/stat on this platform")
def test_a_run_beside_one_burner_per_core_reads_most_of_the_machine_taken(tmp_path: Path) -> None:
    burn = "import time\nend = time.time() + 60\nwhile time.time() < end:\n    pass\n"
    cores = os.cpu_count() or 1
    burners = [subprocess.Popen([sys.executable, "-c", burn], start_new_session=True) for _ in range(cores)]
    try:
        time.sleep(0.3)
        work = "import time\nt = time.process_time()\nwhile time.process_time() - t < 0.4:\n    pass\n"
        with Sandbox() as box:
            out = box.run([sys.executable, "-c", work], tmp_path, 60.0)
    finally:
        for p in burners:
            p.kill()
            p.wait()
    assert out.exit_code == 0 and out.other_share is not None
    # `cores` burners and the run share `cores` cores: the burners get about cores/(cores+1) of them (half at least)
    assert out.other_share >= CONTENDED_SHARE, out.other_share


def test_a_comparison_of_contended_runs_says_so_and_carries_the_share() -> None:
    before, after = report(elapsed=[1000.0, 1010.0, 990.0]), report(elapsed=[700.0, 705.0, 695.0])
    quiet = compare(before, after)
    assert quiet.other_share is None and not any(w.code == WarningCode.CONTENDED for w in quiet.warnings)
    before.other_share, after.other_share = 0.66, 0.2
    busy = compare(before, after)
    w = [w for w in busy.warnings if w.code == WarningCode.CONTENDED]
    assert busy.other_share == 0.66 and len(w) == 1
    assert "66%" in w[0].message and "BEFORE runs" in w[0].message
    before.other_share = 0.3  # under the line on both sides
    assert not any(w.code == WarningCode.CONTENDED for w in compare(before, after).warnings)


def test_a_saving_measured_on_a_busy_machine_says_it_reads_high() -> None:
    m = MeasuredSaving(settings={}, clock="compile_cpu", saving_ms=1219.0, saving_pct=15.0, verdict="IMPROVED",
                       other_share=0.66)
    text = contended(m)
    assert "66% of the machine" in text and "less than 1,219 ms" in text and "15%" in text
    m.other_share = 0.2
    assert contended(m) == ""
    m.other_share = None
    assert contended(m) == ""


@pytest.mark.skipif(read_cpu_times() is None, reason="no /proc/stat on this platform")
def test_a_real_measurement_records_the_share_per_run_and_its_median(measured) -> None:  # type: ignore[no-untyped-def]
    rep = measured("particle_prep")
    runs = [r for s in rep.sample_results if s.ok for r in (s.cold, s.warm) if r is not None]
    shares = [r.other_share for r in runs]
    assert runs and all(v is not None and 0.0 <= v <= 1.0 for v in shares), shares
    assert rep.other_share == typical(shares)
    flagged = any(w.code == WarningCode.CONTENDED for w in rep.warnings)
    assert flagged == (rep.other_share >= CONTENDED_SHARE)  # whatever this machine's load, the line decides


def test_an_estimate_rebuilt_on_a_busy_machine_says_so() -> None:
    from warp_compile.probe.models.report import Rebuild
    from warp_compile.probe.pricing import _one_sample

    r, rep = Rebuild(limit_s=60.0, cpu_ms=4104.0, builds=26), report(elapsed=[1000.0])
    assert "machine" not in _one_sample(r, rep, "backward")
    rep.other_share = 0.75
    assert "other work used 75% of the machine meanwhile" in _one_sample(r, rep, "backward")
