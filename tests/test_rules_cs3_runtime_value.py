"""CS-3: a late wp.set_module_options() whose value is computed at run time cannot move to module scope.

Realistic apps pick an option from a profile or a CLI flag inside a helper (`apply_profile(profile)` sets
`{"fast_math": profile.fast_math}`) and call that helper after the constructor of their solver already launched a
kernel. The generic advice, "call wp.set_module_options({...}) at module scope of the kernels' file", is not
pasteable there: `profile` does not exist at module scope. The finding must instead name the call of the helper
that runs after the first load and the line it has to precede (from the first build's trigger stack and the scan's
callers). With a literal value the module-scope advice stays.

Fast tests pair the real scanner (sources written to tmp_path) with synthetic Reports; the slow one compiles with
Warp and diagnoses the real run.
"""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

from tests.helpers import synth_build
from warp_compile.probe.diagnose import diagnose_command
from warp_compile.probe.hashdiff import explain_changes
from warp_compile.probe.models import Build, KernelInfo, Report, Site, Trigger
from warp_compile.probe.rules import late_options
from warp_compile.probe.rules.context import RuleContext
from warp_compile.probe.scan import scan

KERNELS = """\
    import warp as wp


    @wp.kernel
    def settle(x: wp.array(dtype=float), keep: float):
        i = wp.tid()
        x[i] = x[i] * keep
    """

SOLVER = """\
    import warp as wp

    from . import kernels

    PROFILES = {"fast": True, "exact": False}


    def apply_profile(name):
        wp.set_module_options({"fast_math": PROFILES[name]}, module=kernels)


    class Solver:
        def __init__(self, n):
            self.x = wp.full(n, 2.0, dtype=float, device="cpu")
            wp.launch(kernels.settle, dim=n, inputs=[self.x, 1.0], device="cpu")

        def step(self):
            wp.launch(kernels.settle, dim=self.x.shape[0], inputs=[self.x, 0.5], device="cpu")


    def run(name):
        solver = Solver(16)
        apply_profile(name)
        for _ in range(3):
            solver.step()
        return float(solver.x.numpy()[0])
    """

MAIN = """\
    import sys

    from .solver import run

    print(run(sys.argv[1] if len(sys.argv) > 1 else "fast"))
    """


def _write(root: Path, solver: str = SOLVER) -> Path:
    pkg = root / "pour"
    pkg.mkdir(parents=True)
    for name, text in {"__init__.py": "", "kernels.py": KERNELS, "solver.py": solver, "__main__.py": MAIN}.items():
        (pkg / name).write_text(textwrap.dedent(text))
    return root


def _line(text: str, needle: str) -> int:
    return next(i for i, ln in enumerate(textwrap.dedent(text).splitlines(), start=1) if needle in ln)


def _build(root: Path, seq: int, h: str, fast_math: str, stack: list[tuple[int, str]]) -> Build:
    frames = [Site(file=str(root / "pour/solver.py"), line=ln, function=fn) for ln, fn in stack]
    t = Trigger(file=frames[0].file, line=frames[0].line, function=frames[0].function, api="launch", stack=frames)
    kernel = KernelInfo(key="settle", hash="k", file=str(root / "pour/kernels.py"), line=5)
    opts = {"fast_math": fast_math, "enable_backward": "True", "block_dim": "1"}
    return synth_build(seq, "pour.kernels", h, ms=400.0, kernels=[kernel], options=opts, trigger=t)


def _report(root: Path, solver: str = SOLVER) -> Report:
    ctor_launch = _line(solver, "inputs=[self.x, 1.0]")
    ctor_call = _line(solver, "solver = Solver(16)")
    step_launch = _line(solver, "inputs=[self.x, 0.5]")
    step_call = _line(solver, "solver.step()")
    first = _build(root, 1, "a", "False", [(ctor_launch, "__init__"), (ctor_call, "run")])
    second = _build(root, 2, "b", "True", [(step_launch, "step"), (step_call, "run")])
    r = Report(command=["python", "-m", "pour"], cwd=str(root), samples=1, builds=[first, second], modules=1)
    r.hook.mode = "wrap"
    return r


def _finding(root: Path, solver: str = SOLVER):  # type: ignore[no-untyped-def]
    r = _report(root, solver)
    ctx = RuleContext(report=r, scan=scan(root), root=root)
    ctx.changes = explain_changes(r, rel=ctx.rel)
    found = [f for f in late_options.evaluate(ctx).findings if f.mechanism == "CS-3"]
    assert len(found) == 1, found
    return found[0]


def test_a_value_from_an_argument_moves_the_call_of_its_helper_above_the_first_load(tmp_path: Path) -> None:
    root = _write(tmp_path)
    f = _finding(root)
    setter = _line(SOLVER, "wp.set_module_options(")
    call = _line(SOLVER, "    apply_profile(name)")
    ctor = _line(SOLVER, "solver = Solver(16)")
    assert ("pour/solver.py", setter) in {(loc.file, loc.line) for loc in f.locations}
    assert ("pour/solver.py", call) in {(loc.file, loc.line) for loc in f.locations}
    assert "fast_math=PROFILES[name] is computed at run time" in f.fix
    assert f"move the call of apply_profile() at line {call} above line {ctor}" in f.fix
    assert "at module scope of the file" not in f.fix


def test_a_literal_value_keeps_the_module_scope_advice(tmp_path: Path) -> None:
    literal = SOLVER.replace('{"fast_math": PROFILES[name]}', '{"fast_math": True}')
    root = _write(tmp_path, literal)
    f = _finding(root, literal)
    call = _line(literal, "    apply_profile(name)")
    assert 'call `wp.set_module_options({"fast_math": True})` at module scope' in f.fix
    assert "computed at run time" not in f.fix
    assert ("pour/solver.py", call) not in {(loc.file, loc.line) for loc in f.locations}


@pytest.mark.slow
def test_real_run_names_the_late_call_of_the_profile_helper(tmp_path: Path) -> None:
    pytest.importorskip("warp")
    root = _write(tmp_path / "app")
    _, diagnosis = diagnose_command([sys.executable, "-m", "pour"], root, samples=1, timeout_s=600)
    found = [f for f in diagnosis.findings if f.mechanism == "CS-3"]
    assert len(found) == 1, [f.mechanism for f in diagnosis.findings]
    call = _line(SOLVER, "    apply_profile(name)")
    ctor = _line(SOLVER, "solver = Solver(16)")
    assert f"move the call of apply_profile() at line {call} above line {ctor}" in found[0].fix
    assert ("pour/solver.py", call) in {(loc.file, loc.line) for loc in found[0].locations}
