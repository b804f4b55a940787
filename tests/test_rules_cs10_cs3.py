"""CS-10 (unused backward code) and CS-3 (late options): the fixes from the audit on unseen projects.

1. CS-10 counts only the build that remains once rebuilds are fixed (the last identity per module/device/block_dim);
   the superseded builds belong to the rebuild mechanisms, and evidence and basis agree on what was counted.
2. CS-10's saving applies the adjoint share only to the size-dependent part of native compile (native minus a fixed
   per-module part: an in-run fit when the run supports one, else the calibration), not to the whole native time.
3. A late `wp.config.enable_backward` is CS-10's; CS-3's ruled-out signal says so instead of claiming nothing missed.
4. Fix wording: CS-3 quotes the import as written; CS-10 adds `import warp as wp` only when the file lacks it.

Fast tests use synthetic Reports (and the real scanner on sources written to tmp_path); slow ones compile with Warp.
"""

from __future__ import annotations

import re
import sys
import textwrap
from pathlib import Path

import pytest

from tests.helpers import speed_ratio, synth_build
from warp_compile.probe.diagnose import diagnose_command
from warp_compile.probe.fix.edits import SourceView
from warp_compile.probe.measure import measure
from warp_compile.probe.models import Build, KernelInfo, Launch, PchBuild, Report, Trigger
from warp_compile.probe.models.diagnosis import Cause, HashChange
from warp_compile.probe.models.scan import ConfigSetFact, ImportFact, ImportRef, KernelDef, ModuleInfo, ScanFacts
from warp_compile.probe.rules import late_options, unused_backward
from warp_compile.probe.rules.context import RuleContext
from warp_compile.probe.scan import scan

# ---------------------------------------------------------------------------------------------- builders


def bld(
    seq: int,
    module: str = "app.kernels",
    *,
    h: str | None = None,
    native: float = 300.0,
    codegen: float = 10.0,
    src: int = 40_000,
    bwd: int | None = 25_000,
    device: str = "cpu",
    options: dict[str, str] | None = None,
    status: str = "compiled",
    thread: int = 1,
    start: float | None = None,
    shadow: dict[str, list[str]] | None = None,
    kernels: tuple[str, ...] = ("step",),
) -> Build:
    t0 = float(seq * 1000) if start is None else start
    return synth_build(
        seq,
        module,
        h or f"{seq:x}",
        device=device,
        block_dim=1 if device == "cpu" else 256,
        status=status,  # type: ignore[arg-type]
        ms=native + codegen + 5.0,
        native_ms=native,
        codegen_ms=codegen,
        source_bytes=src,
        backward_in_source=bwd is not None and bwd > 0,
        backward_source_bytes=bwd,
        kernels=[
            KernelInfo(key=k, file=f"/proj/{module.replace('.', '/')}.py", line=5 + i) for i, k in enumerate(kernels)
        ],
        options={"enable_backward": "True", **(options or {})},
        config_shadow=shadow or {},
        trigger=Trigger(file="/proj/app/__main__.py", line=9, function="main", api="launch"),
        thread=thread,
        start_ms=t0,
        end_ms=t0 + native + codegen + 5.0,
    )


def rep(builds: list[Build], version: str = "1.19.0", **kw) -> Report:  # type: ignore[no-untyped-def]
    kw.setdefault("command", ["python", "-m", "app"])
    kw.setdefault("cwd", "/proj")
    kw.setdefault("samples", 1)
    launches = kw.pop("launches", [Launch(kernel="step", module=b.module) for b in builds])
    return Report(builds=builds, warp_version=version, launches=launches, **kw)


def with_header(builds: list[Build], ms: float = 1200.0) -> dict:  # type: ignore[type-arg]
    """The CPU precompiled header a warp >= 1.13 run builds during its first compile (1.2-1.9 s measured here): the
    wait a small saving is judged against."""
    first = min(builds, key=lambda b: b.seq)
    return {"pch": [PchBuild(ms=ms, file="builtin_bd1_o3.pch", during_module=first.module, during_seq=first.seq)]}


def app_scan(**extra) -> ScanFacts:  # type: ignore[no-untyped-def]
    return ScanFacts(
        modules=[
            ModuleInfo(file="app/__main__.py", name="app.__main__", main_alias="__main__", has_main_guard=True),
            ModuleInfo(file="app/__init__.py", name="app", is_package=True),
            ModuleInfo(file="app/kernels.py", name="app.kernels", kernel_count=1, module_scope_kernel_count=1),
        ],
        imports=extra.pop(
            "imports",
            [
                ImportFact(
                    file="app/__main__.py",
                    line=3,
                    module="app.kernels",
                    names=["kernels"],
                    project_module="app.kernels",
                    defines_kernels=True,
                    reaches_kernels=True,
                )
            ],
        ),
        kernels=[KernelDef(file="app/kernels.py", line=5, name="step", qualname="step", python_module="app.kernels")],
        **extra,
    )


def ctx_of(report: Report, scan_facts: ScanFacts | None = None, changes: list[HashChange] | None = None) -> RuleContext:
    return RuleContext(
        report, scan_facts if scan_facts is not None else app_scan(), changes=changes or [], root=Path("/proj")
    )


def rebuilt(from_seq: int, to_seq: int, module: str = "app.kernels") -> HashChange:
    return HashChange(
        module=module,
        device="cpu",
        from_hash=f"{from_seq:x}" * 64,
        to_hash=f"{to_seq:x}" * 64,
        from_seq=from_seq,
        to_seq=to_seq,
        status="compiled",
        cost_ms=200.0,
        causes=[Cause(kind="kernel_added", detail="kernel added: heater (app/kernels.py:30)", kernel="heater")],
    )


