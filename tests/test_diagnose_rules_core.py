"""The core rules (CS-1, CS-2, CS-3, CS-4, CS-6, CS-9) and the diagnose wiring.

Synthetic reports pin each firing condition and its guard; the slow tests run every bundled fixture once and check
that each rule fires where the case expects it (with a location on the expected file:line) and stays silent where
the case lists it as absent.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import FIXTURES, fixture_case
from tests.helpers import synth_build
from warp_compile.probe import diagnose as diagnose_mod
from warp_compile.probe.diagnose import diagnose
from warp_compile.probe.hashdiff import explain_changes
from warp_compile.probe.models import Build, KernelInfo, Launch, Report, RunResult, SampleResult, Trigger, WarningCode
from warp_compile.probe.models.diagnosis import Diagnosis, RuleResult
from warp_compile.probe.models.scan import (
    CacheOp,
    ConfigSetFact,
    ImportRef,
    KernelDef,
    ModuleInfo,
    ModuleOptionsFact,
    ScanFacts,
)
from warp_compile.probe.render.diagnosis import render_text
from warp_compile.probe.rules import (
    RULES,
    cache_reuse,
    late_kernels,
    late_options,
    late_overloads,
    load_rules,
    module_granularity,
    unique_modules,
)
from warp_compile.probe.rules.context import RuleContext, late_config_assignments

ROOT = "/proj"
OPTS = {"fast_math": "False", "block_dim": "1"}
CORE = ["CS-1", "CS-2", "CS-3", "CS-4", "CS-6", "CS-9"]


def K(key: str, file: str = "app/kernels.py", line: int = 10, h: str = "k", **kw) -> KernelInfo:  # type: ignore[no-untyped-def]
    return KernelInfo(key=key, hash=h, file=f"{ROOT}/{file}", line=line, **kw)


def B(
    seq: int,
    module: str,
    kernels: list[KernelInfo],
    h: str = "a",
    ms: float = 100.0,
    status: str = "compiled",
    trig: tuple[str, int, str] = ("app/run.py", 20, "step"),
    **kw,  # type: ignore[no-untyped-def]
) -> Build:
    opts = kw.pop("options", dict(OPTS))
    return synth_build(
        seq,
        module,
        h,
        device="cpu",
        block_dim=1,
        status=status,  # type: ignore[arg-type]
        ms=ms,
        kernels=kernels,
        options=opts,
        trigger=Trigger(file=f"{ROOT}/{trig[0]}", line=trig[1], function=trig[2], api="launch"),
        **kw,
    )


def R(builds: list[Build], warm_compiled: int = 0, warm_ms: float = 1.0, **kw) -> Report:  # type: ignore[no-untyped-def]
    cold = RunResult(phase="cold", wall_ms=1000, exit_code=0, compiled=len(builds), module_ms=sum(b.ms for b in builds))
    warm = RunResult(phase="warm", wall_ms=500, exit_code=0, compiled=warm_compiled, module_ms=warm_ms, pch_ms=0.0)
    r = Report(
        command=["python", "-m", "app"],
        cwd=ROOT,
        samples=1,
        builds=builds,
        sample_results=[SampleResult(index=0, ok=True, cold=cold, warm=warm)],
        **kw,
    )
    r.cold_module_ms.median = sum(b.ms for b in builds)
    r.modules = len({b.module for b in builds})
    r.hook.mode = "wrap"
    return r


def ctx_of(report: Report, scan: ScanFacts | None = None) -> RuleContext:
    ctx = RuleContext(report=report, scan=scan, root=Path(ROOT))
    ctx.changes = explain_changes(report, rel=ctx.rel)
    return ctx


def mechs(d: Diagnosis | RuleResult) -> set[str]:
    return {f.mechanism for f in d.findings}


# ---------------------------------------------------------------------------------------------- CS-1


def test_cs1_fires_on_added_kernels_at_the_scanned_def_line() -> None:
    late = K("mk__locals__b", line=29)
    r = R([B(1, "app.kernels", [K("a", line=9)]), B(2, "app.kernels", [K("a", line=9), late], h="b")])
    scan = ScanFacts(
        kernels=[
            KernelDef(file="app/kernels.py", line=30, name="b", qualname="mk.<locals>.b", python_module="app.kernels",
                      nested=True, enclosing_function="mk", scope="function", function="mk")
        ]
    )
    res = late_kernels.evaluate(ctx_of(r, scan))
    (f,) = res.findings
    assert f.mechanism == "CS-1" and f.estimated_saving_ms == 100.0
    assert [(loc.file, loc.line) for loc in f.locations] == [("app/kernels.py", 30)]
    assert "module scope of app/kernels.py" in f.fix and "mk()" in f.fix


def test_cs1_uses_the_recorded_line_without_a_scan_and_skips_unique_families() -> None:
    r = R([B(1, "app.kernels", [K("a")]), B(2, "app.kernels", [K("a"), K("b", line=44)], h="b")])
    (f,) = late_kernels.evaluate(ctx_of(r)).findings
    assert (f.locations[0].file, f.locations[0].line) == ("app/kernels.py", 44)
    uniq = R([B(1, "s_1b264cd9", [K("s", h="1")]), B(2, "s_f0f15735", [K("s", h="2")], h="b")])
    assert late_kernels.evaluate(ctx_of(uniq)).findings == []


# ---------------------------------------------------------------------------------------------- CS-2


def test_cs2_needs_the_measurement_not_just_the_scan() -> None:
    op = CacheOp(file="tools/maint.py", line=7, kind="clear_kernel_cache", api="wp.clear_kernel_cache")
    scan = ScanFacts(cache_ops=[op])
    healthy = R([B(1, "app.kernels", [K("a")])], warm_compiled=0)
    res = cache_reuse.evaluate(ctx_of(healthy, scan))
    assert res.findings == [] and "tools/maint.py:7" in res.ruled_out[0].signal
    broken = R([B(1, "app.kernels", [K("a")])], warm_compiled=1, warm_ms=180.0)
    (f,) = cache_reuse.evaluate(ctx_of(broken, scan)).findings
    assert f.estimated_saving_ms == 180.0 and f.samples == 1 and f.confidence == "high"
    # the hook recorded no clear call: the scanned one did not run, so it is neither the cause nor something to remove
    assert f.locations == [] and f.edits == [] and "tools/maint.py:7: it did not run in this command" in f.fix


def test_cs2_temporary_cache_dir_is_harmful_but_a_stable_one_is_not() -> None:
    tmp = CacheOp(file="app/rt.py", line=3, kind="kernel_cache_dir", value="d", temporary=True)
    stable = CacheOp(file="app/rt.py", line=4, kind="kernel_cache_dir", value="'/srv/cache'")
    r = R([B(1, "app.kernels", [K("a")])], warm_compiled=1, warm_ms=50.0)
    (f,) = cache_reuse.evaluate(ctx_of(r, ScanFacts(cache_ops=[tmp, stable]))).findings
    assert [loc.line for loc in f.locations] == [3]


def test_cs2_same_hash_recompiled_after_a_clear_in_one_process() -> None:
    from warp_compile.probe.models import ApiCall, Site

    r = R([B(1, "app.kernels", [K("a")]), B(3, "app.kernels", [K("a")], ms=140.0)])
    r.cache.calls = [ApiCall(api="clear_kernel_cache", seq=2, site=Site(file=f"{ROOT}/app/run.py", line=9))]
    (f,) = cache_reuse.evaluate(ctx_of(r)).findings
    assert f.estimated_saving_ms == 140.0 and (f.locations[0].file, f.locations[0].line) == ("app/run.py", 9)
    assert "Remove wp.clear_kernel_cache() at app/run.py:9" in f.fix


# ---------------------------------------------------------------------------------------------- CS-3


def test_cs3_option_change_points_at_the_setter_and_merges_into_the_module_scope_call() -> None:
    r = R([B(1, "app.kernels", [K("a")]), B(2, "app.kernels", [K("a")], h="b", options={**OPTS, "fast_math": "True"})])
    scan = ScanFacts(
        module_options=[
            ModuleOptionsFact(file="app/kernels.py", line=5, options={"enable_backward": "False"}, target="app.kernels",
                              target_has_kernels=True),
            ModuleOptionsFact(file="app/kernels.py", line=40, options={"fast_math": "True"}, target="app.kernels",
                              target_has_kernels=True, scope="function", function="configure"),
        ]
    )
    (f,) = late_options.evaluate(ctx_of(r, scan)).findings
    assert [(loc.file, loc.line) for loc in f.locations] == [("app/kernels.py", 40)]
    assert 'wp.set_module_options({"enable_backward": False, "fast_math": True})' in f.fix
    assert f.estimated_saving_ms == 100.0


def _deadline_scan(option: str) -> ScanFacts:
    ref = ImportRef(module="app.kernels", line=2, kernel_modules=["app.kernels"], created_at_import=True)
    return ScanFacts(
        python_modules_with_kernels={"app.kernels": "app/kernels.py"},
        config_sets=[
            ConfigSetFact(file="app/__main__.py", line=4, name=option, value="4" if option == "max_unroll" else "False",
                          copied_at_module_creation=True, after_kernel_imports=[ref])
        ],
    )


def test_cs3_import_deadline_needs_the_config_shadow() -> None:
    confirmed = R([B(1, "app.kernels", [K("a")], config_shadow={"max_unroll": ["16", "4"]})])
    silent = R([B(1, "app.kernels", [K("a")])])
    (f,) = late_options.evaluate(ctx_of(confirmed, _deadline_scan("max_unroll"))).findings
    assert (f.locations[0].file, f.locations[0].line) == ("app/__main__.py", 4)
    assert f.estimated_saving_ms is None and "import app.kernels" in f.fix
    assert late_options.evaluate(ctx_of(silent, _deadline_scan("max_unroll"))).findings == []
    # enable_backward's deadline is CS-10's: the shared helper sees it, CS-3 does not report it
    eb = R([B(1, "app.kernels", [K("a")], config_shadow={"enable_backward": ["True", "False"]})])
    lates = late_config_assignments(ctx_of(eb, _deadline_scan("enable_backward")))
    assert [x.confirmed for x in lates] == [True] and lates[0].modules == ["app.kernels"]
    assert late_options.evaluate(ctx_of(eb, _deadline_scan("enable_backward"))).findings == []


def test_cs3_set_module_options_in_a_module_without_kernels() -> None:
    r = R([B(1, "app.kernels", [K("a")])])
    fact = ModuleOptionsFact(file="app/__main__.py", line=3, options={"fast_math": "True"}, target="app.__main__")
    scan = ScanFacts(modules=[ModuleInfo(file="app/__main__.py", name="app.__main__", main_alias="__main__")],
                     module_options=[fact])
    (f,) = late_options.evaluate(ctx_of(r, scan)).findings
    assert "holds no kernels" in f.title and f.locations[0].line == 3
    fact.target_has_kernels = True
    assert late_options.evaluate(ctx_of(r, scan)).findings == []


# ---------------------------------------------------------------------------------------------- CS-4


def _small_modules(n: int, fn: str = "step", files: bool = False) -> list[Build]:
    return [
        B(i + 1, f"app.m{i}", [K(f"k{i}", file=f"app/m{i}.py", line=7)], h="abcdef"[i], ms=100.0 + i,
          trig=(f"app/run{i if files else ''}.py", 20 + i, f"{fn}{i}" if fn == "varies" else fn))
        for i in range(n)
    ]


def test_cs4_fires_for_three_or_more_one_lifecycle_modules() -> None:
    (f,) = module_granularity.evaluate(ctx_of(R(_small_modules(4)))).findings
    assert f.estimated_saving_ms == pytest.approx(3 * 100.0)  # (n - 1) x the fixed cost: no sizes, the smallest load
    assert {loc.file for loc in f.locations} == {"app/m0.py", "app/m1.py", "app/m2.py", "app/m3.py"}
    assert 'module="app.kernels"' in f.fix


def test_cs4_stays_silent_when_the_lifecycle_or_options_differ() -> None:
    assert module_granularity.evaluate(ctx_of(R(_small_modules(2)))).findings == []
    assert module_granularity.evaluate(ctx_of(R(_small_modules(4, files=True, fn="varies")))).findings == []
    mixed = _small_modules(3)
    mixed[0].options = {**OPTS, "fast_math": "True"}
    assert module_granularity.evaluate(ctx_of(R(mixed))).findings == []
    big = _small_modules(3)
    big[0].kernels = [K("x"), K("y"), K("z")]
    assert module_granularity.evaluate(ctx_of(R(big))).findings == []


# ---------------------------------------------------------------------------------------------- CS-6


def test_cs6_writes_the_overloads_from_the_launched_types() -> None:
    g32 = K("scale", h="1", line=11, signature="a1f4_f4", generic_parent="scale")
    g64 = K("scale", h="2", line=11, signature="a1f8_f8", generic_parent="scale")
    launches = [
        Launch(kernel="scale", module="app.kernels", dtypes=["array[float32;1d]", "float32"]),
        Launch(kernel="scale", module="app.kernels", dtypes=["array[float64;1d]", "float64"]),
    ]
    r = R([B(1, "app.kernels", [g32]), B(2, "app.kernels", [g32, g64], h="b")], launches=launches)
    (f,) = late_overloads.evaluate(ctx_of(r)).findings
    assert "scale_float64 = wp.overload(scale, [wp.array(dtype=wp.float64), wp.float64])" in f.fix
    assert "scale_float32 = wp.overload(scale, [wp.array(dtype=wp.float32), wp.float32])" in f.fix
    assert (f.locations[0].file, f.locations[0].line) == ("app/kernels.py", 11)


# ---------------------------------------------------------------------------------------------- CS-9


def test_cs9_fires_on_stable_unique_modules_and_spares_varying_ones() -> None:
    stable = [B(i + 1, f"f{i}_{'0123abcd'[i] * 8}", [K(f"f{i}", h=str(i))], h="abc"[i]) for i in range(3)]
    (f,) = unique_modules.evaluate(ctx_of(R(stable))).findings
    assert f.estimated_saving_ms == 200.0 and f.confidence == "medium"
    varying = [
        B(1, "s_11111111", [K("s", h="1")]),
        B(2, "s_22222222", [K("s", h="2")], h="b"),
        B(3, "t_33333333", [K("t", h="3")], h="c"),
    ]
    res = unique_modules.evaluate(ctx_of(R(varying)))
    assert res.findings == [] and "vary at run time" in res.ruled_out[0].signal


# ---------------------------------------------------------------------------------------------- diagnose


def test_diagnose_no_compilation() -> None:
    r = Report(command=["python", "x.py"], cwd=ROOT, samples=1,
               sample_results=[SampleResult(index=0, ok=True, cold=RunResult(phase="cold", wall_ms=5, exit_code=0))])
    d = diagnose(r, None)
    assert d.compiled_nothing and d.findings == [] and d.summary.startswith("no Warp compilation observed")
    assert "no Warp compilation observed" in render_text(d)


def test_diagnose_all_samples_failed() -> None:
    r = Report(command=["python", "x.py"], cwd=ROOT, samples=1, failed_samples=1,
               sample_results=[SampleResult(index=0, ok=False, failure="cold run exited with 1",
                                            cold=RunResult(phase="cold", wall_ms=5, exit_code=1))])
    d = diagnose(r, None)
    assert not d.compiled_nothing and d.findings == [] and "Every sample failed" in d.summary


def test_diagnose_ranks_by_saving_and_accounts_for_every_mechanism() -> None:
    builds = _small_modules(3) + [
        # the first build of app.big is what a CS-1 fix removes (850 ms): more than CS-4's merge saves
        B(10, "app.big", [K("a")], h="1", ms=850.0, trig=("app/x.py", 1, "go")),
        B(11, "app.big", [K("a"), K("b", line=40)], h="2", ms=900.0, trig=("app/x.py", 2, "go")),
    ]
    d = diagnose(R(builds), ScanFacts(root=ROOT))
    assert [f.mechanism for f in d.findings] == ["CS-1", "CS-4"]
    savings = [f.estimated_saving_ms for f in d.findings]
    assert savings == sorted(savings, reverse=True) and savings[0] == 850.0
    assert all(f.excerpt for f in d.findings)
    covered = mechs(d) | {r.mechanism for r in d.ruled_out} | {n.mechanism for n in d.not_reached}
    assert covered == {f"CS-{i}" for i in range(1, 14)} | {"WC-1"}
    assert d.summary.startswith("2 findings: CS-1")
    text = render_text(d)
    assert text.index("1. CS-1") < text.index("2. CS-4") < text.index("Why modules loaded again")


def test_diagnose_survives_missing_and_broken_rules(monkeypatch: pytest.MonkeyPatch) -> None:
    import types

    broken = types.ModuleType("warp_compile.probe.rules.broken_rule")
    broken.MECHANISM = "CS-1"  # type: ignore[attr-defined]

    def evaluate(ctx):  # type: ignore[no-untyped-def]
        raise RuntimeError("boom")

    broken.evaluate = evaluate  # type: ignore[attr-defined]
    monkeypatch.setitem(__import__("sys").modules, "warp_compile.probe.rules.broken_rule", broken)
    monkeypatch.setattr("warp_compile.probe.rules.RULES", ["does_not_exist_yet", "broken_rule", "late_options"])
    mods, skipped = load_rules()
    assert skipped == {"does_not_exist_yet": "not installed"}
    d = diagnose(R([B(1, "app.kernels", [K("a")])]), None)
    failed = [w for w in d.warnings if w.code == WarningCode.RULE_FAILED]
    assert [w.params for w in failed] == [{"rule": "broken_rule", "mechanism": "CS-1", "error": "RuntimeError: boom"}]
    assert "broken_rule (CS-1) failed: RuntimeError: boom" in render_text(d)
    assert {n.mechanism for n in d.not_reached} >= {"CS-1", "CS-2"}  # failed rule, and rules not installed


def test_diagnose_nothing_fires_summary_names_the_remaining_cost() -> None:
    r = R([B(1, "app.kernels", [K("a")], ms=240.0)])
    r.pch_ms.median = 1600.0
    d = diagnose(r, ScanFacts(root=ROOT))
    assert d.findings == []
    assert "No compile-time mechanism fired" in d.summary and "app.kernels 240 ms" in d.summary
    assert "precompiled header 1,600 ms" in d.summary and "CS-1" in d.summary


def test_registry_lists_every_rule_module_once() -> None:
    assert len(RULES) == len(set(RULES)) == 14  # CS-1 ... CS-13 and WC-1
    assert diagnose_mod.MECHANISMS[0] == "CS-1"


# ---------------------------------------------------------------------------------------------- real fixtures


def _fixtures() -> list[str]:
    return sorted(p.parent.name for p in FIXTURES.glob("*/case.json"))


@pytest.mark.slow
@pytest.mark.parametrize("name", _fixtures())
def test_core_rules_on_fixture(name: str, measured) -> None:  # type: ignore[no-untyped-def]
    from warp_compile.probe.scan import scan

    case = fixture_case(name)
    report = measured(name)
    root = FIXTURES / name / "project"
    d = diagnose(report, scan(root), root=root)
    fired = mechs(d)
    expected = [m for m in case["expected"]["mechanisms"] if m in CORE]
    for m in expected:
        assert m in fired, f"{name}: {m} did not fire; {d.summary}"
        want = {(loc["file"], loc["line"]) for loc in case["expected"]["locations"] if loc["mechanism"] == m}
        got = {(loc.file, loc.line) for f in d.findings if f.mechanism == m for loc in f.locations}
        assert want & got, f"{name}: {m} locations {sorted(got)} miss {sorted(want)}"
        f = next(f for f in d.findings if f.mechanism == m)
        assert f.fix and f.evidence and f.excerpt and f.severity and f.confidence
    for m in case["expected"].get("absent", []):
        if m in CORE:
            assert m not in fired, f"{name}: {m} fired but the case lists it as absent: {d.summary}"
    if not case["expected"]["mechanisms"]:
        assert not (fired & set(CORE)), d.summary


# ---------------------------------------------------------------------------------------------- not a cold run


def test_an_app_cache_outside_the_sandbox_that_was_already_full_is_said_first() -> None:
    from warp_compile.probe.models import CacheFacts

    cache = CacheFacts(kernel_cache_dir="/proj/.kernels/1.19.0", left_sandbox=True)
    d = diagnose(R([B(1, "app.kernels", [K("a")], status="cached", ms=2.0)], cache=cache), ScanFacts())
    assert d.summary.startswith("NOT A COLD MEASUREMENT: the app sets kernel_cache_dir to /proj/.kernels/1.19.0")
    compiled = diagnose(R([B(1, "app.kernels", [K("a")])], cache=cache), ScanFacts())
    assert compiled.summary.startswith("Caution: the app sets kernel_cache_dir")
    inside = diagnose(R([B(1, "app.kernels", [K("a")], status="cached", ms=2.0)]), ScanFacts())
    assert not inside.summary.startswith(("NOT A COLD", "Caution"))


def test_the_engine_plans_removals_once_so_two_mechanisms_never_charge_one_build() -> None:
    """Two rebuilds diffed from the same earlier load and sized by different mechanisms: alone, each would charge
    that load; planned together, the second falls back to the other superseded build, and the two fixes remove
    exactly the builds that go (all but the one that remains)."""
    from tests.helpers import synth_build
    from warp_compile.probe.models import Report
    from warp_compile.probe.models.diagnosis import HashChange
    from warp_compile.probe.rules.context import RuleContext, plan_removals, superseded_by

    builds = [synth_build(i, "app.k", h, ms=100.0 * i) for i, h in ((1, "a"), (2, "b"), (3, "c"))]
    report = Report(command=["python", "app.py"], cwd="/p", samples=1, builds=builds)

    def change(src: int, dst: int) -> HashChange:
        return HashChange(
            module="app.k",
            device="cpu",
            from_hash="x",
            to_hash="y",
            from_seq=src,
            to_seq=dst,
            status="compiled",
            cost_ms=100.0 * dst,
        )

    by_kernel, by_option = change(1, 2), change(1, 3)
    alone = RuleContext(report=report, scan=None, changes=[by_kernel, by_option])
    assert [b.seq for b in superseded_by(alone, [by_kernel]).builds] == [1]
    assert [b.seq for b in superseded_by(alone, [by_option]).builds] == [1]  # the double charge, unplanned
    planned = RuleContext(report=report, scan=None, changes=[by_kernel, by_option])
    planned.owners = {2: "CS-1", 3: "CS-3"}
    planned.removals = plan_removals(planned, [by_kernel, by_option])
    first, second = superseded_by(planned, [by_kernel]), superseded_by(planned, [by_option])
    assert [b.seq for b in first.builds] == [1] and [b.seq for b in second.builds] == [2]
    assert first.ms + second.ms == 300.0 and [b.seq for b in second.remaining] == [3]
