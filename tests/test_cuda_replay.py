"""`--cuda-arch` on real NVRTC compiles (no GPU needed): the replay's builds and the CUDA rules that read them.

Each test measures one small app from tests/cuda_apps once (one sample), with backward code off to keep NVRTC
short. They are slow (seconds to a minute each on a busy 2-core machine): run them with --slow, one at a time.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.helpers import ROOT, warp110_python
from warp_compile.probe.diagnose import diagnose
from warp_compile.probe.fix.edits import SourceView
from warp_compile.probe.fmt import fmt_ms
from warp_compile.probe.measure import measure
from warp_compile.probe.models import Report
from warp_compile.probe.rules.cuda_pricing import startup
from warp_compile.probe.scan import scan

APPS = Path(__file__).parent / "cuda_apps"

pytestmark = pytest.mark.slow


def _measure(app: str, python: str = sys.executable) -> Report:
    report = measure([python, str(APPS / app)], APPS, samples=1, timeout_s=600, cuda_arch=90)
    assert report.failed_samples == 0, report.sample_results[0].failure
    assert report.cuda_replay is not None and report.cuda_replay.error is None
    return report


def _mechanisms(report: Report) -> dict[str, str]:
    """mechanism -> "finding" | "ruled_out" | "not_reached", from a diagnosis with the apps' sources scanned."""
    d = diagnose(report, scan(APPS), root=APPS)
    out = {f.mechanism: "finding" for f in d.findings}
    out.update({r.mechanism: "ruled_out" for r in d.ruled_out if r.mechanism not in out})
    out.update({n.mechanism: "not_reached" for n in d.not_reached if n.mechanism not in out})
    return out


def _finding(report: Report, mechanism: str):  # type: ignore[no-untyped-def]
    d = diagnose(report, scan(APPS), root=APPS)
    return next(f for f in d.findings if f.mechanism == mechanism)


def test_two_block_dims_give_two_cuda_builds_and_cs5_with_their_times() -> None:
    report = _measure("two_block_dims.py")
    builds = sorted(report.cuda_builds, key=lambda b: b.block_dim or 0)
    assert [(b.module, b.block_dim, b.status) for b in builds] == [
        ("__main__", 64, "compiled"),
        ("__main__", 128, "compiled"),
    ]
    assert builds[0].kernels == ["scale"] and builds[1].kernels == ["shift"]
    assert builds[0].hash != builds[1].hash  # block_dim is part of the module identity
    for b in builds:
        assert b.arch == 90 and b.binary.endswith(".sm90.cubin")
        assert b.ms > 0 and b.phases["nvrtc"] > 0 and b.source_bytes > 0
        assert abs(sum(b.phases.values()) - b.ms) < 0.05 * b.ms  # exclusive phases add up to the build
        # the first build at each block_dim is repeated at once: the repeat skips NVRTC's start-up
        assert b.repeat_ms is not None and 0 < b.repeat_ms < b.ms, (b.ms, b.repeat_ms)
    s = startup(report)
    assert s is not None and s.ms > 0
    # the CPU run is what the app did: one build at block_dim 1, unaffected by the replay
    assert [(b.device, b.block_dim, b.status) for b in report.builds] == [("cpu", 1, "compiled")]
    cold = report.sample_results[0].cold
    assert report.cuda_replay.ms > 0 and cold.wall_ms > 0
    f = _finding(report, "CS-5")
    text = " ".join(e.fact for e in f.evidence)
    for b in builds:
        assert f"block_dim {b.block_dim}: {b.ms:.0f} ms" in text
    assert "sm_90 via NVRTC, no device" in text
    assert '@wp.kernel(module="__main___bd128") on shift' in f.fix
    d = diagnose(report, scan(APPS), root=APPS, sources=SourceView(APPS))
    (edit,) = next(x for x in d.findings if x.mechanism == "CS-5").edits
    assert edit.file == "two_block_dims.py" and edit.new.strip() == '@wp.kernel(module="__main___bd128")'