def saving(b: Build, fixed: float) -> float:
    """The documented model: adjoint share x (native - fixed part) plus the codegen share."""
    assert b.backward_source_bytes is not None
    return (max(b.native_ms - fixed, 0.0) + b.codegen_ms) * b.backward_source_bytes / b.source_bytes


def cs10(res) -> list:  # type: ignore[no-untyped-def]
    return [f for f in res.findings if f.mechanism == "CS-10"]


def small_signal(res) -> str:  # type: ignore[no-untyped-def]
    return next(r.signal for r in res.ruled_out if r.mechanism == "CS-10" and "small" in r.signal)


def about_ms(signal: str) -> float:
    m = re.search(r"about ([\d,.]+) ms", signal)
    assert m, signal
    return float(m.group(1).replace(",", ""))


# ---------------------------------------------------------------------------------------------- 1. superseded builds


def test_cs10_counts_only_the_build_that_remains_after_a_rebuild() -> None:
    first = bld(1, native=420.0, src=52_000, bwd=31_000)
    last = bld(2, native=640.0, src=83_000, bwd=51_500)
    res = unused_backward.evaluate(ctx_of(rep([first, last]), changes=[rebuilt(1, 2)]))
    (f,) = cs10(res)
    assert f.estimated_saving_ms == pytest.approx(saving(last, 55.0), abs=0.1)
    # basis and evidence speak of the same (remaining) build, and name the superseded one
    assert "51,500 of 83,000 bytes" in f.saving_basis and "52,000" not in f.saving_basis
    assert "superseded build(s) #1" in f.saving_basis
    (ev,) = [e for e in f.evidence if e.builds]
    assert ev.builds == [2] and "83,000 B, 51,500 B of it adjoint" in ev.fact
    assert "build #1 (52,000 B" in ev.fact and "superseded by rebuild #2 (kernel added: heater" in ev.fact
    assert ev.ms == pytest.approx(last.ms, abs=0.1)


def test_cs10_single_build_is_counted_as_before_and_names_no_rebuild() -> None:
    only = bld(1, native=640.0, src=83_000, bwd=51_500)
    (f,) = cs10(unused_backward.evaluate(ctx_of(rep([only]))))
    assert f.estimated_saving_ms == pytest.approx(saving(only, 55.0), abs=0.1)
    assert "superseded" not in f.saving_basis and all("superseded" not in e.fact for e in f.evidence)


def test_cs10_fired_only_by_a_rebuild_is_ruled_out_below_the_bar() -> None:
    """Both builds together would pass the bar; the one that remains after the CS-1 fix does not."""
    first = bld(4, native=131.0, codegen=4.0, src=16_418, bwd=10_100)
    last = bld(7, native=150.0, codegen=6.0, src=28_101, bwd=17_400)
    both = saving(first, 0.0) + saving(last, 0.0)
    ctx = ctx_of(rep([first, last], **with_header([first, last])), changes=[rebuilt(4, 7)])
    assert both / ctx.cold_compile_total >= unused_backward.MIN_SHARE  # what the old estimate claimed
    res = unused_backward.evaluate(ctx)
    assert cs10(res) == []
    signal = small_signal(res)
    assert about_ms(signal) == pytest.approx(saving(last, 55.0), abs=1.0)
    assert "build(s) #7" in signal and "superseded build(s) #4" in signal


def test_cs10_a_module_switched_back_to_an_earlier_identity_counts_that_identity() -> None:
    a = bld(1, h="a", native=600.0, src=80_000, bwd=50_000)
    b = bld(2, h="b", native=900.0, src=120_000, bwd=80_000)
    back = bld(3, h="a", native=0.0, codegen=0.0, src=80_000, bwd=None, status="cached")
    (f,) = cs10(unused_backward.evaluate(ctx_of(rep([a, b, back]))))
    assert f.estimated_saving_ms == pytest.approx(saving(a, 55.0), abs=0.1)
    assert "superseded build(s) #2" in f.saving_basis


def test_cs10_final_build_without_backward_is_not_a_candidate() -> None:
    """enable_backward switched off late (a CS-3 rebuild): what remains has no adjoint code."""
    on = bld(1, native=900.0, src=120_000, bwd=80_000)
    off = bld(2, native=400.0, src=40_000, bwd=0, options={"enable_backward": "False"})
    res = unused_backward.evaluate(ctx_of(rep([on, off])))
    assert cs10(res) == []
    (ro,) = res.ruled_out
    assert "final build" in ro.signal and "#1" in ro.signal


# ---------------------------------------------------------------------------------------------- the machine's speed

# Builds and headers as the slow tests below measured them on this project's 2-core VM (warp 1.19, one sample):
# (module, native ms, codegen ms, source bytes, adjoint bytes), and the run's precompiled header.
TWO_SMALL = ([("sim.alpha", 171.0, 6.0, 10_558, 6_042), ("sim.beta", 152.0, 4.0, 17_313, 10_695)], 1368.0)
LARGE = ([("plate.stencils", 1345.0, 24.0, 148_459, 94_346)], 1207.0)


def _as_measured(case, factor: float) -> RuleContext:  # type: ignore[no-untyped-def]
    rows, header = case
    builds = [
        bld(i, module, native=native * factor, codegen=cg * factor, src=src, bwd=bwd)
        for i, (module, native, cg, src, bwd) in enumerate(rows, 1)
    ]
    return ctx_of(rep(builds, **with_header(builds, header * factor)))


