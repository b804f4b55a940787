"""CUDA prices for CS-10/CS-11/CS-12 and CS-13's judgement of the machine, on synthetic replay-shaped reports.

tests/test_cuda_replay.py compiles for real; these pin what the rules make of the figures.
"""

from __future__ import annotations

import pytest

from tests.test_cuda_rules import _cpu, _cuda, _outcome, _report
from warp_compile.probe.models import Build, CudaConcurrent, CudaForward, CudaReplay, KernelInfo, LtoArtifacts
from warp_compile.probe.rules import cuda_pricing


def _backward_cpu(seq: int, module: str, ms: float = 2000.0, native: float = 1900.0) -> Build:
    """A CPU build holding adjoint code (half its source), nothing differentiates it."""
    h = (f"{seq:x}" * 64)[:64]
    return Build(
        seq=seq, module=module, hash=h, hash_short=h[:7], device="cpu", block_dim=1, status="compiled", ms=ms,
        native_ms=native, codegen_ms=20.0, source_bytes=20_000, backward_in_source=True,
        backward_source_bytes=10_000, kernels=[KernelInfo(key="mm", hash=h[:8], file="/p/app.py", line=10)],
        options={"enable_backward": "True", "block_dim": "1"},
    )


def test_cs10_carries_the_measured_forward_only_rebuild_of_a_tile_module() -> None:
    fwd = CudaForward(ms=2000.0, phases={"lto": 1500.0, "nvrtc": 490.0}, link_inputs=1,
                      lto_artifacts=LtoArtifacts(count=1, bytes=5_000_000))
    tile = _cuda("t", 32, 9000.0, ["mm"], phases={"codegen": 5.0, "lto": 7000.0, "nvrtc": 1990.0, "other": 5.0},
                 lto_artifacts=LtoArtifacts(count=3, bytes=15_000_000), link_inputs=3, backward=True,
                 backward_source_bytes=5000, forward=fwd)
    kind, f = _outcome(_report([tile], [_backward_cpu(1, "t")]), "CS-10")
    assert kind == "finding"
    cuda = f.evidence[-1]
    assert cuda.ms == pytest.approx(7000.0)
    assert "sm_90 via NVRTC, no device" in cuda.fact and "measured: 9000 ms with backward code" in cuda.fact
    assert "2000 ms rebuilt forward-only" in cuda.fact and "3 -> 1 .lto artifact(s)" in cuda.fact
    assert "the backward code costs 7,000 ms of the 9,000 ms CUDA build time" in f.saving_basis
    assert f.severity == "high"  # 78% of the CUDA build time, whatever the CPU estimate said


def test_cs10_estimates_from_the_adjoint_share_of_the_cuda_source_without_a_rebuild() -> None:
    plain = _cuda("m", 256, 1003.0, ["mm"], backward=True, backward_source_bytes=1000)  # 1000 of 4000 B
    kind, f = _outcome(_report([plain], [_backward_cpu(1, "m")]), "CS-10")
    assert kind == "finding"
    assert f.evidence[-1].ms == pytest.approx(0.25 * (2.0 + 1000.0))
    fact = f.evidence[-1].fact
    assert "estimated (upper bound): the adjoint share of the generated CUDA source (1,000 of 4,000 B, 25%)" in fact


def test_cs10_without_adjoint_code_on_cuda_says_so_in_the_ruled_out() -> None:
    kind, r = _outcome(_report([_cuda("m", 256, 500.0, ["k"], backward=False)], [_cpu(1, "m", ["k"])]), "CS-10")
    assert kind == "ruled_out" and "on CUDA (sm_90 via NVRTC, no device, toolkit 13.4) no adjoint code" in r.signal


def test_cs10_is_not_called_small_when_its_cuda_cost_is_material() -> None:
    # small on the CPU: a sliver of a cold compile dominated by another module, below CS-10's materiality
    big = _cpu(2, "o", ["ko"]).model_copy(update={"ms": 6000.0, "native_ms": 5900.0})
    cpu = [_backward_cpu(1, "t", ms=60.0, native=50.0), big]
    small = _report([_cuda("t", 32, 500.0, ["mm"], backward=False)], cpu)
    cpu_only = _outcome(small, "CS-10")
    assert cpu_only[0] == "ruled_out" and "it is small" in cpu_only[1].signal
    fwd = CudaForward(ms=1000.0, phases={"lto": 800.0})
    tile = _cuda("t", 32, 8000.0, ["mm"], backward=True, backward_source_bytes=2000, forward=fwd,
                 phases={"lto": 7000.0, "nvrtc": 1000.0}, link_inputs=3)
    kind, f = _outcome(_report([tile], cpu), "CS-10")
    assert kind == "finding" and f.evidence[-1].ms == pytest.approx(7000.0)