def test_forward_tile_matmul_leaves_lto_artifacts_and_gets_cs7() -> None:
    report = _measure("tile_forward.py")
    (b,) = report.cuda_builds
    assert b.status == "compiled", b.error
    assert b.block_dim == 32  # the launch_tiled request, not the CPU's resolved 1
    assert b.lto_artifacts.count > 0 and b.lto_artifacts.bytes > 0 and b.link_inputs > 0
    assert b.phases["lto"] > 0
    assert report.lto_artifacts == 0  # the replay's LTO cache is its own, not the run's
    f = _finding(report, "CS-7")
    assert f"{b.phases['lto']:.0f} ms" in f.evidence[0].fact and "enable_mathdx_gemm" in f.fix


def test_four_independent_modules_get_cs13_judged_on_a_measured_ceiling() -> None:
    report = _measure("four_modules.py")
    assert sorted(b.module for b in report.cuda_builds) == ["stage_a", "stage_b", "stage_c", "stage_d"]
    conc = report.cuda_concurrent
    assert conc is not None and conc.error is None and conc.errors == 0
    assert conc.tasks == 4 and conc.workers >= 1 and conc.wall_ms > 0 and not conc.warm_cache
    assert conc.serial_ms == pytest.approx(sum(b.ms for b in report.cuda_builds), abs=0.01)
    assert conc.cpu_ms is not None and conc.cpu_ms > 0 and conc.serial_cpu_ms is not None and conc.cpus >= 1
    d = diagnose(report, scan(APPS), root=APPS)
    measured = f"{conc.serial_ms:.0f} ms one after another, {conc.wall_ms:.0f} ms on {conc.workers} threads"
    speedup, cores = conc.serial_ms / conc.wall_ms, conc.cpu_ms / conc.wall_ms
    findings = [f for f in d.findings if f.mechanism == "CS-13"]
    if speedup >= 1.25:  # the overlap paid on this machine
        assert measured in findings[0].evidence[0].fact and "modules=None" not in findings[0].fix.split("\n")[0]
    elif conc.workers > 1 and cores < 1.0 + 0.5 * (conc.workers - 1):  # no free core: undecided, and says why
        (n,) = [n for n in d.not_reached if n.mechanism == "CS-13"]
        assert measured in n.reason and f"{cores:.2f} core(s)" in n.reason
    else:  # it had the cores and still did not pay: ruled out with the same measured figures, not assumed
        (r,) = [r for r in d.ruled_out if r.mechanism == "CS-13"]
        assert measured in r.signal


def test_clean_one_module_app_gets_none_of_the_cuda_mechanisms() -> None:
    report = _measure("clean_one.py")
    assert [(b.module, b.block_dim) for b in report.cuda_builds] == [("__main__", 256)]  # CUDA launch default
    assert report.cuda_concurrent is None
    mech = _mechanisms(report)
    assert mech["CS-5"] == "ruled_out" and mech["CS-7"] == "ruled_out" and mech["CS-13"] == "ruled_out"


def test_warp_110_replays_the_same_way() -> None:
    python = warp110_python()
    if python is None:
        pytest.skip("warp-lang 1.10.1 interpreter not found (scripts/venv-warp110.sh)")
    report = _measure("two_block_dims.py", python)
    assert report.warp_version == "1.10.1"
    builds = sorted(report.cuda_builds, key=lambda b: b.block_dim or 0)
    expected = [(64, "compiled", ["scale"]), (128, "compiled", ["shift"])]
    assert [(b.block_dim, b.status, b.kernels) for b in builds] == expected
    assert all(b.binary.endswith(".sm90.cubin") and b.output == "cubin" for b in builds)  # use_ptx=False


