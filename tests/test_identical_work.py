"""Identical work left out of the deciding clock (issue 30): the header both arms built alike and modules with the same
hash on both sides add only noise to a comparison; the clock is decided on what remains, and says so."""

from __future__ import annotations

import random

from warp_compile.probe.compare.same import identical_work
from warp_compile.probe.compare.verdict import compare
from warp_compile.probe.models import Report, RunResult, SampleResult
from warp_compile.probe.stats import stat_of


def _report(compile_cpu: list[float], header: list[float], module_a: list[float], b_hash: str) -> Report:
    """One arm: every cold run built the same header and module `a`, and module `b` under `b_hash`."""
    results = []
    for i, (h, m) in enumerate(zip(header, module_a, strict=True)):
        work = {"header:builtin.pch": [h, h], "app.a@111@cpu@1": [m, m], f"app.b@{b_hash}@cpu@1": [50.0, 50.0]}
        cold = RunResult(phase="cold", wall_ms=compile_cpu[i] + 300, exit_code=0, cpu_ms=compile_cpu[i] + 300,
                         compiled=3, work=work)
        warm = RunResult(phase="warm", wall_ms=300, exit_code=0, cpu_ms=300)
        results.append(SampleResult(index=i, ok=True, cold=cold, warm=warm))
    n = len(compile_cpu)
    module_cpu = [v - h for v, h in zip(compile_cpu, header, strict=True)]
    r = Report(command=["python", "app.py"], cwd="/x", samples=n, sample_results=results,
               compile_cpu_ms=stat_of(compile_cpu), cold_module_cpu_ms=stat_of(module_cpu),
               cold_cpu_ms=stat_of([v + 300 for v in compile_cpu]), warm_cpu_ms=stat_of([300.0] * n),
               compile_elapsed_ms=stat_of(compile_cpu), cold_module_ms=stat_of(compile_cpu))
    return r


def test_the_header_and_same_hash_modules_are_left_out_and_named() -> None:
    rng = random.Random(3)
    n = 5
    hb = [1400 + rng.uniform(-280, 280) for _ in range(n)]  # the header moves by up to 20% under load
    ha = [1400 + rng.uniform(-280, 280) for _ in range(n)]
    ma, mb = [300.0] * n, [300.0] * n
    # the fix removes 60 ms of module work (module b gets cheaper and changes hash); the header noise hides it
    before = _report([h + m + 50 + 60 for h, m in zip(hb, ma, strict=True)], hb, ma, "222")
    after = _report([h + m + 50 for h, m in zip(ha, mb, strict=True)], ha, mb, "333")
    same = identical_work(before, after)
    assert same is not None and same.keys == ["app.a@111@cpu@1", "header:builtin.pch"]
    b, a = same.basis["compile_cpu"]
    assert [round(x - y, 3) for x, y in zip(b.values, a.values, strict=True)] == [60.0] * n  # only the fix remains
    assert "the header both arms built alike and 1 module build with the same hash" in same.note("compile_cpu")
    assert "header" not in same.note("cold_module_cpu")  # that clock never held the header
    c = compare(before, after, paired=True)
    k = c.clock("compile_cpu")
    assert k is not None and k.basis_before is not None and k.identical_ms is not None and k.identical_ms > 1000
    assert "identical work left out" in k.note
    assert k.interval is not None and k.interval.high_ms < -50  # decided on what differs: a tight interval
    # the medians and the share stay the whole clock's
    assert k.before.median == before.compile_cpu_ms.median


def test_reports_without_the_record_or_with_nothing_in_common_leave_the_clock_as_it_is() -> None:
    before = _report([500.0, 510.0], [100.0, 100.0], [300.0, 300.0], "222")
    for s in before.sample_results:
        s.cold.work = {}
    after = _report([400.0, 410.0], [100.0, 100.0], [300.0, 300.0], "333")
    assert identical_work(before, after) is None
    k = compare(before, after, paired=True).clock("compile_cpu")
    assert k is not None and k.basis_before is None and "identical work" not in k.note
