"""CS-1's closure edit (issue 22, the plugin factory): a kernel a method or factory makes per call, capturing plain
numbers, moves to module scope with those numbers as kernel arguments, and every launch of the factory's kernel
passes them; where one launch is out of reach (the kernel stored, a value that is not a number) the edit falls back
to module="unique" and says why.

Fast tests diagnose synthetic measurements against sources written to tmp_path; the slow one measures a real app
with the hook (which records the captured values' types), applies the edit and runs both copies.
"""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.helpers import synth_build
from warp_compile.probe.compare.equivalence import check_equivalence, without_added_args
from warp_compile.probe.diagnose import diagnose_sources
from warp_compile.probe.fix.edits import SourceView, apply_edits
from warp_compile.probe.fix.engine import FixOptions, run_fix
from warp_compile.probe.hashdiff import explain_changes
from warp_compile.probe.measure import measure
from warp_compile.probe.models import KernelInfo, Launch, Report, Trigger
from warp_compile.probe.models.diagnosis import Finding
from warp_compile.probe.rules import late_kernels
from warp_compile.probe.rules.context import RuleContext
from warp_compile.probe.scan import scan

OPTS = {"fast_math": "False", "mode": "release", "enable_backward": "False"}

PLUGINS = """\
# Copyright (c) the plugin authors.
import sys

import numpy as np
import warp as wp


@wp.kernel
def fill(values: wp.array(dtype=float)):
    values[wp.tid()] = float(wp.tid())


class Plugin:
    def __init__(self, gain: float):
        self.gain = gain

    def make_kernel(self):
        gain = self.gain

        @wp.kernel
        def apply(values: wp.array(dtype=float), out: wp.array(dtype=float)):
            i = wp.tid()
            out[i] = out[i] + gain * values[i]

        return apply

    def run(self, values, out):
        wp.launch(self.make_kernel(), dim=values.shape[0], inputs=[values, out], device="cpu")


def main():
    values = wp.zeros(16, dtype=float, device="cpu")
    out = wp.zeros(16, dtype=float, device="cpu")
    wp.launch(fill, dim=16, inputs=[values], device="cpu")
    for gain in (0.5, 1.5, 0.25):
        Plugin(gain).run(values, out)
    print("total", float(np.sum(out.numpy())))


if __name__ == "__main__":
    sys.exit(main())
"""

FACTORY = """\
import warp as wp


@wp.kernel
def fill(values: wp.array(dtype=float)):
    values[wp.tid()] = 1.0


def make_scale(factor: float, shift: int = 2):
    @wp.kernel
    def scale(values: wp.array(dtype=float)):
        i = wp.tid()
        values[i] = values[i] * factor + float(shift)

    return scale


def main(values):
    wp.launch(fill, dim=8, inputs=[values], device="cpu")
    wp.launch(make_scale(2.0), dim=8, inputs=[values], device="cpu")
    wp.launch(make_scale(3.0, shift=1), dim=8, inputs=(values,), device="cpu")
"""


def _write(root: Path, name: str, text: str) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / name).write_text(textwrap.dedent(text))
    return root / name


def _line(text: str, needle: str) -> int:
    return next(i for i, ln in enumerate(text.splitlines(), 1) if needle in ln)


def _finding(root: Path, text: str, late_key: str, late_name: str, closure: dict[str, str] | None) -> Finding:
    """CS-1 on a synthetic run: the module built with `fill`, then rebuilt when the closure kernel joined it."""
    f = str(root / "app.py")
    first = KernelInfo(key="fill", hash="b", file=f, line=_line(text, "def fill") - 1)
    late = KernelInfo(key=late_key, hash="l", file=f, line=_line(text, f"def {late_name}") - 1, closure=closure)
    trig = Trigger(file=f, line=_line(text, "wp.launch(fill"), function="main", api="launch")
    r = Report(command=["python", "app.py"], cwd=str(root), samples=1, builds=[
        synth_build(1, "app", "a", ms=300.0, kernels=[first], options=dict(OPTS), trigger=trig),
        synth_build(2, "app", "c", ms=320.0, kernels=[first, late], options=dict(OPTS), trigger=trig),
    ])
    r.hook.mode = "wrap"
    ctx = RuleContext(report=r, scan=scan(root), root=root, sources=SourceView(root))
    ctx.changes = explain_changes(r, rel=ctx.rel)
    (finding,) = late_kernels.evaluate(ctx).findings
    return finding


