"""Rules CS-5, CS-7, CS-8, CS-10, CS-11, CS-12 and CS-13.

Fast tests build Reports and ScanFacts in code for the edge logic. Slow tests (`--slow`) measure the bundled
fixture projects once per session and check each rule fires where the fixture's case.json expects it, at the
expected location, and stays silent where it must.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import FIXTURES, fixture_case
from warp_compile.probe.models import ApiCall, Build, KernelInfo, Launch, PchBuild, Report, Site, Trigger
from warp_compile.probe.models.diagnosis import RuleResult
from warp_compile.probe.models.scan import (
    ImportFact,
    KernelDef,
    LaunchFact,
    LoadCallFact,
    LoopFact,
    ModuleInfo,
    ScanFacts,
    SettingFact,
    TapeFact,
    TileOpFact,
)
from warp_compile.probe.rules import (
    block_dims,
    cpu_parallel_load,
    mathdx_lto,
    precompiled_header,
    serial_modules,
    unroll_budget,
    unused_backward,
)
from warp_compile.probe.rules.context import RuleContext

# ---------------------------------------------------------------------------------------------- builders


def build(
    seq: int,
    module: str,
    *,
    device: str = "cpu",
    block_dim: int | None = 1,
    ms: float = 300.0,
    native_ms: float | None = None,
    kernels: tuple[str, ...] = ("k",),
    thread: int = 1,
    start_ms: float | None = None,
    end_ms: float | None = None,
    options: dict[str, str] | None = None,
    backward: bool | None = None,
    shadow: dict[str, list[str]] | None = None,
    via: str | None = None,
    source_bytes: int = 20_000,
) -> Build:
    start = float(seq * 1000) if start_ms is None else start_ms
    return Build(
        seq=seq,
        module=module,
        hash=f"{seq:07x}" * 9,
        hash_short=f"{seq:07x}",
        device=device,
        block_dim=block_dim,
        status="compiled",
        ms=ms,
        native_ms=ms * 0.9 if native_ms is None else native_ms,
        source_bytes=source_bytes,
        backward_in_source=backward,
        kernels=[
            KernelInfo(key=k, file=f"/proj/{module.replace('.', '/')}.py", line=10 + i) for i, k in enumerate(kernels)
        ],
        options=options or {},
        config_shadow=shadow or {},
        trigger=Trigger(file="/proj/app/main.py", line=20, function="main", api="launch", via=via),
        thread=thread,
        start_ms=start,
        end_ms=start + ms if end_ms is None else end_ms,
    )


def report(builds: list[Build], **kw) -> Report:  # type: ignore[no-untyped-def]
    kw.setdefault("command", ["python", "-m", "app"])
    kw.setdefault("cwd", "/proj")
    kw.setdefault("samples", 1)
    kw.setdefault("warp_version", "1.19.0")
    return Report(builds=builds, **kw)


def kdef(name: str, module: str, file: str = "app/kernels.py", line: int = 5) -> KernelDef:
    return KernelDef(file=file, line=line, name=name, qualname=name, python_module=module, warp_module=module)


def ctx_of(rep: Report, scan: ScanFacts | None = None) -> RuleContext:
    return RuleContext(rep, scan if scan is not None else ScanFacts(), changes=[], root=Path("/proj"))


def mechanisms(res: RuleResult) -> list[str]:
    return [f.mechanism for f in res.findings]


# ---------------------------------------------------------------------------------------------- CS-8


def test_cs8_overlapping_cpu_builds_on_two_threads_fire() -> None:
    a = build(1, "m.a", thread=1, start_ms=100, end_ms=900, via="force_load")
    b = build(2, "m.b", thread=2, start_ms=150, end_ms=1000, via="force_load")
    res = cpu_parallel_load.evaluate(ctx_of(report([a, b])))
    (f,) = res.findings
    assert f.mechanism == "CS-8" and f.severity == "high" and f.estimated_saving_ms is None
    assert any(e.builds == [1, 2] for e in f.evidence)
    assert "max_workers=1" in f.fix


def test_cs8_sequential_or_cuda_overlap_does_not_fire() -> None:
    seq_same_thread = [build(1, "m.a", start_ms=0, end_ms=100), build(2, "m.b", start_ms=100, end_ms=200)]
    assert cpu_parallel_load.overlapping_cpu_builds(seq_same_thread) == []
    cuda = [
        build(1, "m.a", device="cuda:0", thread=1, start_ms=0, end_ms=500),
        build(2, "m.b", device="cuda:0", thread=2, start_ms=10, end_ms=600),
    ]
    res = cpu_parallel_load.evaluate(ctx_of(report(cuda)))
    assert res.findings == [] and res.ruled_out


def test_cs8_scan_cuda_only_parallel_load_is_fine_but_cpu_capable_one_is_not() -> None:
    cuda_call = LoadCallFact(
        file="app/main.py", line=7, api="force_load", max_workers=4, device="'cuda:0'", cpu_possible=False
    )
    res = cpu_parallel_load.evaluate(ctx_of(report([]), ScanFacts(load_calls=[cuda_call])))
    assert res.findings == []
    any_call = LoadCallFact(file="app/main.py", line=9, api="load_module", max_workers=2, device=None)
    res = cpu_parallel_load.evaluate(ctx_of(report([]), ScanFacts(load_calls=[any_call])))
    (f,) = res.findings
    assert (f.locations[0].file, f.locations[0].line) == ("app/main.py", 9)


def test_cs8_global_max_workers_none_reaches_calls_without_max_workers() -> None:
    setting = SettingFact(file="app/main.py", line=3, name="load_module_max_workers", value="None", via="config")
    call = LoadCallFact(file="app/main.py", line=12, api="force_load", device="'cpu'")
    res = cpu_parallel_load.evaluate(ctx_of(report([]), ScanFacts(settings=[setting], load_calls=[call])))
    (f,) = res.findings
    assert {(loc.file, loc.line) for loc in f.locations} == {("app/main.py", 12), ("app/main.py", 3)}
    # the setting alone, with no load call, is latent: ruled out but named
    res = cpu_parallel_load.evaluate(ctx_of(report([]), ScanFacts(settings=[setting])))
    assert res.findings == [] and "load_module_max_workers" in res.ruled_out[0].signal


def test_cs8_measured_force_load_call_with_workers() -> None:
    call = ApiCall(
        api="force_load", site=Site(file="/proj/app/warm.py", line=4), detail={"max_workers": "2", "device": "'cpu'"}
    )
    rep = report([build(1, "m.a")])
    rep.cache.calls.append(call)
    (f,) = cpu_parallel_load.evaluate(ctx_of(rep)).findings
    assert (f.locations[0].file, f.locations[0].line) == ("app/warm.py", 4)
    rep.cache.calls[0] = call.model_copy(update={"detail": {"max_workers": "2", "device": "['cuda:0', 'cuda:1']"}})
    assert cpu_parallel_load.evaluate(ctx_of(rep)).findings == []


# ---------------------------------------------------------------------------------------------- CS-13


def test_cs13_cpu_only_not_reached_with_ceiling() -> None:
    builds = [build(1, "m.a", ms=1000), build(2, "m.b", ms=500), build(3, "m.c", ms=500)]
    res = serial_modules.evaluate(ctx_of(report(builds, overlap_factor=1.0)))
    assert res.findings == []
    (nr,) = res.not_reached
    assert "CS-8" in nr.reason and "2,000 ms" in nr.reason and "2.00x" in nr.reason


def test_cs13_cuda_serial_modules_fire_with_named_preload() -> None:
    builds = [
        build(1, "pkg.a", device="cuda:0", block_dim=256, ms=900),
        build(2, "pkg.b", device="cuda:0", block_dim=256, ms=800),
        build(3, "pkg.c", device="cuda:0", block_dim=128, ms=700),
    ]
    (f,) = serial_modules.evaluate(ctx_of(report(builds, overlap_factor=1.01))).findings
    assert f.mechanism == "CS-13"
    assert 'wp.get_module("pkg.a"), wp.get_module("pkg.b")], block_dim=256' in f.fix
    assert 'modules=[wp.get_module("pkg.c")], block_dim=128' in f.fix
    assert "modules=None)" not in f.fix and "modules=None," not in f.fix
    assert f.estimated_saving_ms == pytest.approx(1500.0)


def test_cs13_ruled_out_when_overlapping_or_dominated() -> None:
    builds = [build(1, "a", device="cuda:0", ms=900), build(2, "b", device="cuda:0", ms=800)]
    assert serial_modules.evaluate(ctx_of(report(builds, overlap_factor=1.8))).ruled_out
    dominated = [build(1, "a", device="cuda:0", ms=5000), build(2, "b", device="cuda:0", ms=60)]
    res = serial_modules.evaluate(ctx_of(report(dominated, overlap_factor=1.0)))
    assert res.findings == [] and "dominates" in res.ruled_out[0].signal


# ---------------------------------------------------------------------------------------------- CS-5


def test_cs5_cuda_block_dim_variants_split_by_stable_block_dim() -> None:
    kernels = ("reduce", "scan", "pick")
    builds = [
        build(1, "pkg.ops", device="cuda:0", block_dim=256, ms=800, kernels=kernels),
        build(2, "pkg.ops", device="cuda:0", block_dim=64, ms=600, kernels=kernels),
    ]
    launches = [
        Launch(kernel="reduce", module="pkg.ops", device="cuda:0", block_dim=256),
        Launch(kernel="scan", module="pkg.ops", device="cuda:0", block_dim=64),
        Launch(kernel="pick", module="pkg.ops", device="cuda:0", block_dim=64),
        Launch(kernel="pick", module="pkg.ops", device="cuda:0", block_dim=256),
    ]
    scan = ScanFacts(kernels=[kdef(k, "pkg.ops", line=5 + 10 * i) for i, k in enumerate(kernels)])
    (f,) = block_dims.evaluate(ctx_of(report(builds, launches=launches), scan)).findings
    assert f.mechanism == "CS-5" and f.modules == ["pkg.ops"]
    # device builds are priced like replay builds: each variant's work of the kernels not launched at its size
    # (256: reduce and pick launched, 2/3 stay; 64: scan and pick launched) -> 800/3 + 600/3
    assert f.estimated_saving_ms == pytest.approx(466.7, abs=0.1)
    # scan (64) stays in pkg.ops, reduce (256) moves, pick (both sizes) gets a module of its own
    assert 'module="pkg.ops_bd256") on reduce' in f.fix and "launched at block_dim 64 stay in pkg.ops" in f.fix
    assert 'module="pkg.ops_pick") on pick (its block_dim is not stable' in f.fix
    # the kernels' definitions, as the measurement recorded them (the synthetic builds say pkg/ops.py)
    assert {loc.file for loc in f.locations} & {"app/kernels.py", "pkg/ops.py"}


def test_cs5_cpu_only_not_reached_names_literal_block_dims() -> None:
    scan = ScanFacts(
        kernels=[kdef("a", "pkg.ops", line=5), kdef("b", "pkg.ops", line=15)],
        launches=[
            LaunchFact(file="pkg/run.py", line=30, kernel="ops.a", kernel_name="a", block_dim=64),
            LaunchFact(file="pkg/run.py", line=31, kernel="ops.b", kernel_name="b", block_dim=128),
        ],
    )
    res = block_dims.evaluate(ctx_of(report([build(1, "pkg.ops")]), scan))
    assert res.findings == []
    (nr,) = res.not_reached
    assert "pkg/run.py:30" in nr.reason and "pkg/run.py:31" in nr.reason and "pkg.ops" in nr.reason


def test_cs5_reads_block_dim_variant_causes_from_hashdiff() -> None:
    from warp_compile.probe.hashdiff import explain_changes

    first = build(1, "pkg.ops", device="cuda:0", block_dim=256, ms=5.0)
    first = first.model_copy(update={"status": "cached"})  # one variant came from the cache
    second = build(2, "pkg.ops", device="cuda:0", block_dim=128, ms=700)
    rep = report([first, second])
    changes = explain_changes(rep)
    assert any(c.kind == "block_dim_variant" for hc in changes for c in hc.causes)
    res = block_dims.evaluate(RuleContext(rep, ScanFacts(), changes=changes, root=Path("/proj")))
    (f,) = res.findings
    assert f.modules == ["pkg.ops"] and f.evidence[0].builds == [1, 2]


def test_cs5_one_block_dim_is_ruled_out_on_cuda() -> None:
    res = block_dims.evaluate(ctx_of(report([build(1, "m", device="cuda:0", block_dim=256)])))
    assert res.findings == [] and res.ruled_out


# ---------------------------------------------------------------------------------------------- CS-10


def _eb_scan(**extra) -> ScanFacts:  # type: ignore[no-untyped-def]
    return ScanFacts(
        modules=[
            ModuleInfo(file="app/__main__.py", name="app.__main__", main_alias="__main__", has_main_guard=True),
            ModuleInfo(file="app/__init__.py", name="app", is_package=True),
            ModuleInfo(file="app/kernels.py", name="app.kernels", kernel_count=2, module_scope_kernel_count=2),
        ],
        imports=[
            ImportFact(
                file="app/__main__.py",
                line=3,
                module="app.kernels",
                project_module="app.kernels",
                defines_kernels=True,
                reaches_kernels=True,
            ),
        ],
        kernels=[kdef("step", "app.kernels", line=5), kdef("reduce", "app.kernels", line=12)],
        **extra,
    )


def test_cs10_forward_only_fires_at_first_kernel_import() -> None:
    b = build(1, "app.kernels", kernels=("step", "reduce"), backward=True, options={"enable_backward": "True"})
    rep = report([b], launches=[Launch(kernel="step", module="app.kernels")])
    (f,) = unused_backward.evaluate(ctx_of(rep, _eb_scan())).findings
    assert f.mechanism == "CS-10" and f.estimated_saving_ms is None
    assert [(loc.file, loc.line) for loc in f.locations] == [("app/__main__.py", 3)]
    assert "wp.config.enable_backward = False" in f.fix


def test_cs10_script_with_its_own_kernels_points_at_the_first_definition() -> None:
    b = build(1, "__main__", kernels=("step",), backward=True)
    scan = ScanFacts(
        modules=[
            ModuleInfo(
                file="run.py",
                name="run",
                main_alias="__main__",
                has_main_guard=True,
                kernel_count=1,
                module_scope_kernel_count=1,
            )
        ],
        kernels=[
            KernelDef(file="run.py", line=8, name="step", qualname="step", python_module="run", warp_module="run")
        ],
    )
    rep = report([b], command=["python", "run.py"], cwd="/proj")
    (f,) = unused_backward.evaluate(ctx_of(rep, scan)).findings
    assert [(loc.file, loc.line) for loc in f.locations] == [("run.py", 8)]


def test_cs10_late_assignment_after_own_kernels_says_move_above_them() -> None:
    from warp_compile.probe.models.scan import ConfigSetFact

    b = build(1, "app.kernels", kernels=("step",), backward=True, shadow={"enable_backward": ["True", "False"]})
    late = ConfigSetFact(
        file="app/kernels.py",
        line=20,
        name="enable_backward",
        value="False",
        copied_at_module_creation=True,
        after_kernels_in_file=["step"],
    )
    scan = _eb_scan(config_sets=[late])
    (f,) = unused_backward.evaluate(ctx_of(report([b]), scan)).findings
    assert ("app/kernels.py", 20) in {(loc.file, loc.line) for loc in f.locations}
    assert "above the kernel definitions" in f.fix


def test_cs10_tape_over_the_kernels_rules_it_out() -> None:
    b = build(1, "app.kernels", kernels=("step", "reduce"), backward=True)
    tape = TapeFact(
        file="app/fit.py", line=8, var="tape", with_block=True, launched_kernels=["step"], backward_lines=[11]
    )
    res = unused_backward.evaluate(ctx_of(report([b]), _eb_scan(tapes=[tape])))
    assert res.findings == []
    assert "app/fit.py:8" in res.ruled_out[0].signal and "reduce" in res.ruled_out[0].signal


def test_cs10_measured_adjoint_launch_rules_it_out() -> None:
    b = build(1, "app.kernels", kernels=("step",), backward=True)
    rep = report([b], launches=[Launch(kernel="step", module="app.kernels", adjoint=True)])
    res = unused_backward.evaluate(ctx_of(rep, _eb_scan()))
    assert res.findings == [] and "adjoint" in res.ruled_out[0].signal


def test_cs10_no_backward_in_source_is_ruled_out() -> None:
    b = build(1, "app.kernels", backward=False, options={"enable_backward": "False"})
    res = unused_backward.evaluate(ctx_of(report([b]), _eb_scan()))
    assert res.findings == [] and res.ruled_out


def test_cs10_mixed_modules_use_get_module_not_the_global() -> None:
    used = build(1, "app.model", kernels=("fit",), backward=True)
    unused = build(2, "app.kernels", kernels=("step",), backward=True)
    rep = report([used, unused], launches=[Launch(kernel="fit", module="app.model", adjoint=True)])
    res = unused_backward.evaluate(ctx_of(rep, _eb_scan()))
    (f,) = res.findings
    assert f.modules == ["app.kernels"]
    assert 'wp.get_module("app.kernels").options["enable_backward"] = False' in f.fix
    assert res.ruled_out and "app.model" in res.ruled_out[0].signal


# ---------------------------------------------------------------------------------------------- CS-11


def test_cs11_raised_budget_reaching_a_loop_is_info_without_saving() -> None:
    b = build(1, "app.kernels", kernels=("filt",), options={"max_unroll": "64"}, source_bytes=60_000)
    scan = ScanFacts(
        kernels=[kdef("filt", "app.kernels")],
        settings=[SettingFact(file="app/__main__.py", line=4, name="max_unroll", value="64", via="config")],
        loops=[LoopFact(file="app/kernels.py", line=9, kernel="filt", bound=48)],
    )
    (f,) = unroll_budget.evaluate(ctx_of(report([b]), scan)).findings
    assert f.severity == "info" and f.estimated_saving_ms is None
    assert ("app/__main__.py", 4) in {(loc.file, loc.line) for loc in f.locations}


def test_cs11_default_budget_short_loops_do_not_fire() -> None:
    b = build(1, "app.kernels", kernels=("filt",), options={"max_unroll": "16"}, source_bytes=60_000)
    scan = ScanFacts(
        kernels=[kdef("filt", "app.kernels")], loops=[LoopFact(file="app/kernels.py", line=9, kernel="filt", bound=9)]
    )
    res = unroll_budget.evaluate(ctx_of(report([b]), scan))
    assert res.findings == [] and res.ruled_out


# ---------------------------------------------------------------------------------------------- CS-12


def test_cs12_pch_off_on_cpu_estimates_from_native_and_names_the_setting() -> None:
    off = {"use_precompiled_headers": "False"}
    builds = [build(i, f"m{i}", ms=1100, native_ms=1050, options=off) for i in (1, 2, 3)]
    scan = ScanFacts(
        settings=[
            SettingFact(file="app/__main__.py", line=5, name="use_precompiled_headers", value="False", via="config")
        ]
    )
    (f,) = precompiled_header.evaluate(ctx_of(report(builds), scan)).findings
    assert f.mechanism == "CS-12"
    assert [(loc.file, loc.line) for loc in f.locations] == [("app/__main__.py", 5)]
    # each module capped at the 1.19 header parse cost, minus the one header build (notes figure) that comes back
    assert f.estimated_saving_ms == pytest.approx(3 * 860.0 - 1590.0)
    assert "net" in f.saving_basis and "2,580 ms" in f.saving_basis


def test_cs12_pch_off_has_no_cpu_effect_before_warp_113() -> None:
    builds = [build(1, "m", options={"use_precompiled_headers": "False"})]
    res = precompiled_header.evaluate(ctx_of(report(builds, warp_version="1.10.1")))
    assert res.findings == [] and "1.13" in res.not_reached[0].reason


def test_cs12_setting_without_effect_on_old_warp_is_not_reached() -> None:
    setting = SettingFact(file="app/__main__.py", line=5, name="use_precompiled_headers", value="False", via="config")
    res = precompiled_header.evaluate(
        ctx_of(report([build(1, "m")], warp_version="1.10.1"), ScanFacts(settings=[setting]))
    )
    assert res.findings == [] and "app/__main__.py:5" in res.not_reached[0].reason


def test_cs12_default_on_cpu_is_ruled_out_and_lists_every_pch() -> None:
    builds = [build(1, "a", thread=1), build(2, "b", thread=2), build(3, "c", thread=1), build(4, "d", thread=2)]
    pch = [
        PchBuild(ms=1600, file="builtin_bd1_tis.pch", thread=1, during_seq=1),
        PchBuild(ms=1650, file="builtin_bd1_tis.pch", thread=2, during_seq=2),
    ]
    res = precompiled_header.evaluate(ctx_of(report(builds, pch=pch)))
    assert res.findings == []
    assert "2 thread(s)" in res.ruled_out[0].signal


def test_cs12_cuda_inverse_below_toolkit_13_is_low() -> None:
    builds = [
        build(1, "a", device="cuda:0", ms=200, native_ms=150),
        build(2, "b", device="cuda:0", ms=200, native_ms=150),
    ]
    pch = [PchBuild(ms=345, file="wp_a.pch", during_seq=1), PchBuild(ms=345, file="wp_b.pch", during_seq=2)]
    (f,) = precompiled_header.evaluate(ctx_of(report(builds, pch=pch, warp_version="1.17.0"))).findings
    assert f.severity == "low" and f.estimated_saving_ms is None
    res = precompiled_header.evaluate(ctx_of(report(builds, pch=pch, warp_version="1.19.0")))
    assert res.findings == []


# ---------------------------------------------------------------------------------------------- CS-7


def _tile_scan() -> ScanFacts:
    return ScanFacts(
        kernels=[kdef("project", "app.tiles", file="app/tiles.py", line=7)],
        tile_ops=[
            TileOpFact(file="app/tiles.py", line=12, op="tile_matmul", kernel="project", mathdx=True),
            TileOpFact(file="app/tiles.py", line=10, op="tile_load", kernel="project"),
        ],
    )


def test_cs7_cpu_only_not_reached_names_tile_sites() -> None:
    res = mathdx_lto.evaluate(ctx_of(report([build(1, "app.tiles", kernels=("project",))]), _tile_scan()))
    assert res.findings == []
    assert "tile_matmul in project at app/tiles.py:12" in res.not_reached[0].reason


def test_cs7_cuda_lto_fires_and_points_at_backward_first() -> None:
    b = build(
        1, "app.tiles", device="cuda:0", block_dim=64, kernels=("project",), ms=9000, native_ms=1200, backward=True
    )
    (f,) = mathdx_lto.evaluate(ctx_of(report([b], lto_artifacts=3), _tile_scan())).findings
    assert f.mechanism == "CS-7" and ("app/tiles.py", 12) in {(loc.file, loc.line) for loc in f.locations}
    assert "enable_mathdx_gemm" in f.fix and "CS-10" in f.fix


def test_cs7_no_tiles_ruled_out() -> None:
    res = mathdx_lto.evaluate(ctx_of(report([build(1, "m", device="cuda:0")]), ScanFacts()))
    assert res.findings == [] and res.ruled_out


# ---------------------------------------------------------------------------------------------- robustness


@pytest.mark.parametrize(
    "rule",
    [block_dims, mathdx_lto, cpu_parallel_load, unused_backward, unroll_budget, precompiled_header, serial_modules],
)
def test_every_rule_says_something_without_scan_or_builds(rule) -> None:  # type: ignore[no-untyped-def]
    reports = [
        report([]),
        report(
            [
                build(1, "a", backward=True, options={"use_precompiled_headers": "False", "max_unroll": "64"}),
                build(2, "b", device="cuda:0", block_dim=256),
                build(3, "b", device="cuda:0", block_dim=64),
            ],
            overlap_factor=1.0,
            lto_artifacts=2,
        ),
    ]
    for rep in reports:
        res = rule.evaluate(RuleContext(rep, None, changes=[], root=None))
        assert isinstance(res, RuleResult)
        assert res.findings or res.ruled_out or res.not_reached
        for f in res.findings:
            assert f.mechanism == rule.MECHANISM and f.fix and f.evidence


# ---------------------------------------------------------------------------------------------- real fixtures

RULES = {
    "CS-5": block_dims,
    "CS-7": mathdx_lto,
    "CS-8": cpu_parallel_load,
    "CS-10": unused_backward,
    "CS-11": unroll_budget,
    "CS-12": precompiled_header,
    "CS-13": serial_modules,
}


def _fixture_ctx(measured, name: str) -> RuleContext:  # type: ignore[no-untyped-def]
    if not (FIXTURES / name / "project").is_dir() or not (FIXTURES / name / "case.json").is_file():
        pytest.skip(f"fixture {name} not present")
    from warp_compile.probe.hashdiff import explain_changes
    from warp_compile.probe.scan import scan

    rep = measured(name)
    assert rep.failed_samples == 0, rep.sample_results
    root = (FIXTURES / name / "project").resolve()
    return RuleContext(rep, scan(root), changes=explain_changes(rep), root=root)


def _expected(name: str, version: str | None) -> dict:
    exp = dict(fixture_case(name)["expected"])
    for prefix, override in fixture_case(name).get("version_overrides", {}).items():
        if version and (version == prefix or version.startswith(prefix + ".")):
            exp.update({k: v for k, v in override.items() if k in ("mechanisms", "locations")})
    return exp


POSITIVE = [
    ("CS-8", "terrain_tiles"),
    ("CS-10", "heat_field"),
    ("CS-10", "heat_field_v2"),
    ("CS-11", "fir_bank"),
    ("CS-12", "mesh_loader"),
]


@pytest.mark.slow
@pytest.mark.parametrize(("mech", "name"), POSITIVE)
def test_fixture_fires_at_expected_location(measured, mech: str, name: str) -> None:  # type: ignore[no-untyped-def]
    ctx = _fixture_ctx(measured, name)
    exp = _expected(name, ctx.report.warp_version)
    res = RULES[mech].evaluate(ctx)
    if mech not in exp["mechanisms"]:  # a version override says this Warp cannot show it
        assert mech not in mechanisms(res)
        return
    (f,) = [f for f in res.findings if f.mechanism == mech]
    assert f.severity in ("high", "medium", "low", "info") and f.fix and f.evidence
    assert f.samples == ctx.samples
    want = {(loc["file"], loc["line"]) for loc in exp["locations"] if loc["mechanism"] == mech}
    got = {(loc.file, loc.line) for loc in f.locations}
    assert want & got, (want, got)


NEGATIVE = [
    ("CS-5", "voxel_bins"),
    ("CS-5", "wave_step"),
    ("CS-7", "tile_projection"),
    ("CS-7", "heat_field"),
    ("CS-8", "mesh_loader"),
    ("CS-8", "wave_step"),
    ("CS-10", "grad_pipeline"),
    ("CS-10", "wave_step"),
    ("CS-10", "ledger_stats"),
    ("CS-11", "heat_field"),
    ("CS-11", "wave_step"),
    ("CS-12", "sensor_fusion"),  # many modules: the header pays (one small module is priced by measurement)
    ("CS-12", "lidar_mapping"),
    ("CS-12", "ledger_stats"),
    ("CS-13", "mesh_loader"),
    ("CS-13", "wave_step"),
]


@pytest.mark.slow
@pytest.mark.parametrize(("mech", "name"), NEGATIVE)
def test_fixture_does_not_fire(measured, mech: str, name: str) -> None:  # type: ignore[no-untyped-def]
    ctx = _fixture_ctx(measured, name)
    res = RULES[mech].evaluate(ctx)
    assert mech not in mechanisms(res)
    assert res.ruled_out or res.not_reached  # says what it checked


@pytest.mark.slow
def test_fixture_tape_exclusion_names_the_tape(measured) -> None:  # type: ignore[no-untyped-def]
    ctx = _fixture_ctx(measured, "grad_pipeline")
    res = unused_backward.evaluate(ctx)
    assert res.findings == []
    assert any("wp.Tape" in r.signal for r in res.ruled_out)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("mech", "name"), [("CS-5", "voxel_bins"), ("CS-7", "tile_projection"), ("CS-13", "mesh_loader")]
)
def test_fixture_not_reached_on_cpu(measured, mech: str, name: str) -> None:  # type: ignore[no-untyped-def]
    ctx = _fixture_ctx(measured, name)
    assert ctx.cpu_only
    res = RULES[mech].evaluate(ctx)
    (nr,) = res.not_reached
    assert nr.mechanism == mech and "CUDA" in nr.reason
    # the static sites case.json says a scan can point at are named in the reason
    for loc in fixture_case(name)["expected"].get("scan_locations", []):
        if loc["mechanism"] == mech:
            assert f"{loc['file']}:{loc['line']}" in nr.reason, (loc, nr.reason)
    if mech == "CS-5":
        assert any(f"{la.file}:{la.line}" in nr.reason for la in ctx.scan.launches if la.block_dim is not None)  # type: ignore[union-attr]
    if mech == "CS-7":
        assert any(t.mathdx and f"{t.file}:{t.line}" in nr.reason for t in ctx.scan.tile_ops)  # type: ignore[union-attr]
    if mech == "CS-13":
        assert "ceiling" in nr.reason


USED = sorted({name for _m, name in POSITIVE + NEGATIVE})


@pytest.mark.slow
@pytest.mark.parametrize("name", USED)
def test_fixture_absent_mechanisms_stay_silent(measured, name: str) -> None:  # type: ignore[no-untyped-def]
    """Every fixture measured above: none of these rules fires where case.json lists its mechanism as absent."""
    ctx = _fixture_ctx(measured, name)
    absent = set(fixture_case(name)["expected"].get("absent", []))
    for mech, rule in RULES.items():
        if mech in absent:
            assert mech not in mechanisms(rule.evaluate(ctx)), (name, mech)
