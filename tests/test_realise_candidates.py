"""realise.py's candidates for kernels made by a closure an object keeps (issue 39): hoist with the captured values
written in when every call gives the same one (constants.py, before only CS-1 tried it), and a finding left without
an edit names every candidate it tried, memoize included (a method or closure is no module-level function a cache
can wrap). Real scans of small projects written to tmp_path, paired with a synthetic measurement; Warp never runs.
"""

from __future__ import annotations

from pathlib import Path

from tests.helpers import write_tree as write
from warp_compile.probe.fix.edits import SourceView
from warp_compile.probe.models import Build, KernelInfo, Report, RunResult, SampleResult
from warp_compile.probe.models.diagnosis import Finding
from warp_compile.probe.rules import unique_modules
from warp_compile.probe.rules.context import RuleContext
from warp_compile.probe.scan import scan

SRC = '''
import warp as wp

SHIFT_TYPE = wp.float32


class _ScaleFactory:
    def __init__(self):
        def make(dtype):
            @wp.kernel(module="unique")
            def scale(x: wp.array(dtype=dtype)):
                x[wp.tid()] = x[wp.tid()] * dtype(2.0)

            return scale

        self.make = make


class _ShiftFactory:
    def __init__(self):
        def make(dtype):
            @wp.kernel(module="unique")
            def shift(x: wp.array(dtype=dtype)):
                x[wp.tid()] = x[wp.tid()] + dtype(1.0)

            return shift

        self.make = make


scale_kernel = _ScaleFactory().make
shift_kernel = _ShiftFactory().make


def run(x):
    wp.launch(scale_kernel(wp.float32), dim=x.shape[0], inputs=[x], device="cpu")
    wp.launch(shift_kernel(SHIFT_TYPE), dim=x.shape[0], inputs=[x], device="cpu")
'''

KEYS = [("_ScaleFactory____init____locals__make__locals__scale", "scale"),
        ("_ShiftFactory____init____locals__make__locals__shift", "shift")]


def _cs9(root: Path) -> Finding:
    text = (root / "p/k.py").read_text().splitlines()
    builds = []
    for i, (key, name) in enumerate(KEYS):
        line = next(j for j, ln in enumerate(text, start=1) if f"def {name}(" in ln)
        h = (f"{i + 1:x}" * 64)[:64]
        builds.append(Build(seq=i + 1, module=f"{key}_{h[:8]}", hash=h, hash_short=h[:7], device="cpu", block_dim=1,
                            status="compiled", ms=110.0, start_ms=300.0 + 100 * i, end_ms=410.0 + 100 * i,
                            kernels=[KernelInfo(key=key, hash=h[:8], file=str(root / "p/k.py"), line=line)],
                            options={"block_dim": "1"}))
    cold = RunResult(phase="cold", wall_ms=2000, exit_code=0, compiled=2, module_ms=220.0)
    r = Report(command=["python", "-m", "p"], cwd=str(root), samples=1, builds=builds, modules=2,
               sample_results=[SampleResult(index=0, ok=True, cold=cold)])
    ctx = RuleContext(report=r, scan=scan(root), root=root, sources=SourceView(root=root))
    (f,) = unique_modules.evaluate(ctx).findings
    return f


def test_kept_closures_move_with_the_one_value_every_call_gives_written_in(tmp_path: Path) -> None:
    f = _cs9(write(tmp_path, {"p/__init__.py": "", "p/k.py": SRC}))
    assert f.applicability == "review" and "move scale out of" in f.fix and "move shift out of" in f.fix, f.fix
    moved = "".join(e.new for e in f.edits)
    assert "def scale(x: wp.array(dtype=wp.float32)):" in moved and "* wp.float32(2.0)" in moved, moved
    assert "def shift(x: wp.array(dtype=SHIFT_TYPE)):" in moved, moved
    assert "(dtype = wp.float32)" in f.review and "a new caller passing another value gets this one" in f.review


def test_a_value_bound_after_the_move_s_place_still_refuses_and_every_candidate_is_named(tmp_path: Path) -> None:
    """SHIFT_TYPE bound at module scope below the classes: the written-in annotation would read it before it exists
    at import. The behaviour-protecting precondition refuses, and the finding says what each candidate found."""
    late = SRC.replace("\nSHIFT_TYPE = wp.float32\n", "\n") + "\n\nSHIFT_TYPE = wp.float32\n"
    f = _cs9(write(tmp_path, {"p/__init__.py": "", "p/k.py": late}))
    assert f.applicability == "manual" and not f.edits
    for named in ("memoize: _ShiftFactory.__init__() is not a module-level function", "hoist: shift: shift reads dtype",
                  "with its captured values written in: its decorator or annotations use SHIFT_TYPE",
                  "from the run's record:"):
        assert named in f.review, (named, f.review)


def test_two_different_values_are_not_written_in(tmp_path: Path) -> None:
    """A second call with another dtype: the kernel differs by call, so nothing is written in."""
    two = SRC.replace('    wp.launch(shift_kernel(SHIFT_TYPE)',
                      '    wp.launch(shift_kernel(wp.float64), dim=1, inputs=[x], device="cpu")\n'
                      '    wp.launch(shift_kernel(SHIFT_TYPE)')
    f = _cs9(write(tmp_path, {"p/__init__.py": "", "p/k.py": two}))
    assert f.applicability == "manual" and "the kernel differs by call" in f.review, f.review
