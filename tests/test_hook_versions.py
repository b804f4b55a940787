"""The hook against the oldest and the newest supported warp-lang, each in its own interpreter.

The newest is the interpreter running the tests; the oldest (1.10.1) comes from scripts/venv-warp110.sh
(CI makes it; locally the tests skip with a hint when it is missing, or use WARP110_PYTHON).
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.helpers import interpreters as _interpreters
from tests.test_measure import CLEAR_APP, OPTIONS_APP, line_of, write_app
from warp_compile.probe.measure import measure
from warp_compile.probe.models import WarningCode

ROOT = Path(__file__).resolve().parents[1]




def _version(python: str) -> str:
    out = subprocess.run([python, "-c", "import warp; print(warp.__version__)"], capture_output=True, text=True)
    return out.stdout.strip().splitlines()[-1]


@pytest.mark.slow
@pytest.mark.parametrize("python", _interpreters())
def test_option_change_two_builds_and_triggers(python, tmp_path):
    root = write_app(tmp_path, OPTIONS_APP)
    report = measure([python, "-m", "app"], root, samples=1)
    assert report.warp_version == _version(python)
    builds = [b for b in report.builds if b.module == "__main__"]
    assert [b.status for b in builds] == ["compiled", "compiled"]
    assert builds[0].hash != builds[1].hash
    assert [b.trigger.line for b in builds] == [line_of(OPTIONS_APP, "wp.launch(scale"),
                                                line_of(OPTIONS_APP, "wp.launch(shift")]
    assert all(b.native_ms > 0 and b.codegen_ms > 0 for b in builds)
    assert {k.key for k in builds[1].kernels} == {"scale", "shift"}
    assert [lc.kernel for lc in report.launches] == ["scale", "shift"]
    assert report.hook.mode == "wrap" and not report.hook.errors
    # the CPU clocks (issue 25): each build's thread CPU time, never more than its wall time (one thread), and the
    # run's rusage, on every release
    for b in builds:
        assert b.cpu_ms is not None and 0 < b.cpu_ms <= b.ms * 1.05 + 2.0, (b.cpu_ms, b.ms)
        assert b.native_cpu_ms is not None and b.native_cpu_ms <= b.cpu_ms + 0.5
    assert report.compile_cpu_ms.median and report.cold_module_cpu_ms.median
    assert report.cold_cpu_ms.median > report.compile_cpu_ms.median
    if tuple(int(x) for x in report.warp_version.split(".")[:2]) >= (1, 13):
        assert report.pch_ms.median > 0  # CPU precompiled headers exist from 1.13 on
        assert max(b.ms for b in builds) < report.pch_ms.median
        assert 0 < report.pch_cpu_ms.median <= report.pch_ms.median * 1.05 + 2.0


@pytest.mark.slow
@pytest.mark.parametrize("python", _interpreters())
def test_cache_clear_recorded_with_site(python, tmp_path):
    root = write_app(tmp_path, CLEAR_APP)
    report = measure([python, "-m", "app"], root, samples=1)
    assert [c.api for c in report.cache.calls] == ["clear_kernel_cache"]
    assert report.cache.calls[0].site.line == line_of(CLEAR_APP, "wp.clear_kernel_cache()")
    assert [b.status for b in report.warm_builds] == ["compiled"]


@pytest.mark.slow
@pytest.mark.parametrize("python", _interpreters())
def test_log_fallback_recovers_builds_when_the_loader_cannot_be_wrapped(python, tmp_path, monkeypatch):
    """Without Module.load to wrap, the hook raises Warp's log level in the child and the parent parses it."""
    monkeypatch.setenv("WARP_COMPILE_FORCE_LOG", "1")
    root = write_app(tmp_path, OPTIONS_APP)
    report = measure([python, "-m", "app"], root, samples=1)
    assert report.hook.mode == "log" and report.hook.targets["Module.load"] == "missing"
    assert "fallback" in report.hook.targets
    builds = [b for b in report.builds if b.module == "__main__"]
    assert [b.status for b in builds] == ["compiled", "compiled"]
    assert all(b.path == "log" for b in builds)
    assert builds[0].hash_short != builds[1].hash_short and len(builds[0].hash_short) == 7
    assert all(b.block_dim == 1 for b in builds)
    if tuple(int(x) for x in report.warp_version.split(".")[:2]) >= (1, 13):
        assert all(b.native_ms > 0 for b in builds)  # the "Compile x86" timer prints at debug level
    assert WarningCode.LOG_FALLBACK in [w.code for w in report.warnings]
