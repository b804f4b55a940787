"""`--cuda-arch` without compiling: the replay file's constraints, its events, the rules and compare that read them.

The rule tests use synthetic reports shaped like the replay's output (tests/test_cuda_replay.py compiles for real).
"""

from __future__ import annotations

import ast
import json
import sys
from pathlib import Path

import pytest

from tests.test_cli_hardening import exit_code, one_line_error
from warp_compile.probe.compare import compare
from warp_compile.probe.diagnose import diagnose
from warp_compile.probe.events import parse_lines
from warp_compile.probe.measure import _run_data
from warp_compile.probe.models import (
    Build,
    CudaBuild,
    CudaConcurrent,
    CudaReplay,
    KernelInfo,
    Launch,
    LtoArtifacts,
    Report,
    RunResult,
    SampleResult,
    Stat,
)
from warp_compile.probe.sandbox import RunOutcome, Sandbox

HOOK_CUDA = Path(__file__).resolve().parents[1] / "probe" / "hook_cuda.py"


def test_replay_file_parses_as_python_39_and_imports_only_the_standard_library() -> None:
    tree = ast.parse(HOOK_CUDA.read_text(), feature_version=(3, 9))
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0
            names.add((node.module or "").split(".")[0])
    assert names and names <= set(sys.stdlib_module_names), names - set(sys.stdlib_module_names)


def test_the_sandbox_puts_the_replay_file_next_to_the_hook() -> None:
    with Sandbox() as box:
        assert (box.hook_dir / "hook_cuda.py").read_text() == HOOK_CUDA.read_text()
        assert (box.hook_dir / "sitecustomize.py").is_file()


def _cuda(module: str, bd: int, ms: float, kernels: list[str], **kw) -> CudaBuild:  # type: ignore[no-untyped-def]
    return CudaBuild(
        module=module,
        hash=f"{module}{bd}".encode().hex().ljust(64, "0")[:64],
        block_dim=bd,
        arch=90,
        ms=ms,
        phases=kw.pop("phases", {"codegen": 2.0, "nvrtc": ms - 3.0, "other": 1.0}),
        source_bytes=4000,
        kernels=kernels,
        via=kw.pop("via", ["launch"]),
        **kw,
    )


def _cpu(seq: int, module: str, keys: list[str]) -> Build:
    h = (f"{seq:x}" * 64)[:64]
    return Build(
        seq=seq, module=module, hash=h, hash_short=h[:7], device="cpu", block_dim=1, status="compiled", ms=150.0,
        native_ms=140.0, kernels=[KernelInfo(key=k, hash=h[:8], file="/p/app.py", line=10 + i) for i, k in
                                  enumerate(keys)],
        options={"enable_backward": "False", "block_dim": "1"},
    )


def _report(cuda: list[CudaBuild], cpu: list[Build], conc: CudaConcurrent | None = None) -> Report:
    run = RunResult(phase="cold", wall_ms=3000.0, exit_code=0, module_ms=sum(b.ms for b in cpu))
    return Report(
        command=["python", "app.py"], cwd="/p", samples=1, warp_version="1.19.0", builds=cpu,
        cold_module_ms=Stat(median=run.module_ms, values=[run.module_ms]),
        sample_results=[SampleResult(index=0, ok=True, cold=run)],
        cuda_builds=cuda, cuda_concurrent=conc, cuda_replay=CudaReplay(arch=90, ms=1234.0, toolkit="13.4"),
    )


def _outcome(report: Report, mechanism: str) -> tuple[str, object]:
    d = diagnose(report, None)
    for kind, items in (("finding", d.findings), ("ruled_out", d.ruled_out), ("not_reached", d.not_reached)):
        for it in items:
            if it.mechanism == mechanism:
                return kind, it
    raise AssertionError(f"{mechanism} not judged")


