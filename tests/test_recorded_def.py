"""A kernel made by the project's own decorator, found from the line the run recorded, and moved out of its loop.

tests/shapes/qualname_stages files each nested kernel under its function with `@stage_kernel`, a decorator of its own
that ends in `wp.kernel`; its where/method variant (tests/shapes_variants/mutate.py) makes that decorator a bound
method. The scan follows Warp's own decorators only; Warp records the line of the function's first decorator, and
probe/fix/transform/recorded_def.py reads the definition there. `project_shell` is then made once per pass of a loop
over (radius, side) pairs and launched in that pass: hoisted with those values as arguments, each launch passes the
values of its pass (probe/fix/transform/hoist.py).
"""

from __future__ import annotations

import textwrap
from pathlib import Path

from warp_compile.probe.fix.edits import SourceView
from warp_compile.probe.fix.transform.hoist import hoist
from warp_compile.probe.models import KernelInfo, Report
from warp_compile.probe.rules.context import RuleContext
from warp_compile.probe.scan import scan

STAGING = '''\
import warp as wp


class _Stager:
    def stage_kernel(self, fn):
        return wp.kernel(fn, module=wp.get_module(fn.__module__ + "." + fn.__qualname__.split(".")[0]))


stage_kernel = _Stager().stage_kernel
'''

PHYSICS = '''\
import warp as wp

from .staging import stage_kernel

SHELLS = ((0.6, 1.0), (2.5, -1.0))


def keep_in_shells(pos):
    for radius, side in SHELLS:

        @stage_kernel
        def project_shell(pos: wp.array(dtype=wp.vec3)):
            i = wp.tid()
            if side * (wp.length(pos[i]) - radius) < 0.0:
                pos[i] = pos[i] * radius

        wp.launch(project_shell, dim=pos.shape[0], inputs=[pos], device="cpu")


def renamed(fn):
    fn.__qualname__ = "stretch"
    return wp.kernel(fn)


def make():
    def stretch(x: wp.array(dtype=float)):
        x[wp.tid()] = 1.0

    return renamed(stretch)
'''


def _ctx(tmp: Path, physics: str = PHYSICS) -> tuple[RuleContext, Path]:
    root = tmp / "p"
    (root / "app").mkdir(parents=True)
    (root / "app" / "__init__.py").write_text("")
    (root / "app" / "staging.py").write_text(textwrap.dedent(STAGING))
    (root / "app" / "physics.py").write_text(textwrap.dedent(physics))
    report = Report(command=["python", "-m", "app"], cwd=str(root), samples=1)
    return RuleContext(report=report, scan=scan(root), root=root, sources=SourceView(root)), root / "app" / "physics.py"


def _line(path: Path, needle: str) -> int:
    return next(i for i, ln in enumerate(path.read_text().splitlines(), 1) if needle in ln)


def _info(path: Path, line: int, key: str = "keep_in_shells__locals__project_shell") -> KernelInfo:
    return KernelInfo(key=key, file=str(path), line=line, closure={"radius": "float", "side": "float"})


def test_the_definition_at_the_recorded_decorator_line_is_found_and_hoisted_with_its_values_as_arguments(
        tmp_path: Path) -> None:
    ctx, physics = _ctx(tmp_path)
    assert not [k for k in ctx.scan.kernels if k.name == "project_shell"]  # the scan cannot follow @stage_kernel
    info = _info(physics, _line(physics, "@stage_kernel"))
    k = ctx.scan_kernel(info)
    assert k is not None and k.name == "project_shell" and k.nested and k.enclosing_function == "keep_in_shells"
    assert k.qualname == "keep_in_shells.<locals>.project_shell" and k.line == _line(physics, "def project_shell")
    h = hoist(ctx, k, info, as_params=True)
    assert not h.why_not, h.why_not
    text = "".join(h.text)
    assert text.startswith("@stage_kernel\ndef project_shell(") and "radius: float, side: float" in text
    assert h.params is not None and any("inputs=[pos, radius, side]" in e.new for e in h.params.edits)


def test_an_undecorated_function_at_the_recorded_line_is_left_to_the_scan(tmp_path: Path) -> None:
    """A closure handed to a helper that calls wp.kernel(fn) is not made where it is defined: no definition."""
    ctx, physics = _ctx(tmp_path)
    assert ctx.scan_kernel(_info(physics, _line(physics, "def stretch"), key="stretch")) is None


def test_a_kernel_kept_for_a_later_pass_of_its_loop_is_not_moved(tmp_path: Path) -> None:
    """Launched after the loop, the kernel captured the values of the pass that made it; as arguments it would get
    the ones current at the launch: behaviour changes, so the move is refused."""
    ctx, physics = _ctx(tmp_path, PHYSICS.replace(
        '        wp.launch(project_shell, dim=pos.shape[0], inputs=[pos], device="cpu")\n',
        '        pass\n    wp.launch(project_shell, dim=pos.shape[0], inputs=[pos], device="cpu")\n'))
    info = _info(physics, _line(physics, "@stage_kernel"))
    k = ctx.scan_kernel(info)
    assert k is not None
    h = hoist(ctx, k, info, as_params=True)
    assert "is created in a loop of keep_in_shells() and reads what the loop changes" in h.why_not, h.why_not