@pytest.mark.parametrize("factor", [1.0, 2.0, 3.0])
def test_cs10_materiality_holds_on_a_slower_machine(factor: float) -> None:
    """The same runs on a machine 2x and 3x slower: the two small modules stay ruled out and the large one still
    fires, because the bar is a share of the compile and the calibrated fixed part grows with the machine (by the
    run's own header) instead of staying at the calibration's ms, which made small estimates outgrow the compile."""
    small = unused_backward.evaluate(_as_measured(TWO_SMALL, factor))
    assert cs10(small) == [], [f.estimated_saving_ms for f in cs10(small)]
    ctx = _as_measured(LARGE, factor)
    (f,) = cs10(unused_backward.evaluate(ctx))
    assert f.estimated_saving_ms is not None and f.estimated_saving_ms / ctx.cold_compile_total >= 0.2
    if factor > 1.0:
        assert "precompiled header took" in f.saving_basis


# ---------------------------------------------------------------------------------------------- 2. the fixed part


def test_cs10_small_modules_apply_the_share_to_the_size_dependent_part_only() -> None:
    mods = [bld(i, f"app.m{i}", native=105.0, codegen=3.0, src=7_400, bwd=4_000) for i in range(1, 6)]
    old = sum(saving(b, 0.0) for b in mods)
    ctx = ctx_of(rep(mods, **with_header(mods)))
    res = unused_backward.evaluate(ctx)
    assert old / ctx.cold_compile_total >= unused_backward.MIN_SHARE  # the whole-native share fired here
    assert cs10(res) == []
    assert about_ms(small_signal(res)) == pytest.approx(sum(saving(b, 55.0) for b in mods), abs=1.0)


def test_cs10_large_module_keeps_nearly_all_of_its_estimate() -> None:
    big = bld(1, native=675.0, codegen=40.0, src=159_759, bwd=104_699)
    (f,) = cs10(unused_backward.evaluate(ctx_of(rep([big]))))
    assert f.estimated_saving_ms == pytest.approx(saving(big, 55.0), abs=0.1)
    assert f.estimated_saving_ms > 0.9 * saving(big, 0.0)
    assert "55 ms per module as calibrated (warp 1.19.0" in f.saving_basis


def test_cs10_header_off_subtracts_the_header_parse() -> None:
    off = {"use_precompiled_headers": "False"}
    mods = [
        bld(1, "truss.members", native=986.0, codegen=8.0, src=36_754, bwd=22_821, options=off),
        bld(2, "truss.relax", native=924.0, codegen=6.0, src=30_951, bwd=18_897, options=off),
    ]
    (f,) = cs10(unused_backward.evaluate(ctx_of(rep(mods))))
    assert f.estimated_saving_ms == pytest.approx(sum(saving(b, 750.0) for b in mods), abs=0.1)
    assert "precompiled header off" in f.saving_basis
    assert f.estimated_saving_ms < 0.3 * sum(saving(b, 0.0) for b in mods)


def test_cs10_warp_without_a_cpu_header_uses_its_own_calibration() -> None:
    b = bld(1, native=1900.0, codegen=20.0, src=90_000, bwd=60_000)
    (f,) = cs10(unused_backward.evaluate(ctx_of(rep([b], version="1.10.1"))))
    assert f.estimated_saving_ms == pytest.approx(saving(b, 1060.0), abs=0.1)
    assert "warp 1.10.1" in f.saving_basis


def _line_of_builds(sizes: list[int], fixed: float, per_kb: float) -> list[Build]:
    return [
        bld(i + 1, f"app.m{i}", native=fixed + per_kb * s / 1000.0, codegen=5.0, src=s, bwd=int(s * 0.6))
        for i, s in enumerate(sizes)
    ]


def test_cs10_prefers_a_fit_over_the_runs_own_builds() -> None:
    mods = _line_of_builds([12_000, 25_000, 50_000, 100_000], fixed=90.0, per_kb=6.0)
    (f,) = cs10(unused_backward.evaluate(ctx_of(rep(mods))))
    assert f.estimated_saving_ms == pytest.approx(sum(saving(b, 90.0) for b in mods), abs=0.5)
    assert "fitted on this run's 4 compiled CPU builds" in f.saving_basis and "90 ms + 6.0 ms/KB" in f.saving_basis


@pytest.mark.parametrize("case", ["narrow sizes", "two builds", "not a line"])
def test_cs10_falls_back_on_the_calibration_when_the_run_cannot_support_a_fit(case: str) -> None:
    if case == "narrow sizes":
        mods = _line_of_builds([40_000, 50_000, 60_000, 70_000], fixed=200.0, per_kb=6.0)
    elif case == "two builds":
        mods = _line_of_builds([20_000, 90_000], fixed=200.0, per_kb=6.0)
    else:
        mods = _line_of_builds([12_000, 25_000, 50_000, 100_000], fixed=200.0, per_kb=6.0)
        mods[0].native_ms, mods[3].native_ms = 900.0, 300.0
    (f,) = cs10(unused_backward.evaluate(ctx_of(rep(mods))))
    assert "as calibrated" in f.saving_basis and "fitted" not in f.saving_basis
    assert f.estimated_saving_ms == pytest.approx(sum(saving(b, 55.0) for b in mods), abs=0.5)


