"""A kernel whose source Warp generated (`wp.map`'s `<string>`) is located at the app's line that made it, from
the run's record: of the module asked about, the first made after a given time (CS-1: the one that joined late)."""

from __future__ import annotations

from pathlib import Path

from warp_compile.probe.fix.edits import SourceView
from warp_compile.probe.models import KernelInfo, Report
from warp_compile.probe.models.report import KernelCreation
from warp_compile.probe.rules.context import RuleContext


def _ctx(tmp_path: Path) -> RuleContext:
    app = tmp_path / "pipeline.py"
    app.write_text("\n" * 40)
    made = [KernelCreation(key="map_kernel", module=m, file=str(app), line=line, start_ms=t)
            for m, line, t in (("map_soften", 18, 400.0), ("map_func_1", 19, 2500.0), ("map_soften", 20, 2700.0),
                               ("map_soften", 28, 3100.0))]
    r = Report(command=["python", "pipeline.py"], cwd=str(tmp_path), samples=1, kernel_creations=made)
    return RuleContext(report=r, scan=None, root=tmp_path, sources=SourceView(tmp_path))


def test_a_generated_kernel_is_placed_at_the_call_that_made_it(tmp_path: Path) -> None:
    ctx = _ctx(tmp_path)
    info = KernelInfo(key="map_kernel", file="<string>", line=1)
    late = ctx.kernel_loc(info, "joined late", "map_soften", 410.0)
    assert late is not None and (late.file, late.line) == ("pipeline.py", 20)
    last = ctx.kernel_loc(info, "", "map_soften")
    assert last is not None and last.line == 28
    other = ctx.kernel_loc(info, "", "map_func_1", 0.0)
    assert other is not None and other.line == 19


def test_a_kernel_with_a_real_file_keeps_its_own_line(tmp_path: Path) -> None:
    ctx = _ctx(tmp_path)
    loc = ctx.kernel_loc(KernelInfo(key="map_kernel", file=str(tmp_path / "pipeline.py"), line=7), "", "map_soften")
    assert loc is not None and loc.line == 7


def test_every_late_call_is_listed_for_a_generated_kernel(tmp_path: Path) -> None:
    ctx = _ctx(tmp_path)
    info = KernelInfo(key="map_kernel", file="<string>", line=1)
    assert [loc.line for loc in ctx.made_at(info, "map_soften", 410.0)] == [20, 28]
    assert [loc.line for loc in ctx.made_at(info, "map_soften")] == [18, 20, 28]
