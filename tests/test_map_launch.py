"""WC-1's application-side lever for kernels Warp's `wp.map` makes again at every call (warp-lang before 1.11,
NVIDIA/warp #1108): the mapped kernel written once and launched where `wp.map` was called
(probe/fix/place/map_launch.py). Synthetic records against sources written to tmp_path for what it writes and what
refuses it; the written file is run with real Warp against the original (slow) to show the output is the same.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.test_transform import _apply, _write
from warp_compile.probe.fix.edits import SourceView
from warp_compile.probe.fix.place.map_launch import map_launch
from warp_compile.probe.models import KernelCreation, Launch, Report, Site
from warp_compile.probe.models.report import WarpSite
from warp_compile.probe.rules.context import RuleContext
from warp_compile.probe.scan import scan

APP = """\
import numpy as np
import warp as wp


@wp.func
def soft_clip(x: float, knee: float):
    return x / (1.0 + wp.abs(x) / knee)


def main():
    signal = wp.array(np.linspace(-8.0, 8.0, 64, dtype=np.float32), dtype=float, device="cpu")
    for _ in range(5):
        {call}
    out = signal.numpy()
    print(f"rms {{float(np.sqrt((out * out).mean())):.6f}} peak {{float(np.abs(out).max()):.6f}}")


if __name__ == "__main__":
    main()
