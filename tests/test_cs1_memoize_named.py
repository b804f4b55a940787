"""CS-1 names memoize among the candidates it tried (issue 39: ik_specializer, array_mapper), with why it cannot hold
judged from the code and the run's frames: a kernel made in a method, a kernel Warp's wp.map makes for a function
fed run-time arrays; and where it can hold (a module-level factory whose kernel cannot be hoisted), it is the edit.

Synthetic runs against sources written to tmp_path (no Warp run).
"""

from __future__ import annotations

from pathlib import Path

from tests.test_transform import _apply, _late, _write
from warp_compile.probe.fix.edits import SourceView
from warp_compile.probe.fix.place.recorded_versions import memoize_why_not
from warp_compile.probe.models import KernelCreation, Report
from warp_compile.probe.models.report import WarpSite
from warp_compile.probe.rules.context import RuleContext
from warp_compile.probe.scan import scan

JOINTS = """\
import warp as wp

from . import kernels  # noqa: F401  (imports the kernels' file back: a cycle)


@wp.func
def integ(x: float):
    return x * 2.0
"""
HEAD = """\
import warp as wp


@wp.kernel
def base(a: wp.array(dtype=float)):
    a[wp.tid()] = 1.0


"""
BODY = """\
from .joints import integ

@wp.kernel
def step(a: wp.array(dtype=float)):
    a[wp.tid()] = integ(a[wp.tid()])

return step
"""


def _cycle(root: Path, method: bool) -> Path:
    """The kernel `step` reads `integ`, imported inside its maker because joints.py imports kernels.py back."""
    pad = " " * (8 if method else 4)
    maker = "class Solver:\n    def specialize(self):\n" if method else "def specialize(n: int):\n"
    body = "".join(pad + ln if ln.strip() else ln for ln in BODY.splitlines(keepends=True))
    run = ("from .kernels import Solver\n\n\ndef run():\n    return Solver().specialize()\n" if method
           else "from . import kernels\n\n\ndef run():\n    return kernels.specialize(2)\n")
    caller = "" if method else "\n\ndef run():\n    return specialize(2)\n"  # a call in the factory's own file
    return _write(root, {"app/__init__.py": "", "app/joints.py": JOINTS, "app/kernels.py": HEAD + maker + body + caller,
                         "app/run.py": run})


def test_a_method_kernel_whose_hoist_fails_names_memoize_and_why_not(tmp_path: Path) -> None:
    """ik_specializer's shape: the kernel reads a function imported late on purpose (a cycle), made in a method."""
    root = _cycle(tmp_path / "p", method=True)
    f = _late(root, "app/kernels.py", ("base", "base"), [("step", "step")], "app.kernels")
    assert not f.edits and f.applicability == "manual"
    assert "a cycle" in f.review
    assert "memoize: step is made inside Solver.specialize(), not by a module-level factory" in f.review


def test_a_module_level_factory_whose_hoist_fails_is_memoized_instead(tmp_path: Path) -> None:
    """The same kernel made by a module-level factory the source calls: memoize, the next candidate, holds."""
    root = _cycle(tmp_path / "p", method=False)
    f = _late(root, "app/kernels.py", ("base", "base"), [("step", "step")], "app.kernels")
    assert f.edits, f.review
    out = _apply(root, f.edits, tmp_path / "copy")["app/kernels.py"]
    assert "\nspecialize(2)\n" in out.split("return step", 1)[1]  # called at import, after its definition


def _made(root: Path, function: str, args: dict, via: bool) -> KernelCreation:
    site = WarpSite(file="/venv/site-packages/warp/_src/utils.py", line=1475, function="map") if via else None
    return KernelCreation(key="map_kernel" if via else "k", module="m", file=str(root / "app/pipeline.py"), line=6,
                          function=function, args=args, via=site, start_ms=900.0)


def test_memoize_reasons_come_from_the_frames_and_the_definitions(tmp_path: Path) -> None:
    """array_mapper's shape (wp.map inside a function fed NumPy arrays) and a method are named; a module-level
    function called with values source can write is not refused (the run's record is its candidate)."""
    root = _write(tmp_path / "p", {"app/__init__.py": "", "app/pipeline.py": """\
        class Phase:
            def build(self, n):
                return n


        def coarse(values, rounds):
            return values


        def make(n):
            return n
    """})
    ctx = RuleContext(report=Report(command=["python"], cwd=str(root), samples=1), scan=scan(root), root=root,
                      sources=SourceView(root))
    ndarray = {"values": {"kind": "other", "type": "ndarray"}, "rounds": {"kind": "int", "text": "3"}}
    why = memoize_why_not(ctx, [_made(root, "coarse", ndarray, via=True)])
    assert "made by Warp's map() called in coarse(), not by a factory of the project's own" in why
    assert "coarse() is fed run-time data (values = a ndarray)" in why
    why = memoize_why_not(ctx, [_made(root, "Phase.build", {"n": {"kind": "int", "text": "2"}}, via=False)])
    assert "Phase.build() is not a module-level function of app/pipeline.py" in why
    assert memoize_why_not(ctx, [_made(root, "make", {"n": {"kind": "int", "text": "2"}}, via=False)]) == ""