def test_replay_events_are_parsed_and_the_replay_is_taken_out_of_the_cold_wall(tmp_path: Path) -> None:
    lines = [
        json.dumps({"kind": "hello", "hook_version": "1", "python": "3.11"}),
        json.dumps({"kind": "cuda_build", "module": "m", "hash": "ab" * 32, "block_dim": 64, "arch": 90, "ms": 500.0,
                    "phases": {"nvrtc": 490.0, "codegen": 10.0}, "lto_artifacts": {"count": 1, "bytes": 10},
                    "status": "compiled", "kernels": ["k"], "via": ["launch"], "seq": 7}),
        json.dumps({"kind": "cuda_concurrent", "workers": 2, "tasks": 2, "wall_ms": 600.0, "serial_ms": 900.0}),
        json.dumps({"kind": "cuda_replay", "arch": 90, "ms": 1700.0, "toolkit": "13.4", "driver": False}),
    ]
    ev = parse_lines(lines)
    assert [(b.module, b.block_dim, b.lto_artifacts.count) for b in ev.cuda_builds] == [("m", 64, 1)]
    assert ev.cuda_concurrent is not None and ev.cuda_concurrent.wall_ms == 600.0
    assert ev.cuda_replay is not None and ev.cuda_replay.label == "sm_90 via NVRTC, no device"
    path = tmp_path / "events.jsonl"
    path.write_text("\n".join(lines) + "\n")
    out = RunOutcome(exit_code=0, wall_ms=5000.0, timed_out=False, stdout="", stderr="", events_path=path)
    assert _run_data("cold", out).result.wall_ms == pytest.approx(5000.0 - 1700.0)


def test_cs5_from_the_replay_names_the_kernels_per_size_and_the_preload() -> None:
    cuda = [
        _cuda("m", 64, 800.0, ["ka"]),
        _cuda("m", 128, 700.0, ["kb"]),
        _cuda("m", 256, 600.0, [], via=["preload"]),  # a preload's default nothing launches at
    ]
    kind, f = _outcome(_report(cuda, [_cpu(1, "m", ["ka", "kb"])]), "CS-5")
    assert kind == "finding"
    # each variant keeps the share of kernels launched at its size; the unlaunched variant goes entirely
    assert f.estimated_saving_ms == pytest.approx(800.0 * 0.5 + 700.0 * 0.5 + 600.0)
    assert "sm_90 via NVRTC, no device" in f.evidence[0].fact
    # ka (64) stays in m, kb (128) moves; the preload's block_dim 256 variant is named with the size to pass
    assert '@wp.kernel(module="m_bd128") on kb' in f.fix and "launched at block_dim 64 stay in m" in f.fix
    assert "block_dim 256 variant of m was built by a preload" in f.fix and "pass block_dim=64" in f.fix
    # no sources to read: no edit, and the review says why (not an upstream report: nothing says it is a library's)
    assert f.edits == [] and f.applicability == "manual" and f.upstream is None and "sources" in f.review


def test_cs5_from_the_replay_is_ruled_out_with_one_variant_per_module() -> None:
    kind, r = _outcome(_report([_cuda("m", 256, 500.0, ["ka"])], [_cpu(1, "m", ["ka"])]), "CS-5")
    assert kind == "ruled_out" and "sm_90" in r.signal


def test_cs7_from_the_replay_reads_lto_generation_and_artifacts() -> None:
    lto = _cuda("t", 32, 2000.0, ["mm"], phases={"codegen": 5.0, "lto": 1500.0, "nvrtc": 490.0, "other": 5.0},
                lto_artifacts=LtoArtifacts(count=1, bytes=5_000_000), link_inputs=1)
    kind, f = _outcome(_report([lto], [_cpu(1, "t", ["mm"])]), "CS-7")
    assert kind == "finding" and f.estimated_saving_ms == 1500.0
    assert "1500 ms (75%)" in f.evidence[0].fact and "1 .lto artifact(s), 5.0 MB" in f.evidence[0].fact
    kind, r = _outcome(_report([_cuda("t", 32, 500.0, ["k"])], [_cpu(1, "t", ["k"])]), "CS-7")
    assert kind == "ruled_out" and "no .lto artifacts" in r.signal


def test_cs13_from_the_replay_uses_the_measured_concurrent_wall() -> None:
    mods = ["a", "b", "c", "d"]
    cuda = [_cuda(m, 256, 500.0, [f"k{m}"]) for m in mods]
    cpu = [_cpu(i + 1, m, [f"k{m}"]) for i, m in enumerate(mods)]
    conc = CudaConcurrent(workers=2, tasks=4, wall_ms=1000.0, serial_ms=2000.0, summed_ms=2000.0)
    kind, f = _outcome(_report(cuda, cpu, conc), "CS-13")
    assert kind == "finding" and f.estimated_saving_ms == 1000.0
    assert "2000 ms one after another, 1000 ms on 2 threads (2.00x" in f.evidence[0].fact
    call = next(ln for ln in f.fix.splitlines() if ln.startswith("wp.force_load"))
    assert all(f'wp.get_module("{m}")' in call for m in mods) and "block_dim=256" in call
    assert "modules=None" not in call
    slow = CudaConcurrent(workers=2, tasks=4, wall_ms=2200.0, serial_ms=2000.0, summed_ms=4400.0)
    kind, r = _outcome(_report(cuda, cpu, slow), "CS-13")
    assert kind == "ruled_out" and "2000 ms one after another, 2200 ms on 2 threads (0.91x" in r.signal


