"""CS-12 on CUDA below toolkit 13 (probe/rules/cuda_header.py), and the device builds the CUDA rules read.

Synthetic replay-shaped reports pin what the rule makes of the two measured passes; the real passes are compiled
in tests/test_release_matrix.py (1.11-1.17 write a header) and tests/test_cuda_replay.py.
"""

from __future__ import annotations

import pytest

from tests.test_cuda_rules import _cpu, _cuda, _outcome, _report
from warp_compile.probe.models import Build, CudaHeader, CudaNoHeader, CudaReplay, KernelInfo, Trigger
from warp_compile.probe.rules import cuda_replay


def _five(with_ms: list[float], without_ms: list[float], cpu_with: float = 1.0, cpu_without: float = 1.0):  # type: ignore[no-untyped-def]
    """Five small modules replayed on toolkit 12.9: the first writes the header, all five rebuilt without it."""
    builds = []
    for i, (on, off) in enumerate(zip(with_ms, without_ms, strict=True)):
        header = CudaHeader(dir=True, files=1 if i == 0 else 0, bytes=72_000_000 if i == 0 else 0,
                            ms=300.0 if i == 0 else 0.0)
        builds.append(_cuda(f"m{i}", 256, on, ["k"], cpu_ms=on * cpu_with, nvrtc_header=header,
                            no_header=CudaNoHeader(ms=off, cpu_ms=off * cpu_without)))
    report = _report(builds, [_cpu(i + 1, f"m{i}", ["k"]) for i in range(5)])
    report.warp_version = "1.15.0"
    report.cuda_replay = CudaReplay(arch=90, ms=5000.0, toolkit="12.9", nvrtc_pch=True)
    return report


def test_the_inverted_case_is_a_finding_with_both_measured_totals() -> None:
    # the seed's shape: 2.38 s with the header, 1.94 s without, for five small modules
    report = _five([800.0, 395.0, 395.0, 395.0, 395.0], [388.0] * 5)
    kind, f = _outcome(report, "CS-12")
    assert kind == "finding", f
    assert f.estimated_saving_ms == pytest.approx(2380.0 - 1940.0)
    fact = f.evidence[0].fact
    assert "5 build(s) of 5 module(s) measured both ways: 2,380 ms with NVRTC's precompiled header" in fact
    assert "1,940 ms rebuilt without it" in fact and "72 MB, written by m0" in fact
    assert "toolkit 12.9" in fact and "m0: 800 ms -> 388 ms" in fact
    assert "use_precompiled_headers = False" in f.fix and "toolkit 13" in f.fix


def test_a_header_that_pays_is_ruled_out_with_its_figures() -> None:
    report = _five([900.0, 150.0, 150.0, 150.0, 150.0], [600.0] * 5)
    kind, r = _outcome(report, "CS-12")
    assert kind == "ruled_out"
    assert "1,500 ms with NVRTC's precompiled header" in r.signal and "3,000 ms rebuilt without it" in r.signal
    assert "the header pays for itself here" in r.signal


def test_wall_time_alone_is_no_verdict_when_cpu_time_disagrees() -> None:
    # the header-on pass ran while the machine was busy: its wall time doubled, its CPU time did not
    report = _five([1600.0, 800.0, 800.0, 800.0, 800.0], [600.0] * 5, cpu_with=0.3, cpu_without=0.8)
    kind, r = _outcome(report, "CS-12")
    assert kind == "ruled_out" and "no verdict" in r.signal and "CPU time of the building threads" in r.signal


def test_no_header_written_means_nothing_to_price() -> None:
    b = _cuda("m", 256, 500.0, ["k"], nvrtc_header=CudaHeader(dir=False))
    kind, r = _outcome(_report([b], [_cpu(1, "m", ["k"])]), "CS-12")
    assert kind == "ruled_out" and "measured both ways" not in r.signal


def test_device_builds_are_read_like_replay_builds() -> None:
    h = "ab" * 32
    gpu = Build(seq=1, module="m", hash=h, hash_short=h[:7], device="cuda:0", block_dim=128, status="compiled",
                ms=700.0, codegen_ms=50.0, native_ms=600.0, source_bytes=9000,
                kernels=[KernelInfo(key="k", hash="1", file="/p/app.py", line=3)],
                trigger=Trigger(file="/p/app.py", line=9, api="launch"))
    report = _report([], [gpu, _cpu(2, "m", ["k"])])
    report.cuda_replay = None
    (b,) = cuda_replay.replay_builds(report)
    assert (b.origin, b.device, b.module, b.block_dim, b.ms) == ("device", "cuda:0", "m", 128, 700.0)
    assert b.phases == {"codegen": 50.0, "nvrtc": 600.0, "other": 50.0} and b.kernels == ["k"] and b.via == ["launch"]
    assert cuda_replay.origin(report) == "measured on cuda:0"
    replayed = _report([_cuda("m", 256, 500.0, ["k"])], [gpu])  # a replay, when there is one, is what the rules read
    assert [x.origin for x in cuda_replay.replay_builds(replayed)] == ["replay"]