"""
CALL_LINE = 13
ARR = {"array": "array", "dtype": {"kind": "type", "module": "warp", "name": "float32"}, "ndim": 1, "ones": []}
VALUE = {"value": "float", "module": "builtins"}


def _project(root: Path, call: str) -> Path:
    return _write(root, {"soften.py": APP.format(call=call)})


def _ctx(root: Path, inputs: list[dict] | None = None, dtypes: list[str] | None = None, name: str = "soft_clip",
         n: int = 4) -> tuple[RuleContext, list[KernelCreation]]:
    mapped = {"key": name, "function": {"kind": "function", "module": "__main__", "name": name},
              "inputs": inputs or [ARR, VALUE], "out": []}
    file = str(root / "soften.py")
    made = [KernelCreation(key="map_kernel", module=f"map_{name}", file=file, line=CALL_LINE, function="main",
                           via=WarpSite(file="/v/warp/_src/utils.py", line=1058, function="map"), mapped=mapped,
                           start_ms=100.0 + i) for i in range(n)]
    launch = Launch(kernel="map_kernel", module=f"map_{name}", dim=[64], device="cpu",
                    dtypes=dtypes or ["array[float32;1d]", "float", "array[float32;1d]"],
                    site=Site(file=file, line=CALL_LINE, function="main"), count=n)
    report = Report(command=["python", "soften.py"], cwd=str(root), samples=1, kernel_creations=made,
                    launches=[launch])
    return RuleContext(report=report, scan=scan(root), root=root, sources=SourceView(root)), made


def test_a_map_assigned_back_to_its_input_is_written_as_one_kernel_and_a_launch_into_a_fresh_name(
    tmp_path: Path,
) -> None:
    root = _project(tmp_path / "p", "signal = wp.map(soft_clip, signal, 2.0)")
    ctx, made = _ctx(root)
    step = map_launch(ctx, made)
    assert step.ok, step.why_not
    text = _apply(root, step.edits, tmp_path / "out")["soften.py"]
    assert "@wp.kernel\ndef _soft_clip_map(x: wp.array(dtype=wp.float32, ndim=1), knee: float," in text
    assert "out[i] = soft_clip(x[i], knee)" in text
    # the output may not overwrite the input the launch reads: a fresh name, bound after the launch
    assert "signal_out = wp.empty(signal.shape, dtype=wp.float32, device=signal.device)" in text
    assert "inputs=[signal, 2.0], outputs=[signal_out]" in text and "signal = signal_out" in text
    assert "wp.map(" not in text


def test_what_the_record_does_not_fix_refuses_the_lever_with_its_reason(tmp_path: Path) -> None:
    root = _project(tmp_path / "p", "clipped = wp.map(soft_clip, signal, 2.0)\n        signal = clipped")
    cases = {
        "broadcast": (dict(inputs=[{**ARR, "ones": [0]}, VALUE]), "size 1"),
        "indexed": (dict(inputs=[{**ARR, "array": "indexedarray"}, VALUE]), "not a plain wp.array"),
        "two outputs": (dict(dtypes=["array[float32;1d]", "float", "array[float32;1d]", "array[float32;1d]"]),
                        "one output"),
        "a lambda": (dict(name="<lambda>"), "lambda"),
    }
    for what, (kw, why) in cases.items():
        ctx, made = _ctx(root, **kw)  # type: ignore[arg-type]
        step = map_launch(ctx, made)
        assert not step.ok and why in step.why_not, (what, step.why_not)
    ctx, made = _ctx(root)
    made[-1].mapped = {**made[-1].mapped, "inputs": [ARR, {"value": "int", "module": "builtins"}]}  # type: ignore[dict-item]
    assert "other input types" in map_launch(ctx, made).why_not


def test_a_map_with_keywords_or_a_call_among_its_inputs_is_not_rewritten(tmp_path: Path) -> None:
    for call, why in (('clipped = wp.map(soft_clip, signal, 2.0, device="cpu")', "positional"),
                      ("clipped = wp.map(soft_clip, signal.flatten(), 2.0)", "read again")):
        root = _project(tmp_path / call[:12].replace(" ", "_") / str(len(call)), call + "\n        signal = clipped")
        ctx, made = _ctx(root)
        step = map_launch(ctx, made)
        assert not step.ok and why in step.why_not, step.why_not


@pytest.mark.slow
def test_the_written_lever_prints_what_the_map_printed(tmp_path: Path) -> None:
    """Real Warp (this interpreter's): the original with wp.map and the written kernel print the same line."""
    root = _project(tmp_path / "p", "signal = wp.map(soft_clip, signal, 2.0)")
    ctx, made = _ctx(root)
    step = map_launch(ctx, made)
    assert step.ok, step.why_not
    assert "wp.map(" not in _apply(root, step.edits, tmp_path / "out")["soften.py"]
    env_run = [sys.executable, "soften.py"]
    before = subprocess.run(env_run, cwd=root, capture_output=True, text=True, timeout=300)
    after = subprocess.run(env_run, cwd=tmp_path / "out", capture_output=True, text=True, timeout=300)
    assert before.returncode == 0 and after.returncode == 0, after.stderr[-2000:]
    lines = [ln for ln in before.stdout.splitlines() if ln.startswith("rms")]
    assert lines and lines == [ln for ln in after.stdout.splitlines() if ln.startswith("rms")]


def test_wc1_on_warps_map_keeps_the_upstream_report_and_writes_the_apps_lever(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The per-call rule on warp-1108's record: the kernels are warp-lang's (upstream report at map()'s line), and
    the application's own edit is the mapped kernel written once, rated review."""
    from tests.test_per_call import _ctx as rule_ctx
    from tests.test_per_call import _report
    from warp_compile.probe.rules import helpers, per_call

    warp_file = "/venv/lib/python3.11/site-packages/warp/_src/utils.py"
    monkeypatch.setattr(helpers, "dependency_of", lambda ctx, file: "warp-lang" if file == warp_file else None)
    root = _project(tmp_path / "p", "signal = wp.map(soft_clip, signal, 2.0)")
    _c, made = _ctx(root, n=21)
    for i, c in enumerate(made):
        c.via = WarpSite(file=warp_file, line=1058, function="map")
        c.start_ms, c.made_ms, c.init_ms = 100.0 + 5.0 * i + 1.0, 2.0, 1.5
        c.caller = Site(file=str(root / "soften.py"), line=19, function="<module>")
    report = _report(root, made)
    report.launches += _c.report.launches
    (f,) = per_call.evaluate(rule_ctx(report, root)).findings
    assert f.upstream is not None and f.upstream.distribution == "warp-lang"
    assert f.applicability == "review" and any("_soft_clip_map" in e.new for e in f.edits)
    assert "written once" in f.fix