def _toolkit12_python() -> str | None:
    """An interpreter whose warp-lang ships CUDA toolkit 12.x (1.10-1.17): WARP_TOOLKIT12_PYTHON, else the
    .venv-warp-1.15.0 that CI makes (scripts/venv-warp.sh 1.15.0)."""
    import os

    explicit = os.environ.get("WARP_TOOLKIT12_PYTHON")
    if explicit:
        return explicit
    candidate = ROOT / ".venv-warp-1.15.0" / "bin" / "python"
    return str(candidate) if candidate.exists() else None


def test_five_small_modules_on_toolkit_12_measure_nvrtcs_header_both_ways() -> None:
    """Below toolkit 13 NVRTC writes one precompiled header in the first build and reads it in the others; the
    replay rebuilds all five without it in a fresh process, and CS-12 quotes both totals, whichever way they fall."""
    python = _toolkit12_python()
    if python is None:
        pytest.skip("no toolkit-12 warp interpreter (scripts/venv-warp.sh 1.15.0, or WARP_TOOLKIT12_PYTHON)")
    report = _measure("five_small.py", python)
    assert report.cuda_replay.toolkit.startswith("12.") and report.cuda_replay.nvrtc_pch is True
    builds = report.cuda_builds
    assert sorted(b.module for b in builds) == [f"small_{c}" for c in "abcde"]
    assert all(b.status == "compiled" and b.nvrtc_header is not None and b.nvrtc_header.dir for b in builds)
    writers = [b for b in builds if b.nvrtc_header.files]
    assert len(writers) == 1 and writers[0].nvrtc_header.bytes > 1_000_000  # one header, read by the other four
    for b in builds:
        assert b.no_header is not None and b.no_header.status == "compiled" and not b.no_header.warm_cache
        assert b.no_header.ms > 0 and b.cpu_ms and b.no_header.cpu_ms
    on, off = sum(b.ms for b in builds), sum(b.no_header.ms for b in builds)
    d = diagnose(report, scan(APPS), root=APPS)
    texts = [e.fact for f in d.findings if f.mechanism == "CS-12" for e in f.evidence]
    texts += [r.signal for r in d.ruled_out if r.mechanism == "CS-12"]
    assert any(f"{fmt_ms(on)} with NVRTC's precompiled header" in t and f"{fmt_ms(off)} rebuilt without it" in t
               for t in texts), texts


@pytest.mark.heavy
def test_backward_tile_module_is_rebuilt_forward_only_and_cs10_carries_the_cuda_cost() -> None:
    """The longest replay here (minutes on a busy 2-core machine): MathDx LTO for the adjoint GEMMs too."""
    report = _measure("tile_backward.py")
    (b,) = report.cuda_builds
    assert b.status == "compiled" and b.backward and b.backward_source_bytes
    f = b.forward
    assert f is not None and f.status == "compiled" and not f.warm_cache
    assert 0 < f.lto_artifacts.count < b.lto_artifacts.count and f.link_inputs < b.link_inputs
    assert 0 < f.ms < b.ms
    finding = _finding(report, "CS-10")
    cuda = finding.evidence[-1]
    assert cuda.ms == pytest.approx(b.ms - f.ms, abs=0.1)
    assert f"measured: {b.ms:.0f} ms with backward code, {f.ms:.0f} ms rebuilt forward-only" in cuda.fact
    assert "sm_90 via NVRTC, no device" in cuda.fact


def test_a_plain_backward_module_is_rebuilt_forward_only_and_cs10_carries_the_measured_difference() -> None:
    report = _measure("plain_backward.py")
    (b,) = report.cuda_builds
    assert b.backward and b.backward_source_bytes and b.forward is not None and b.forward.status == "compiled"
    assert b.forward.source_bytes < b.source_bytes and b.lto_artifacts.count == 0
    cuda = _finding(report, "CS-10").evidence[-1]
    assert cuda.ms == pytest.approx(max(0.0, b.ms - b.forward.ms), abs=0.1) and "rebuilt forward-only" in cuda.fact