def test_compare_judges_a_cuda_clock_only_when_both_reports_have_cuda_builds() -> None:
    cpu = [_cpu(1, "m", ["ka", "kb"])]
    before = _report([_cuda("m", 64, 800.0, ["ka"]), _cuda("m", 128, 700.0, ["kb"])], cpu)
    after = _report([_cuda("m_bd64", 64, 500.0, ["ka"]), _cuda("m_bd128", 128, 450.0, ["kb"])], cpu)
    c = compare(before, after)
    clock = next(k for k in c.clocks if k.name == "cuda_compile")
    assert clock.delta_ms == pytest.approx(950.0 - 1500.0) and clock.outcome == "improved"
    assert all(k.name != "cuda_compile" for k in compare(before, _report([], cpu)).clocks)


def test_cuda_arch_flag_rejects_bad_values_in_one_line(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert exit_code(["measure", "--cuda-arch", "abc", "--", sys.executable, "-c", "pass"]) == 2
    assert "--cuda-arch" in one_line_error(capsys)
    assert exit_code(["diagnose", "--cuda-arch", "7", "--", sys.executable, "-c", "pass"]) == 2
    one_line_error(capsys)
    rep = tmp_path / "r.json"
    rep.write_text(_report([], [_cpu(1, "m", ["k"])]).model_dump_json())
    assert exit_code(["diagnose", "--report", str(rep), "--cuda-arch", "90"]) == 2
    assert "--cuda-arch" in one_line_error(capsys)


def _three(r: Report, cuda_ms: list[float], cold_ms: list[float]) -> Report:
    """The same report as three samples with the given per-sample CUDA and CPU cold-module clocks."""
    runs = [RunResult(phase="cold", wall_ms=3000.0, exit_code=0, module_ms=m) for m in cold_ms]
    return r.model_copy(update={
        "samples": 3, "sample_results": [SampleResult(index=i, ok=True, cold=run) for i, run in enumerate(runs)],
        "cold_module_ms": Stat(median=sorted(cold_ms)[1], values=cold_ms),
        "cuda_compile_ms": Stat(median=sorted(cuda_ms)[1], values=cuda_ms),
    })


def test_a_cpu_regression_does_not_outvote_a_cuda_gain_in_a_cuda_compare() -> None:
    """Splitting a module by block_dim costs one more CPU module but halves the CUDA work: a --cuda-arch compare is
    about the GPU start-up, so the CPU clock is shown, set aside, and said so; without a CUDA gain it still decides."""
    one = [_cpu(1, "m", ["ka", "kb"])]
    two = [_cpu(1, "m_bd64", ["ka"]), _cpu(2, "m_bd128", ["kb"])]
    before = _three(_report([_cuda("m", 64, 800.0, ["ka", "kb"]), _cuda("m", 128, 700.0, ["ka", "kb"])], one),
                    [1500.0, 1510.0, 1490.0], [150.0, 151.0, 149.0])
    after = _three(_report([_cuda("m_bd64", 64, 420.0, ["ka"]), _cuda("m_bd128", 128, 380.0, ["kb"])], two),
                   [800.0, 805.0, 795.0], [300.0, 301.0, 299.0])
    launches = [Launch(kernel=k, module="m", dim=[64], device="cpu", block_dim=1) for k in ("ka", "kb")]
    before, after = (r.model_copy(update={"launches": launches}) for r in (before, after))
    c = compare(before, after)
    cold = next(k for k in c.clocks if k.name == "cold_module")
    assert c.verdict == "IMPROVED", c.reason
    assert cold.outcome == "regressed" and not cold.decisive and "stands in" in cold.left_out
    no_gain = after.model_copy(update={"cuda_compile_ms": before.cuda_compile_ms})
    assert compare(before, no_gain).verdict == "REGRESSION"