def test_cs11_names_the_cuda_source_and_nvrtc_time_of_the_unrolling_modules() -> None:
    b = _cuda("m", 256, 1203.0, ["k"])
    result = cuda_pricing.cs11(
        type("Ctx", (), {"report": _report([b], [_cpu(1, "m", ["k"])])})(),
        _finding_result("CS-11", ["m"]),
    )
    fact = result.findings[0].evidence[-1].fact
    assert "on CUDA (sm_90 via NVRTC, no device, toolkit 13.4)" in fact
    assert "m (block_dim 256) generated 4,000 B of CUDA source, built in 1203 ms (NVRTC 1200 ms" in fact


def _finding_result(mechanism: str, modules: list[str]):  # type: ignore[no-untyped-def]
    from warp_compile.probe.models.diagnosis import Finding, RuleResult

    return RuleResult(
        findings=[Finding(mechanism=mechanism, title="t", severity="info", confidence="medium", modules=modules,
                          fix="f")]
    )


@pytest.mark.parametrize(("toolkit", "expect"), [("13.4", "not applicable on toolkit >= 13"),
                                                 ("12.8", "toolkit 12): NVRTC uses a precompiled header")])
def test_cs12_on_cuda_depends_on_the_replayed_toolkit(toolkit: str, expect: str) -> None:
    report = _report([_cuda("m", 256, 500.0, ["k"])], [_cpu(1, "m", ["k"])])
    report.cuda_replay = CudaReplay(arch=90, ms=600.0, toolkit=toolkit, nvrtc_pch=True)
    kind, r = _outcome(report, "CS-12")
    text = r.signal if kind == "ruled_out" else r.reason
    assert expect in text


def test_cs12_on_cuda_is_not_applicable_where_warp_has_no_nvrtc_header() -> None:
    report = _report([_cuda("m", 256, 500.0, ["k"])], [_cpu(1, "m", ["k"])])
    report.warp_version = "1.10.1"
    report.cuda_replay = CudaReplay(arch=90, ms=600.0, toolkit="12.8", nvrtc_pch=False)
    kind, r = _outcome(report, "CS-12")
    text = r.signal if kind == "ruled_out" else r.reason
    assert "not applicable, warp 1.10.1 has no NVRTC precompiled header" in text


def _four(conc: CudaConcurrent) -> tuple[str, object]:
    mods = ["a", "b", "c", "d"]
    cuda = [_cuda(m, 256, 500.0, [f"k{m}"]) for m in mods]
    return _outcome(_report(cuda, [_cpu(i + 1, m, [f"k{m}"]) for i, m in enumerate(mods)], conc), "CS-13")


def test_cs13_is_not_decided_when_the_threads_had_no_second_core() -> None:
    # same wall times; what differs is the CPU time the concurrent pass got (cores = cpu_ms / wall_ms)
    starved = CudaConcurrent(workers=2, tasks=4, wall_ms=2200.0, serial_ms=2000.0, summed_ms=4400.0, cpu_ms=1400.0,
                             serial_cpu_ms=1300.0, cpus=2, load_avg=5.0)
    kind, n = _four(starved)
    assert kind == "not_reached"
    assert "0.64 core(s)" in n.reason and "(0.65 in the serial pass)" in n.reason and "0.91x" in n.reason
    had_cores = starved.model_copy(update={"cpu_ms": 3600.0})  # 1.64 cores and still no gain: a real no
    kind, r = _four(had_cores)
    assert kind == "ruled_out" and "overlapping does not pay here" in r.signal
    fast = had_cores.model_copy(update={"wall_ms": 1000.0})
    assert _four(fast)[0] == "finding"


def test_cs13_on_an_idle_machine_whose_threads_still_do_not_overlap_is_ruled_out() -> None:
    """Measured here at load 0.1 on 2 CPUs with four ~100 ms modules: 2 threads used 1.26 cores and ran 0.96x, with
    32% more CPU than the serial pass (each thread pays NVRTC's start-up): free cores were there, so a preload with
    workers would not help (not a 'busy machine' case), and the signal says where the CPU went."""
    idle = CudaConcurrent(workers=2, tasks=4, wall_ms=618.0, serial_ms=591.0, summed_ms=1100.0, cpu_ms=779.0,
                          serial_cpu_ms=591.0, cpus=2, load_avg=0.1)
    kind, r = _four(idle)
    assert kind == "ruled_out" and "idle cores" in r.signal and "1.26 core(s)" in r.signal
    assert "188 ms more CPU than the serial one" in r.signal
    no_extra = idle.model_copy(update={"cpu_ms": 640.0})  # 1.04 cores, only 8% more CPU: no start-up story to tell
    kind, r = _four(no_extra)
    assert kind == "ruled_out" and "more CPU" not in r.signal
    busy = idle.model_copy(update={"load_avg": 3.0})
    assert _four(busy)[0] == "not_reached"