def _applied(root: Path, f: Finding, dst: Path) -> str:
    shutil.copytree(root, dst)
    (rel,) = apply_edits(dst, f.edits)
    text = (dst / rel).read_text()
    ast.parse(text)
    return text


def test_a_method_s_closure_takes_the_captured_number_as_an_argument(tmp_path: Path) -> None:
    src = _write(tmp_path / "p", "app.py", PLUGINS).read_text()
    f = _finding(tmp_path / "p", src, "Plugin_make_kernel__locals__apply", "apply", {"gain": "float"})
    assert f.applicability == "review" and "apply takes gain: float" in f.review
    out = _applied(tmp_path / "p", f, tmp_path / "copy")
    tree = ast.parse(out)
    top = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "apply")
    assert [a.arg for a in top.args.args] == ["values", "out", "gain"]
    assert ast.unparse(top.args.args[-1].annotation) == "float"
    assert "inputs=[values, out, self.gain]" in out
    assert [e.launch_args for e in f.edits if e.launch_args] == [{"apply": ["float"]}]  # for the behaviour check
    assert "gain = self.gain" not in out  # the line that only fed the closure is gone
    method = next(n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == "make_kernel")
    assert [type(s).__name__ for s in method.body] == ["Return"]
    assert "def make_kernel(self):\n        return apply\n" in out


def test_a_factory_s_parameters_and_defaults_are_passed_at_each_inline_launch(tmp_path: Path) -> None:
    src = _write(tmp_path / "p", "app.py", FACTORY).read_text()
    f = _finding(tmp_path / "p", src, "make_scale__locals__scale", "scale", {"factor": "float", "shift": "int"})
    assert f.applicability == "review", f.review
    out = _applied(tmp_path / "p", f, tmp_path / "copy")
    assert "def scale(values: wp.array(dtype=float), factor: float, shift: int):" in out
    assert "inputs=[values, 2.0, 2]" in out and "inputs=(values, 3.0, 1)" in out


def test_a_stored_factory_kernel_keeps_module_unique_and_says_why(tmp_path: Path) -> None:
    stored = FACTORY.replace("    wp.launch(make_scale(2.0), dim=8, inputs=[values], device=\"cpu\")\n",
                             "    k = make_scale(2.0)\n    wp.launch(k, dim=8, inputs=[values], device=\"cpu\")\n")
    src = _write(tmp_path / "p", "app.py", stored).read_text()
    f = _finding(tmp_path / "p", src, "make_scale__locals__scale", "scale", {"factor": "float", "shift": "int"})
    # not as arguments (the stored kernel may launch where the edit cannot pass them), but its two versions are
    # fixed in the source: both made at import, the factory cached, so the module has them before it loads
    out = _applied(tmp_path / "p", f, tmp_path / "copy")
    assert "@functools.lru_cache(maxsize=None)\ndef make_scale(" in out and "import functools" in out
    assert "make_scale(2.0)\nmake_scale(3.0, shift=1)\n" in out
    assert "made at import" in f.review and 'module="unique"' not in out
    # versions from run-time data: then a module of its own, and why
    runtime = stored.replace("make_scale(2.0)", "make_scale(float(len(values)))")
    src = _write(tmp_path / "r", "app.py", runtime).read_text()
    f = _finding(tmp_path / "r", src, "make_scale__locals__scale", "scale", {"factor": "float", "shift": "int"})
    (e,) = f.edits
    assert 'module="unique"' in e.new
    assert "not taken as kernel arguments" in f.review and "other than as a launch's kernel" in f.review
    assert "run-time arguments" in f.review


def test_a_captured_value_that_is_not_a_number_keeps_module_unique(tmp_path: Path) -> None:
    src = _write(tmp_path / "p", "app.py", PLUGINS).read_text()
    f = _finding(tmp_path / "p", src, "Plugin_make_kernel__locals__apply", "apply", {"gain": "vec3f"})
    (e,) = f.edits
    assert 'module="unique"' in e.new and "gain (vec3f)" in f.review
    f = _finding(tmp_path / "p", src, "Plugin_make_kernel__locals__apply", "apply", None)
    assert "gain (not recorded)" in f.review