def test_cs10_faster_machine_scales_the_fixed_part_down() -> None:
    tiny = bld(1, "app.tiny", native=40.0, codegen=1.0, src=3_500, bwd=1_500)
    big = bld(2, "app.big", native=900.0, codegen=30.0, src=200_000, bwd=130_000)
    (f,) = cs10(unused_backward.evaluate(ctx_of(rep([tiny, big]))))
    fixed = 55.0 * 40.0 / 79.0
    assert f.estimated_saving_ms == pytest.approx(saving(tiny, fixed) + saving(big, fixed), abs=0.5)
    assert "scaled to" in f.saving_basis


def test_cs10_cuda_without_a_fit_is_an_upper_bound() -> None:
    b = bld(1, device="cuda:0", native=2000.0, codegen=50.0, src=90_000, bwd=60_000)
    (f,) = cs10(unused_backward.evaluate(ctx_of(rep([b]))))
    assert f.estimated_saving_ms == pytest.approx(saving(b, 0.0), abs=0.1)
    assert "upper bound" in f.saving_basis


def test_cs10_concurrent_builds_are_divided_by_their_overlap() -> None:
    a = bld(1, "app.a", native=200.0, codegen=8.0, src=23_031, bwd=14_183, thread=1, start=0.0)
    b = bld(2, "app.b", native=200.0, codegen=8.0, src=23_031, bwd=14_183, thread=2, start=0.0)
    serial = [
        bld(1, "app.a", native=200.0, codegen=8.0, src=23_031, bwd=14_183),
        bld(2, "app.b", native=200.0, codegen=8.0, src=23_031, bwd=14_183),
    ]
    together = unused_backward.evaluate(ctx_of(rep([a, b], **with_header([a, b]))))
    one_by_one = unused_backward.evaluate(ctx_of(rep(serial, **with_header(serial))))
    (f,) = cs10(one_by_one)
    assert cs10(together) == []  # half of it once the two waits are taken out: below the bar
    assert about_ms(small_signal(together)) == pytest.approx(f.estimated_saving_ms / 2.0, abs=1.0)
    assert "overlap" in small_signal(together)


# ---------------------------------------------------------------------------------------------- 3. CS-3 signal


def _deadline_scan(option: str, value: str) -> ScanFacts:
    ref = ImportRef(module="app.kernels", line=2, kernel_modules=["app.kernels"], created_at_import=True)
    return ScanFacts(
        python_modules_with_kernels={"app.kernels": "app/kernels.py"},
        config_sets=[
            ConfigSetFact(
                file="app/__main__.py",
                line=4,
                name=option,
                value=value,
                copied_at_module_creation=True,
                after_kernel_imports=[ref],
            )
        ],
    )


def test_cs3_ruled_out_hands_a_late_enable_backward_to_cs10() -> None:
    b = bld(1, shadow={"enable_backward": ["True", "False"]})
    res = late_options.evaluate(ctx_of(rep([b]), _deadline_scan("enable_backward", "False")))
    assert res.findings == []
    (ro,) = res.ruled_out
    assert "no measured module missed" not in ro.signal
    assert "enable_backward" in ro.signal and "CS-10" in ro.signal and "app/__main__.py:4" in ro.signal
    assert "app.kernels missed" in ro.signal


def test_cs3_nothing_missed_keeps_its_signal() -> None:
    res = late_options.evaluate(ctx_of(rep([bld(1)]), _deadline_scan("enable_backward", "False")))
    (ro,) = res.ruled_out
    assert "no measured module missed a wp.config option copied at creation" in ro.signal
    assert "CS-10" not in ro.signal


def test_cs3_other_creation_options_stay_cs3() -> None:
    b = bld(1, shadow={"max_unroll": ["16", "32"]})
    res = late_options.evaluate(ctx_of(rep([b]), _deadline_scan("max_unroll", "32")))
    (f,) = res.findings
    assert f.mechanism == "CS-3" and "max_unroll" in f.title and res.ruled_out == []


# ---------------------------------------------------------------------------------------------- 4. wording

KERNEL_FILE = """\
import warp as wp


@wp.kernel
def line_response(a: wp.array(dtype=float), b: wp.array(dtype=float)):
    i = wp.tid()
    acc = float(0.0)
    for t in range(24):
        acc += a[wp.min(i + t, a.shape[0] - 1)]
    b[i] = acc
"""


def _write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(textwrap.dedent(text))
    return root


def _late_unroll_ctx(root: Path, import_line: str, with_root: bool = True) -> RuleContext:
    _write(
        root,
        {
            "retina/__init__.py": "",
            "retina/enhance.py": KERNEL_FILE,
            "retina/__main__.py": (
                f"import numpy as np\nimport warp as wp\n\n{import_line}\n\nwp.config.max_unroll = 32\n"
            ),
        },
    )
    facts = scan(root)
    b = bld(1, "retina.enhance", shadow={"max_unroll": ["16", "32"]}, kernels=("line_response",))
    report = rep([b], command=["python", "-m", "retina"], cwd=str(root))
    return RuleContext(report, facts, changes=[], root=root if with_root else None)


@pytest.mark.parametrize(
    "statement", ["from retina import enhance", "import retina.enhance", "from retina import enhance as enh"]
)
def test_cs3_fix_quotes_the_import_as_written(tmp_path: Path, statement: str) -> None:
    (f,) = late_options.evaluate(_late_unroll_ctx(tmp_path, statement)).findings
    assert f"above `{statement}` (line 4 of retina/__main__.py)" in f.fix
    assert f"`{statement}` (line 4)" in f.evidence[0].fact


