"""Dependency-aware advice, in memory: ownership stamped on locations, reachability of static evidence, launcher
fixes for installed entry points, no content-hashed module names, ranking below project fixes. No file is read."""

from __future__ import annotations

from pathlib import Path

from warp_compile.probe.diagnose import _rank_key, _stamp_owners
from warp_compile.probe.fix.place.entry_fix import entry_line_fix, module_lines
from warp_compile.probe.models import EntryPoint, FileOwner, Report
from warp_compile.probe.models.diagnosis import Finding, Location
from warp_compile.probe.models.report import Site, Trigger
from warp_compile.probe.rules.context import RuleContext
from warp_compile.probe.rules.helpers import content_hashed, installed_owners, own_frame, reached

SITE = "/venv/lib/python3.11/site-packages"


def _report(**kw) -> Report:  # type: ignore[no-untyped-def]
    return Report(command=["python", "app.py"], cwd="/proj", samples=1, **kw)


def test_content_hashed_names_are_recognised_and_left_out_of_fixes() -> None:
    assert content_hashed("_bsr_mm_compute_values_e9110762") and content_hashed("warp.fem.x.dyn.k_3d04ed1f")
    assert not content_hashed("warp.sparse") and not content_hashed("heat_field.solver")
    lines, hashed = module_lines(["warp.sparse", "_diag_mv_kernel_55845888"])
    assert lines == 'wp.get_module("warp.sparse").options["enable_backward"] = False'
    assert hashed == ["_diag_mv_kernel_55845888"]


def test_reached_reads_the_hooks_record_and_says_when_there_is_none() -> None:
    ctx = RuleContext(report=_report(imported_files=["/proj/app.py", "/proj/lib/k.py", "site:numpy"]), scan=None,
                      root=Path("/proj"))
    assert reached(ctx, "lib/k.py") is True and reached(ctx, "train.py") is False
    assert reached(RuleContext(report=_report(), scan=None, root=Path("/proj")), "train.py") is None


def test_an_installed_entry_point_gets_a_launcher_not_an_edit() -> None:
    entry = EntryPoint(kind="module", name="warp.examples.fem.example_diffusion", file=f"{SITE}/warp/x.py",
                       owner="dependency", distribution="warp-lang")
    ctx = RuleContext(report=_report(entry=entry), scan=None, root=Path("/proj"))
    fix, where = entry_line_fix(ctx, "why")
    assert where is None and "installed warp-lang" in fix
    assert 'runpy.run_module("warp.examples.fem.example_diffusion", run_name="__main__", alter_sys=True)' in fix
    assert fix.index("wp.config.enable_backward = False") < fix.index("runpy.run_module")
    console = EntryPoint(kind="console_script", name="engine.cli:main", owner="dependency", distribution="engine")
    fix, _ = entry_line_fix(RuleContext(report=_report(entry=console), scan=None, root=Path("/proj")), "why")
    assert "from engine.cli import main\nmain()" in fix


def test_a_project_entry_point_gets_the_line_at_its_top() -> None:
    entry = EntryPoint(kind="script", name="app.py", file="/proj/app.py", owner="project")
    fix, where = entry_line_fix(RuleContext(report=_report(entry=entry), scan=None, root=Path("/proj")), "why")
    assert where is not None and (where.file, where.line) == ("app.py", 1)
    assert "import warp as wp\nwp.config.enable_backward = False" in fix


def test_owners_are_stamped_and_dependency_findings_rank_below_similar_project_ones() -> None:
    owners = {f"{SITE}/warp/_src/sparse.py": FileOwner(owner="dependency", distribution="warp-lang")}
    report = _report(owners=owners)
    dep = Finding(mechanism="CS-9", title="t", severity="medium", confidence="high", fix="f",
                  locations=[Location(file=f"{SITE}/warp/_src/sparse.py", line=3)], estimated_saving_ms=1000.0)
    mine = Finding(mechanism="CS-4", title="t", severity="medium", confidence="high", fix="f",
                   locations=[Location(file="app/kernels.py", line=9)], estimated_saving_ms=900.0)
    for f in (dep, mine):
        _stamp_owners(f, report, Path("/proj"))
    assert dep.owner == "dependency" and dep.locations[0].distribution == "warp-lang"
    assert mine.owner == "project" and mine.locations[0].owner == "project"
    assert sorted([dep, mine], key=_rank_key)[0] is mine  # 900 ms of our own beats 1,000 ms we cannot edit
    bigger = dep.model_copy(update={"estimated_saving_ms": 2000.0})
    assert sorted([bigger, mine], key=_rank_key)[0] is bigger


def test_installed_owners_only_when_every_file_is_installed() -> None:
    owners = {f"{SITE}/eng/a.py": FileOwner(owner="dependency", distribution="eng")}
    ctx = RuleContext(report=_report(owners=owners), scan=None, root=Path("/proj"))
    assert installed_owners(ctx, [f"{SITE}/eng/a.py"]) == ["eng"]
    assert installed_owners(ctx, [f"{SITE}/eng/a.py", "app.py"]) is None
    assert installed_owners(ctx, []) is None


def test_a_load_inside_an_installed_library_is_placed_at_the_apps_own_call_of_it() -> None:
    owners = {f"{SITE}/eng/collide.py": FileOwner(owner="dependency", distribution="eng"),
              f"{SITE}/eng/model.py": FileOwner(owner="dependency", distribution="eng"),
              "/proj/boxes.py": FileOwner(owner="project")}
    ctx = RuleContext(report=_report(owners=owners), scan=None, root=Path("/proj"))
    inside = Site(file=f"{SITE}/eng/collide.py", line=258, function="collide")
    t = Trigger(file=inside.file, line=inside.line, api="launch",
                stack=[inside, Site(file=f"{SITE}/eng/model.py", line=40, function="collide"),
                       Site(file="/proj/boxes.py", line=12, function="<module>")])
    assert (own_frame(ctx, t).file, own_frame(ctx, t).line) == ("/proj/boxes.py", 12)
    # the app's own launch stays where it is; a stack with no app frame keeps the trigger (nothing better to say)
    mine = Trigger(file="/proj/boxes.py", line=9, stack=[Site(file="/proj/boxes.py", line=9)])
    assert own_frame(ctx, mine).line == 9
    theirs = Trigger(file=inside.file, line=258, stack=[inside])
    assert own_frame(ctx, theirs).line == 258