def _launch_report(*launches: tuple[str, list[str]]) -> Report:
    r = Report(command=["python", "app.py"], cwd="/x", samples=1,
               launches=[Launch(kernel=k, module="app", dim=[16], device="cpu", dtypes=d) for k, d in launches])
    r.hook.mode = "wrap"
    return r


def test_the_arguments_a_fix_adds_are_set_aside_only_where_declared() -> None:
    arrays = ["array[float32;1d]", "array[float32;1d]"]
    before = _launch_report(("fill", arrays[:1]), ("Plugin_make_kernel__locals__apply", arrays))
    after = _launch_report(("fill", arrays[:1]), ("apply", [*arrays, "float"]))
    assert check_equivalence(before, after).status == "changed"
    note = without_added_args(after, {"apply": ["float"]})
    assert "1 launch(es) carry the arguments the fix adds" in note and "apply (float)" in note
    assert check_equivalence(before, after).status == "equivalent"
    other = _launch_report(("fill", arrays[:1]), ("apply", [*arrays, "int"]))  # not the declared type: still changed
    assert without_added_args(other, {"apply": ["float"]}) == ""
    assert check_equivalence(before, other).status == "changed"
    wrong = _launch_report(("fill", [*arrays[:1], "float"]), ("apply", [*arrays, "float"]))  # another kernel's
    without_added_args(wrong, {"apply": ["float"]})
    assert check_equivalence(before, wrong).status == "changed"
    # inserted before the kernel's outputs (a launch with outputs=): set aside at that place, not at the end
    ints = ["array[float32;1d]", "int", "int", "array[float32;1d]"]
    before = _launch_report(("block", ints))
    placed = _launch_report(("block", [*ints[:3], "int", ints[3]]))
    assert without_added_args(placed, {"block": ["int"]}, {"block": 3})
    assert check_equivalence(before, placed).status == "equivalent"
    elsewhere = _launch_report(("block", [*ints, "int"]))  # the declared place holds an array: nothing set aside
    assert without_added_args(elsewhere, {"block": ["int"]}, {"block": 3}) == ""


def _plain(cwd: Path) -> str:
    done = subprocess.run([sys.executable, "app.py"], cwd=cwd, capture_output=True, text=True, timeout=600,
                          check=True)
    return "\n".join(ln for ln in done.stdout.splitlines() if not ln.startswith(("Warp ", "Module ")))


# heavy: minutes each in CI (CI stays under 20 minutes); run with --heavy
@pytest.mark.heavy
def test_real_plugin_closure_measured_edited_and_run(tmp_path: Path) -> None:
    """The hook records the captured value's type in a real run; the edited copy prints the same total and builds
    the plugins' module once instead of once per plugin."""
    app = tmp_path / "app"
    _write(app, "app.py", PLUGINS)
    report = measure([sys.executable, "app.py"], app, samples=1)
    apply_infos = [k for b in report.builds for k in b.kernels if k.key.endswith("apply")]
    assert apply_infos and all(k.closure == {"gain": "float"} for k in apply_infos)
    assert len([b for b in report.builds if b.status == "compiled"]) == 4  # fill, then a rebuild per plugin
    d = diagnose_sources(report, app)
    (f,) = [f for f in d.findings if f.mechanism == "CS-1"]
    assert "apply takes gain: float" in f.review, f.review
    fixed = tmp_path / "fixed"
    _applied(app, f, fixed)
    assert _plain(fixed) == _plain(app)
    after = measure([sys.executable, "app.py"], fixed, samples=1)
    assert len([b for b in after.builds if b.status == "compiled"]) == 1
    # the fix engine proves the same edit: the launches that now pass gain are the same work, and behaviour is kept
    result = run_fix([sys.executable, "app.py"], app, FixOptions(wanted=["CS-1"], rounds=2, timeout_s=600,
                                                                 combine=False))[0]
    (c,) = [c for c in result.candidates if c.key == "CS-1"]
    assert c.behaviour is not None and c.behaviour.ok and c.behaviour.topology == "equivalent", c.behaviour