def test_cs3_fix_rebuilds_the_statement_from_the_scan_without_the_source(tmp_path: Path) -> None:
    (f,) = late_options.evaluate(_late_unroll_ctx(tmp_path, "from retina import enhance", with_root=False)).findings
    assert "above `from retina import enhance`" in f.fix and "`import retina.enhance`" not in f.fix


def _entry_ctx(root: Path, head: str) -> RuleContext:
    _write(
        root,
        {
            "app/__init__.py": "",
            "app/kernels.py": KERNEL_FILE.replace("line_response", "step"),
            "app/__main__.py": head + "\n\nif __name__ == '__main__':\n    kernels.run()\n",
        },
    )
    facts = scan(root)
    b = bld(1, "app.kernels", native=900.0, src=120_000, bwd=80_000)
    return RuleContext(rep([b], cwd=str(root)), facts, changes=[], root=root)


def _with_big_module(ctx: RuleContext, share: float) -> RuleContext:
    """ctx's report plus a forward-only module sized so the lone module's CS-10 estimate is `share` of the compile."""
    (f,) = cs10(unused_backward.evaluate(ctx))
    assert f.estimated_saving_ms is not None
    own = sum(b.ms for b in ctx.report.builds)
    native = f.estimated_saving_ms / share - own - 15.0
    big = bld(2, "app.big", native=native, bwd=None, kernels=("blur",))
    assert ctx.root is not None
    return RuleContext(rep([*ctx.report.builds, big], cwd=ctx.report.cwd), ctx.scan, changes=[], root=ctx.root,
                       sources=SourceView(ctx.root))


def test_cs10_below_the_line_hands_its_edit_to_fix_as_a_candidate(tmp_path: Path) -> None:
    """An estimate between MEASURE_SHARE and MIN_SHARE is no finding, but the ruled-out carries the would-be finding
    with its edit (fix measures it and the proof decides); under MEASURE_SHARE nothing is offered. The shapes that
    sat near the line (bench/SHAPES-2026-12-06-run4.md: qualname_stages, env_partition) flipped between runs on it."""
    near = _with_big_module(_entry_ctx(tmp_path / "near", "import warp as wp\n\nfrom app import kernels"), 0.07)
    res = unused_backward.evaluate(near)
    assert cs10(res) == []
    (r,) = [r for r in res.ruled_out if r.mechanism == "CS-10"]
    assert "it is small" in r.signal and "`fix` still measures its edit" in r.signal
    assert r.candidate is not None and r.candidate.below_line and r.candidate.severity == "low"
    assert r.candidate.edits and "enable_backward = False" in r.candidate.edits[0].new
    far = _with_big_module(_entry_ctx(tmp_path / "far", "import warp as wp\n\nfrom app import kernels"), 0.03)
    (r,) = [r for r in unused_backward.evaluate(far).ruled_out if r.mechanism == "CS-10"]
    assert "it is small" in r.signal and r.candidate is None and "`fix`" not in r.signal


def test_cs10_fix_does_not_repeat_an_existing_warp_import(tmp_path: Path) -> None:
    ctx = _entry_ctx(tmp_path, "import numpy as np\nimport warp as wp\n\nfrom app import kernels")
    (f,) = cs10(unused_backward.evaluate(ctx))
    assert "import warp as wp\nwp.config" not in f.fix
    assert "after `import warp as wp` (line 2) and before line 4" in f.fix
    assert "\nwp.config.enable_backward = False" in f.fix
    assert [(loc.file, loc.line) for loc in f.locations] == [("app/__main__.py", 4)]


def test_cs10_fix_uses_the_files_own_name_for_warp(tmp_path: Path) -> None:
    ctx = _entry_ctx(tmp_path, "import warp\n\nfrom app import kernels")
    (f,) = cs10(unused_backward.evaluate(ctx))
    assert "after `import warp` (line 1)" in f.fix and "\nwarp.config.enable_backward = False" in f.fix


def test_cs10_fix_adds_the_import_when_the_file_lacks_it(tmp_path: Path) -> None:
    for i, head in enumerate(
        ("import numpy as np\n\nfrom app import kernels", "from app import kernels\nimport warp as wp")
    ):  # imported only after: not reached
        ctx = _entry_ctx(tmp_path / str(i), head)
        (f,) = cs10(unused_backward.evaluate(ctx))
        assert "add:\nimport warp as wp\nwp.config.enable_backward = False" in f.fix


# ---------------------------------------------------------------------------------------------- real Warp runs

