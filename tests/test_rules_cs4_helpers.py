"""CS-4 when each small module launches its own kernels from a helper in its file (`downsample()` in voxel.py
launching both voxel kernels), and one pipeline step calls those helpers: the modules share no launching function
or file, only the caller. A two-kernel module counts there when every launch of its kernels comes from its helper;
when one of its kernels is launched elsewhere it has no single lifecycle and stays out.
"""

from __future__ import annotations

from tests.test_diagnose_rules_core import ROOT, B, K, R, ctx_of
from warp_compile.probe.models import Build, Launch, Site, Trigger
from warp_compile.probe.rules import module_granularity

STEP = Site(file=f"{ROOT}/app/mapping.py", line=40, function="process_scan")


def _helper_build(seq: int, name: str, kernels: list[str], line: int) -> Build:
    b = B(seq, f"app.{name}", [K(k, file=f"app/{name}.py", line=8 + 20 * i) for i, k in enumerate(kernels)],
          h="abcdef"[seq], ms=100.0 + seq, trig=(f"app/{name}.py", line, "run"))
    assert b.trigger is not None
    b.trigger = Trigger(**{**b.trigger.model_dump(), "stack": [Site(file=b.trigger.file, line=line, function="run"),
                                                               STEP]})
    return b


def _launch(module: str, kernel: str, file: str, line: int, function: str) -> Launch:
    return Launch(kernel=kernel, module=module, device="cpu", site=Site(file=f"{ROOT}/{file}", line=line,
                                                                       function=function))


def _pipeline(second_voxel_site: tuple[str, int, str]) -> list:
    builds = [
        _helper_build(1, "sensor", ["to_points"], 60),
        _helper_build(2, "voxel", ["accumulate", "centroids"], 70),
        _helper_build(3, "surface", ["normals"], 50),
    ]
    launches = [
        _launch("app.sensor", "to_points", "app/sensor.py", 60, "run"),
        _launch("app.voxel", "accumulate", "app/voxel.py", 70, "run"),
        _launch("app.voxel", "centroids", *second_voxel_site),
        _launch("app.surface", "normals", "app/surface.py", 50, "run"),
    ]
    return [builds, launches]


def test_cs4_groups_modules_whose_helpers_one_step_calls() -> None:
    builds, launches = _pipeline(("app/voxel.py", 71, "run"))
    (f,) = module_granularity.evaluate(ctx_of(R(builds, launches=launches))).findings
    assert f.modules == ["app.sensor", "app.voxel", "app.surface"]
    assert "mapping.py:process_scan() (the caller)" in f.fix
    assert {loc.file for loc in f.locations} == {"app/sensor.py", "app/voxel.py", "app/surface.py"}


def test_cs4_two_kernel_module_launched_from_two_places_stays_out() -> None:
    builds, launches = _pipeline(("app/report.py", 12, "summary"))
    result = module_granularity.evaluate(ctx_of(R(builds, launches=launches)))
    assert result.findings == []  # only two one-unit modules remain under the shared caller
    # without launch records a two-kernel module cannot show it is used as one unit either
    assert module_granularity.evaluate(ctx_of(R(builds))).findings == []


def _direct_build(seq: int, name: str, line: int) -> Build:
    """A one-kernel module whose kernel the pipeline step launches itself (the step is its launching function)."""
    b = B(seq, f"app.{name}", [K(f"{name}_k", file=f"app/{name}.py", line=8)], h="abcdef"[seq], ms=100.0 + seq,
          trig=("app/mapping.py", line, "process_scan"))
    assert b.trigger is not None
    main = Site(file=f"{ROOT}/app/__main__.py", line=9, function="main")
    b.trigger = Trigger(**{**b.trigger.model_dump(), "stack": [Site(file=b.trigger.file, line=line,
                                                                    function="process_scan"), main]})
    return b


def _mixed(helper_caller: Site) -> list[Build]:
    helper = _helper_build(3, "merge", ["concat"], 22)
    assert helper.trigger is not None
    helper.trigger = Trigger(**{**helper.trigger.model_dump(), "stack": [helper.trigger.stack[0], helper_caller]})
    return [_direct_build(1, "shift", 41), _direct_build(2, "search", 47), helper]


def test_cs4_groups_a_step_that_launches_two_modules_itself_and_a_third_through_a_helper() -> None:
    (f,) = module_granularity.evaluate(ctx_of(R(_mixed(STEP)))).findings
    assert f.modules == ["app.shift", "app.search", "app.merge"]
    assert "mapping.py:process_scan() (the caller)" in f.fix


def test_cs4_a_helper_called_from_another_step_does_not_join() -> None:
    other = Site(file=f"{ROOT}/app/report.py", line=12, function="summary")
    result = module_granularity.evaluate(ctx_of(R(_mixed(other))))
    assert result.findings == []  # the step launches two modules; the third is another step's
    assert "share no launching function or file" in result.ruled_out[0].signal
