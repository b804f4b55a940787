"""The release matrix: the hook, diagnose and the CUDA replay under one warp-lang release per interpreter.

Marker `release` (and `slow`). The interpreters: WARP_RELEASE_PYTHON (one path, or several joined by os.pathsep)
when it is set; else this interpreter (the newest warp), the 1.10.1 one (scripts/venv-warp110.sh) and every
`.venv-warp-X.Y.Z/` in the project root (scripts/venv-warp.sh X.Y.Z). One small app (tests/release_app: a late
option, then a late generic instance, on the CPU) is diagnosed once per interpreter, one sample, with
`--cuda-arch 90`; every test reads that shared run. scripts/release-matrix.sh runs this file on every minor release
and, with WARP_RELEASE_RECORD=DIR, the run's report and diagnosis land in DIR for bench/RELEASES.md.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import warp110_python
from warp_compile.probe.diagnose import diagnose_command

ROOT = Path(__file__).resolve().parents[1]
APP = Path(__file__).parent / "release_app"
SOURCE = (APP / "app.py").read_text()

pytestmark = [pytest.mark.slow, pytest.mark.release]


def _line(text: str) -> int:
    return next(i for i, ln in enumerate(SOURCE.splitlines(), 1) if text in ln)


def _interpreters() -> list:
    named = os.environ.get("WARP_RELEASE_PYTHON")
    if named:
        return [pytest.param(p, id=Path(p).parent.parent.name or p) for p in named.split(os.pathsep) if p]
    found = [pytest.param(sys.executable, id="newest")]
    py110 = warp110_python()
    if py110:
        found.append(pytest.param(py110, id="warp-1.10.1"))
    for venv in sorted(ROOT.glob(".venv-warp-*")):
        if (venv / "bin" / "python").exists():
            found.append(pytest.param(str(venv / "bin" / "python"), id=venv.name[len(".venv-"):]))
    return found


@pytest.fixture(scope="session")
def release_run():  # type: ignore[no-untyped-def]
    """release_run(python) -> (report, diagnosis), measured once per interpreter for the session."""
    cache: dict[str, tuple] = {}
    record = os.environ.get("WARP_RELEASE_RECORD")

    def get(python: str):  # type: ignore[no-untyped-def]
        if python not in cache:
            out = subprocess.run([python, "-c", "import warp; print(warp.__version__)"], capture_output=True,
                                 text=True, timeout=300)
            if out.returncode != 0:
                pytest.fail(f"{python} does not import warp: {out.stderr.strip()[-300:]}")
            report, diagnosis = diagnose_command([python, "app.py"], APP, samples=1, timeout_s=900, cuda_arch=90)
            cache[python] = (out.stdout.strip().splitlines()[-1], report, diagnosis)
            if record:
                version = cache[python][0]
                Path(record).mkdir(parents=True, exist_ok=True)
                Path(record, f"{version}.report.json").write_text(report.model_dump_json(indent=1))
                Path(record, f"{version}.diagnosis.json").write_text(diagnosis.model_dump_json(indent=1))
        return cache[python]

    return get


@pytest.mark.parametrize("python", _interpreters())
def test_structured_builds_and_a_late_option(python, release_run) -> None:  # type: ignore[no-untyped-def]
    version, report, diagnosis = release_run(python)
    assert report.failed_samples == 0, report.sample_results[0].failure
    assert report.warp_version == version
    assert report.hook.mode == "wrap" and not report.hook.errors, report.hook.errors
    builds = [b for b in report.builds if b.module == "__main__"]
    assert [b.status for b in builds] == ["compiled"] * 3
    assert len({b.hash for b in builds}) == 3
    assert all(b.native_ms > 0 and b.codegen_ms > 0 for b in builds)
    lines = [_line("wp.launch(scale"), _line("wp.launch(shift, dim=8, inputs=[a]"), _line("inputs=[b]")]
    assert [b.trigger.line for b in builds] == lines
    assert {k.key for k in builds[0].kernels} == {"scale"}
    (change,) = [h for h in diagnosis.hash_changes if any(c.kind == "option_changed" for c in h.causes)]
    (opt,) = [c for c in change.causes if c.kind == "option_changed"]
    assert (opt.option, opt.before, opt.after) == ("fast_math", "False", "True")
    assert "CS-3" in {f.mechanism for f in diagnosis.findings}


@pytest.mark.parametrize("python", _interpreters())
def test_a_late_generic_instance_is_named_cs6(python, release_run) -> None:  # type: ignore[no-untyped-def]
    _version, report, diagnosis = release_run(python)
    (f,) = [f for f in diagnosis.findings if f.mechanism == "CS-6"]
    assert f.modules == ["__main__"]
    assert _line("inputs=[b]") in {loc.line for loc in f.locations}
    assert f.estimated_saving_ms and f.estimated_saving_ms > 0


@pytest.mark.parametrize("python", _interpreters())
def test_the_cuda_replay_compiles_and_says_what_it_produced(python, release_run) -> None:  # type: ignore[no-untyped-def]
    _version, report, _diagnosis = release_run(python)
    replay = report.cuda_replay
    assert replay is not None and replay.error is None and replay.arch == 90 and replay.ms > 0
    assert replay.toolkit
    (b,) = report.cuda_builds
    assert (b.module, b.block_dim, b.status) == ("__main__", 256, "compiled"), b.error
    assert b.output in ("cubin", "ptx") and b.binary.endswith(f".sm90.{b.output}")
    assert b.ms > 0 and b.phases["nvrtc"] > 0 and b.cpu_ms is not None and b.cpu_ms > 0
    header = b.nvrtc_header
    assert header is not None
    if header.files:  # NVRTC wrote a precompiled header: the build is measured again without it
        assert replay.nvrtc_pch is True and header.bytes > 0 and header.dir
        assert b.no_header is not None and b.no_header.status == "compiled" and b.no_header.ms > 0
        assert not b.no_header.warm_cache
    else:
        assert replay.nvrtc_pch is False and b.no_header is None
    if int(replay.toolkit.split(".")[0]) >= 13:  # from toolkit 13 Warp gives NVRTC no header directory
        assert not header.dir and not header.files