BODY_SMOOTH = """
@wp.kernel
def smooth{n}(a: wp.array(dtype=float), b: wp.array(dtype=float)):
    i = wp.tid()
    n = a.shape[0]
    b[i] = 0.25 * a[wp.max(i - 1, 0)] + 0.5 * a[i] + 0.25 * a[wp.min(i + 1, n - 1)] + wp.sin(a[i]) * {n}.0
"""
BODY_ROT = """
@wp.kernel
def rot{n}(q: wp.array(dtype=wp.quat), v: wp.array(dtype=wp.vec3), out: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    r = wp.quat_rotate(q[i], v[i])
    out[i] = r * float({n}) + wp.cross(r, v[i])
"""
BODY_SPRING = """
@wp.kernel
def spring{n}(x: wp.array(dtype=wp.vec3), m: wp.array(dtype=wp.mat33), f: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    a = m[i] + wp.identity(n=3, dtype=float) * {n}.0
    f[i] = wp.inverse(a) * x[i] * (wp.length(x[i]) - 1.0)
"""
BODY_ENERGY = """
@wp.kernel
def energy{n}(x: wp.array(dtype=wp.vec3), e: wp.array(dtype=float)):
    i = wp.tid()
    acc = float(0.0)
    for j in range(4):
        acc += wp.dot(x[i], x[i]) * float(j + {n})
    wp.atomic_add(e, 0, wp.sqrt(acc) + wp.exp(-acc))
"""
ARGS = """
N = 64
d = "cpu"
a = wp.zeros(N, dtype=float, device=d)
b = wp.zeros(N, dtype=float, device=d)
q = wp.zeros(N, dtype=wp.quat, device=d)
v = wp.ones(N, dtype=wp.vec3, device=d)
o = wp.zeros(N, dtype=wp.vec3, device=d)
m = wp.zeros(N, dtype=wp.mat33, device=d)
e = wp.zeros(1, dtype=float, device=d)
INPUTS = {"smooth": [a, b], "rot": [q, v, o], "spring": [v, m, o], "energy": [v, e]}


def run(kernel):
    kind = kernel.key.rstrip("0123456789")
    wp.launch(kernel, dim=N, inputs=INPUTS[kind], device=d)
"""
BODIES = {"smooth": BODY_SMOOTH, "rot": BODY_ROT, "spring": BODY_SPRING, "energy": BODY_ENERGY}


def _package(root: Path, modules: dict[str, list[str]], forward_only: bool = False) -> Path:
    """`python -m sim`: one Python module per entry, each holding the listed kernel bodies, launched once each."""
    files = {"sim/__init__.py": "", "sim/common.py": "import warp as wp\n" + ARGS}
    for name, kinds in modules.items():
        body = "import warp as wp\n" + "".join(BODIES[k].format(n=i) for i, k in enumerate(kinds))
        files[f"sim/{name}.py"] = body
    head = "import warp as wp\n" + ("wp.config.enable_backward = False\n" if forward_only else "")
    imports = "".join(f"from sim import {n}\n" for n in modules)
    launches = "".join(
        f"for k in [{', '.join(f'{n}.{k}{i}' for i, k in enumerate(kinds))}]:\n    common.run(k)\n"
        for n, kinds in modules.items()
    )
    files["sim/__main__.py"] = head + "from sim import common\n" + imports + "\n" + launches + "print('ok')\n"
    return _write(root, files)


def _native_work(report: Report) -> float:
    return sum(b.native_ms + b.codegen_ms for b in report.builds if b.status == "compiled")


def _build_cpu(report: Report) -> float | None:
    """The compiled builds' CPU time on their loading thread (codegen and LLVM, header excluded): what disabling
    backward saves, unstretched by other jobs on the machine. None where a build has no CPU clock."""
    cpu = [b.cpu_ms for b in report.builds if b.status == "compiled"]
    return sum(cpu) if cpu and all(c is not None for c in cpu) else None  # type: ignore[misc]


def _measured_saving(on: Report, off: Report) -> float:
    """What enable_backward=False saved: on the builds' CPU clocks where both runs have them (a loaded machine
    stretches wall time, not CPU time), else their wall time with the header's speed ratio."""
    a, b = _build_cpu(on), _build_cpu(off)
    if a is not None and b is not None:
        return a - b
    return _native_work(on) - _native_work(off) * speed_ratio(on, off)


def _cs10_estimate(d) -> float:  # type: ignore[no-untyped-def]
    found = [f for f in d.findings if f.mechanism == "CS-10"]
    if found:
        return float(found[0].estimated_saving_ms)
    return about_ms(next(r.signal for r in d.ruled_out if r.mechanism == "CS-10" and "small" in r.signal))


@pytest.mark.heavy  # one cold run a side: the bound (0.6x to 1.3x) was missed at 1.51x on a fresh-clone CI run
def test_real_estimate_is_near_the_measured_effect_of_disabling_backward(tmp_path: Path) -> None:
    """Three two-kernel modules: the estimate lands near what enable_backward=False really saves."""
    layout = {"alpha": ["rot", "spring"], "beta": ["spring", "energy"], "gamma": ["rot", "smooth"]}
    on = _package(tmp_path / "on", layout)
    off = _package(tmp_path / "off", layout, forward_only=True)
    rep_on, d = diagnose_command([sys.executable, "-m", "sim"], on, samples=1)
    rep_off = measure([sys.executable, "-m", "sim"], off, samples=1)
    assert rep_on.failed_samples == 0 and rep_off.failed_samples == 0
    measured = _measured_saving(rep_on, rep_off)
    est = _cs10_estimate(d)
    assert measured > 150, measured
    assert 0.6 * measured <= est <= 1.3 * measured, (est, measured)
    (f,) = [f for f in d.findings if f.mechanism == "CS-10"]
    assert "as calibrated" in f.saving_basis or "fitted" in f.saving_basis


@pytest.mark.slow
def test_real_two_small_modules_are_ruled_out(tmp_path: Path) -> None:
    """Two one-kernel modules: once the fixed part is set aside the adjoint code costs under the bar, near what
    enable_backward=False really saves (applying the share to the whole native time put it above the bar)."""
    layout = {"alpha": ["rot"], "beta": ["energy"]}
    root = _package(tmp_path / "on", layout)
    off = _package(tmp_path / "off", layout, forward_only=True)
    rep_on, d = diagnose_command([sys.executable, "-m", "sim"], root, samples=1)
    rep_off = measure([sys.executable, "-m", "sim"], off, samples=1)
    est = _cs10_estimate(d)
    measured = _measured_saving(rep_on, rep_off)
    # One cold sample a side, and the difference is a few hundred ms of two small modules: fresh-clone CI runs saw
    # 353 ms estimated against 263 ms measured (1.34x), and on a busier host 320 against 167 (1.9x). The bound is
    # wider than the three-module test's; what this test is about is the decision below.
    assert 0.5 * measured <= est <= 2.0 * measured, (est, measured)
    # The bar is a share of this run's cold compile, header included. On a quiet machine these two modules sit
    # below it; a machine loaded by other jobs stretches the header and the modules unevenly (seen: a 30 s
    # header, modules 15x slower, 10.4%), so the decision is checked against this run's own figures: ruled out
    # exactly when the estimate is under the bar of this run.
    share = est / (sum(b.ms for b in rep_on.builds) + sum(p.ms for p in rep_on.pch))
    fired = "CS-10" in {f.mechanism for f in d.findings}
    assert fired == (share >= unused_backward.MIN_SHARE), (share, d.summary)
    assert share < 2 * unused_backward.MIN_SHARE, share  # small by any load: near the bar, never far above it


LATE_KERNEL = """\
import warp as wp

{kernels}

def make_heater():
    @wp.kernel
    def heater(a: wp.array(dtype=float)):
        a[wp.tid()] = a[wp.tid()] + 1.0
    return heater


def run():
    a = wp.zeros(64, dtype=float, device="cpu")
    b = wp.zeros(64, dtype=float, device="cpu")
{first_launches}
    wp.launch(make_heater(), dim=64, inputs=[a], device="cpu")
    print(float(a.numpy().sum()))
"""


def _late_kernel_project(root: Path, n_smooth: int) -> Path:
    kernels = "".join(BODY_SMOOTH.format(n=i) for i in range(n_smooth))
    first = "".join(f"    wp.launch(smooth{i}, dim=64, inputs=[a, b], device='cpu')\n" for i in range(n_smooth))
    return _write(
        root,
        {
            "plate/__init__.py": "",
            "plate/stencils.py": LATE_KERNEL.format(kernels=kernels, first_launches=first),
            "plate/__main__.py": "import numpy as np\nimport warp as wp\n\nfrom plate import stencils\n\n"
            "stencils.run()\n",
        },
    )


@pytest.mark.slow
def test_real_rebuild_of_a_small_module_is_left_to_cs1(tmp_path: Path) -> None:
    root = _late_kernel_project(tmp_path, n_smooth=2)
    report, d = diagnose_command([sys.executable, "-m", "plate"], root, samples=1)
    seqs = sorted(b.seq for b in report.builds if b.module == "plate.stencils" and b.status == "compiled")
    assert len(seqs) == 2, report.builds
    mechs = {f.mechanism for f in d.findings}
    assert "CS-1" in mechs and "CS-10" not in mechs, d.summary
    signal = next(r.signal for r in d.ruled_out if r.mechanism == "CS-10")
    assert f"build(s) #{seqs[1]}" in signal and f"superseded build(s) #{seqs[0]}" in signal


@pytest.mark.slow
def test_real_rebuild_of_a_large_module_still_fires_on_its_last_build(tmp_path: Path) -> None:
    """The same rebuild in a module big enough to matter: CS-10 fires, counting the final build only, and its fix
    does not ask for an `import warp as wp` the entry point already has."""
    root = _late_kernel_project(tmp_path, n_smooth=12)
    report, d = diagnose_command([sys.executable, "-m", "plate"], root, samples=1)
    builds = sorted(
        (b for b in report.builds if b.module == "plate.stencils" and b.status == "compiled"), key=lambda b: b.seq
    )
    assert len(builds) == 2
    (f,) = [f for f in d.findings if f.mechanism == "CS-10"]
    last = builds[-1]
    assert f"{last.backward_source_bytes:,} of {last.source_bytes:,} bytes" in f.saving_basis
    (ev,) = [e for e in f.evidence if e.builds]
    assert ev.builds == [last.seq] and f"{last.source_bytes:,} B" in ev.fact
    assert f"build #{builds[0].seq} ({builds[0].source_bytes:,} B" in ev.fact
    assert "after `import warp as wp` (line 2) and before line 4" in f.fix
    assert "import warp as wp\nwp.config" not in f.fix


SPECTRUM = """\
import warp as wp


@wp.kernel
def sum_waves(amp: wp.array(dtype=wp.float32), kx: wp.array(dtype=wp.float32), h: wp.array(dtype=wp.float32)):
    i = wp.tid()
    acc = float(0.0)
    for w in range(amp.shape[0]):
        acc += amp[w] * wp.cos(kx[w] * float(i))
    h[i] = acc


def height(n):
    amp = wp.full(8, 0.1, dtype=wp.float32, device="cpu")
    kx = wp.full(8, 0.2, dtype=wp.float32, device="cpu")
    h = wp.zeros(n, dtype=wp.float32, device="cpu")
    wp.launch(sum_waves, dim=n, inputs=[amp, kx, h], device="cpu")
    return h.numpy()
"""


def _late_global_project(root: Path, assignment: str) -> Path:
    return _write(
        root,
        {
            "swell/__init__.py": "",
            "swell/spectrum.py": SPECTRUM,
            "swell/__main__.py": f"import warp as wp\n\nfrom swell import spectrum\n\n{assignment}\n\n"
            "print(float(spectrum.height(64).sum()))\n",
        },
    )


@pytest.mark.slow
def test_real_late_enable_backward_is_cs10s_and_cs3_says_so(tmp_path: Path) -> None:
    root = _late_global_project(tmp_path, "wp.config.enable_backward = False")
    _, d = diagnose_command([sys.executable, "-m", "swell"], root, samples=1)
    (f,) = [f for f in d.findings if f.mechanism == "CS-10"]
    assert ("swell/__main__.py", 5) in {(x.file, x.line) for x in f.locations}
    assert "CS-3" not in {f.mechanism for f in d.findings}
    signal = next(r.signal for r in d.ruled_out if r.mechanism == "CS-3")
    assert "no measured module missed" not in signal
    assert "enable_backward" in signal and "CS-10" in signal and "swell/__main__.py:5" in signal


@pytest.mark.slow
def test_real_late_max_unroll_stays_cs3_and_quotes_the_import(tmp_path: Path) -> None:
    root = _late_global_project(tmp_path, "wp.config.max_unroll = 32")
    _, d = diagnose_command([sys.executable, "-m", "swell"], root, samples=1)
    (f,) = [f for f in d.findings if f.mechanism == "CS-3"]
    assert "max_unroll" in f.title
    assert "above `from swell import spectrum` (line 3 of swell/__main__.py)" in f.fix
    assert "import swell.spectrum" not in f.fix
    assert not any(r.mechanism == "CS-3" for r in d.ruled_out)


# ---------------------------------------------------------------------------------------------- upstream report


def _dep_build(seq: int, module: str, kernels: tuple[str, ...], file: str) -> Build:
    b = bld(seq, module, native=9000.0, src=1_200_000, bwd=700_000, kernels=kernels)
    for i, k in enumerate(b.kernels):
        k.file, k.line = file, 100 + 40 * i
    return b


SITE = "/venv/lib/python3.11/site-packages"


def _dep_report(builds: list[Build], launched: list[tuple[str, str]]) -> Report:
    from warp_compile.probe.models.report import FileOwner

    owners = {k.file: FileOwner(owner="dependency", distribution="physlib", version="0.1")
              for b in builds for k in b.kernels if k.file}
    return rep(builds, launches=[Launch(kernel=k, module=m) for m, k in launched], owners=owners)


def test_cs10_on_a_librarys_module_reports_the_forward_only_kernels_it_launched_upstream() -> None:
    """A library module with many kernels of which the run launched two: the entry-point line stays the application's
    fix, and the library's maintainers get the two launched kernels at their definitions, not the others."""
    b = _dep_build(1, "physlib.geometry.kernels", ("broad", "narrow", "soft", "cloth"),
                   f"{SITE}/physlib/geometry/kernels.py")
    res = unused_backward.evaluate(ctx_of(_dep_report([b], [(b.module, "broad"), (b.module, "narrow")])))
    (f,) = cs10(res)
    up = f.upstream
    assert up is not None and up.distribution == "physlib"
    assert [(p.file, p.line) for p in up.places] == [("physlib/geometry/kernels.py", 100),
                                                     ("physlib/geometry/kernels.py", 140)]
    assert SITE not in up.text and "enable_backward" in up.change
    assert all(p.owner == "dependency" for p in up.places)


def test_cs10_a_library_module_run_whole_gets_the_module_option_above_its_first_kernel() -> None:
    b = _dep_build(1, "physlib.core.conversions", ("a", "b", "c"), f"{SITE}/physlib/core/conversions.py")
    res = unused_backward.evaluate(ctx_of(_dep_report([b], [(b.module, k) for k in ("c", "a", "b")])))
    (f,) = cs10(res)
    assert f.upstream is not None
    assert [(p.file, p.line) for p in f.upstream.places] == [("physlib/core/conversions.py", 100)]
    assert "module option" in f.upstream.places[0].note


def test_cs10_on_the_projects_own_module_makes_no_upstream_report() -> None:
    res = unused_backward.evaluate(ctx_of(rep([bld(1, native=9000.0, src=1_200_000, bwd=700_000)])))
    (f,) = cs10(res)
    assert f.upstream is None


def test_cs10_upstream_leaves_out_a_launched_kernel_whose_own_option_has_no_adjoint() -> None:
    b = _dep_build(1, "physlib.geometry.kernels", ("broad", "narrow", "soft"), f"{SITE}/physlib/geometry/kernels.py")
    b.kernels[0].enable_backward = False  # @wp.kernel(enable_backward=False): launched, but no adjoint to drop
    res = unused_backward.evaluate(ctx_of(_dep_report([b], [(b.module, "broad"), (b.module, "narrow")])))
    (f,) = cs10(res)
    assert f.upstream is not None and [p.line for p in f.upstream.places] == [140]


def test_the_hook_records_a_kernels_own_enable_backward() -> None:
    import warp as wp

    from warp_compile.probe.hook_kernels import kernel_info

    @wp.kernel(enable_backward=False)
    def forward_only(a: wp.array(dtype=float)):  # type: ignore[valid-type]
        a[wp.tid()] = 1.0

    @wp.kernel
    def plain(a: wp.array(dtype=float)):  # type: ignore[valid-type]
        a[wp.tid()] = 2.0

    assert kernel_info(forward_only, lambda h: "")["enable_backward"] is False
    assert "enable_backward" not in kernel_info(plain, lambda h: "")
